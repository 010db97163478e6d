"""How many requests an endpoint gets at once: one :class:`Limiter` per endpoint, shared by
every thread of a run (an eval's workers, CoT-SC's samplers), fixed or learnt as the run goes.

A request holds a :class:`Permit` while it is on the wire (never while it waits to retry) and
tells it how it went: a delay sample (``done``), an overload (``dropped``: 429/503, a timeout,
a stream the server cut because another request arrived) or nothing worth learning from
(``release``). Permits are handed out first come, first served, up to the level.

The adaptive rule is :class:`~react_cli.infra.vegas.Vegas` (``infra/vegas.py``); a
``Retry-After`` pauses the whole endpoint, whatever the rule.

Nothing here sleeps: the gate's times (pauses, when a permit went) are the clock passed in.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from react_cli.infra.deadline import Deadline
from react_cli.infra.vegas import PROBE, Sample, Vegas

MAX_PAUSE_S = 60.0
"""The longest pause a ``Retry-After`` imposes on a whole endpoint."""
MAX_LEVEL = 64
"""An adaptive limiter's default cap (``--max-concurrency``)."""
WIKI_MAX_LEVEL = 8
"""An adaptive limiter's cap for a Wikipedia host: Wikimedia asks for few requests at once."""


class Waited(Exception):
    """No permit came before the deadline."""


@dataclass(frozen=True)
class LevelStats:
    """What a limiter did over a run, as an eval's summary records it."""

    adaptive: bool
    level: int  # at the end
    lowest: int
    highest: int
    mean: float  # over the run's time

    def to_json(self) -> dict[str, Any]:
        return {
            "mode": "auto" if self.adaptive else "fixed",
            "level": self.level,
            "lowest": self.lowest,
            "highest": self.highest,
            "mean": round(self.mean, 2),
        }


class Limiter:
    """Permits for one endpoint, at most ``level`` at once; ``rule`` None: a fixed level."""

    def __init__(
        self,
        level: int,
        rule: Vegas | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.rule = rule
        self._fixed = max(1, level)
        if rule is not None:
            rule.level = max(1, min(rule.max_level, level))
        self._clock = clock
        self._cond = threading.Condition()
        self._queue: deque[object] = deque()
        self._inflight = 0
        self._started = 0  # permits ever handed out: tells which requests overlapped
        self._epoch = 0  # halvings so far: an overload is reacted to once
        self._paused_until = -float("inf")
        self._watchers: list[Callable[[], None]] = []
        self._start = self._since = clock()
        self._weighted = 0.0  # level × seconds, up to ``_since``
        self._lowest = self._highest = self.level

    @classmethod
    def auto(
        cls,
        max_level: int,
        start: int = 1,
        *,
        probe: bool = False,
        clock: Callable[[], float] = time.monotonic,
    ) -> Limiter:
        """An adaptive limiter from ``start``, never above ``max_level``; with ``probe``, its
        first round of ``start`` requests measures where it goes on from."""
        rule = Vegas(max_level=max(1, max_level), probing=probe)
        return cls(start, rule, clock=clock)

    @classmethod
    def of(cls, level: int | None, max_level: int = MAX_LEVEL, *, probe: bool = False) -> Limiter:
        """A fixed limiter at ``level``, or (None: ``auto``) an adaptive one up to
        ``max_level``, measured by a first round of ``PROBE`` requests with ``probe``."""
        if level is not None:
            return cls(level)
        return (
            cls.auto(max_level, min(PROBE, max_level), probe=True) if probe else cls.auto(max_level)
        )

    @property
    def adaptive(self) -> bool:
        return self.rule is not None

    @property
    def level(self) -> int:
        return self.rule.level if self.rule is not None else self._fixed

    @property
    def inflight(self) -> int:
        return self._inflight

    @property
    def waiting(self) -> int:
        """Requests waiting for a permit."""
        return len(self._queue)

    def watch(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` (from whichever thread) each time a permit is returned (the
        level may have changed)."""
        self._watchers.append(callback)

    def acquire(self, deadline: Deadline) -> Permit:
        """A permit, in turn; ``Waited`` when the deadline comes first."""
        ticket = object()
        with self._cond:
            self._queue.append(ticket)
            try:
                while True:
                    wait = self._wait_s(ticket)
                    if wait == 0:
                        break
                    left = deadline.left()
                    if left is not None and left <= 0:
                        raise Waited
                    timeouts = [t for t in (left, wait) if t is not None]
                    self._cond.wait(min(timeouts) if timeouts else None)
            finally:
                self._queue.remove(ticket)
                self._cond.notify_all()  # the next in line may go now
            permit = Permit(self, self._inflight, self._started, self._epoch, self._clock())
            self._inflight += 1
            self._started += 1
        return permit

    def now(self) -> float:
        """The limiter's clock."""
        return self._clock()

    def pause_left(self) -> float:
        """Seconds the endpoint is still paused for (a ``Retry-After``), 0 when it is not."""
        return max(0.0, self._paused_until - self._clock())

    def stats(self) -> LevelStats:
        with self._cond:
            now = self._clock()
            weighted = self._weighted + self.level * (now - self._since)
            elapsed = now - self._start
            mean = weighted / elapsed if elapsed > 0 else float(self.level)
            return LevelStats(self.adaptive, self.level, self._lowest, self._highest, mean)

    def _wait_s(self, ticket: object) -> float | None:
        """0: ``ticket`` may go now; else how long to wait at most (None: until woken)."""
        pause = self.pause_left()
        if pause > 0:
            return pause
        if self._queue[0] is ticket and self._inflight < self.level:
            return 0
        return None

    def _end(self, permit: Permit, signal: Callable[[Vegas, int], None] | None) -> None:
        """Return ``permit`` (once) and give the rule its signal with the requests on the
        wire (this one included), if any."""
        with self._cond:
            inflight = self._inflight + permit.returned
            if not permit.returned:
                permit.returned = True
                self._inflight -= 1
            if signal is not None and self.rule is not None:
                now, before = self._clock(), self.level
                self._weighted += before * (now - self._since)
                self._since = now
                signal(self.rule, inflight)
                self._lowest = min(self._lowest, self.level)
                self._highest = max(self._highest, self.level)
            self._cond.notify_all()
        for callback in self._watchers:
            callback()

    def _dropped(self, permit: Permit, pause_s: float | None) -> None:
        with self._cond:
            if pause_s:
                until = self._clock() + min(pause_s, MAX_PAUSE_S)
                self._paused_until = max(self._paused_until, until)
            fresh = permit.epoch == self._epoch  # not an overload already answered
            if fresh:
                self._epoch += 1
        at = self._clock()
        self._end(permit, (lambda rule, inflight: rule.drop(at)) if fresh else None)

    def _restarted(self, permit: Permit) -> None:
        with self._cond:
            fresh = permit.epoch == self._epoch  # not a change already answered
            if fresh:
                self._epoch += 1
        at = self._clock()
        self._end(permit, (lambda rule, inflight: rule.restart(at)) if fresh else None)

    def _overlapped(self, permit: Permit) -> bool:
        with self._cond:
            return permit.before > 0 or self._started > permit.seq + 1


class Permit:
    """One request's right to be on the wire; returned by the first of ``done``, ``dropped``
    and ``release`` (``dropped`` after that still teaches the rule)."""

    def __init__(self, limiter: Limiter, before: int, seq: int, epoch: int, started: float) -> None:
        self.limiter = limiter
        self.before = before  # requests on the wire when it was handed out
        self.started = started  # when, by the limiter's clock
        self.seq = seq
        self.epoch = epoch
        self.returned = False
        self.sent = time.monotonic()  # when the request went (delays are measured from it)

    def __enter__(self) -> Permit:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    @property
    def overlapped(self) -> bool:
        """Whether another request of the endpoint was on the wire at some point while this
        one was (it was already, or one started after it)."""
        return self.limiter._overlapped(self)

    def done(self, kind: str, delay: float, units: float = 1.0) -> None:
        """The request ended well after ``delay`` per unit of ``kind``, for ``units`` units
        (see ``Vegas.sample``)."""
        at, started, before, seq = self.limiter.now(), self.started, self.before, self.seq
        limiter = self.limiter

        def learn(rule: Vegas, inflight: int) -> None:  # under the limiter's lock
            handed = limiter._started
            rule.sample(Sample(kind, delay, units, started, before + 1, at, inflight, seq, handed))

        self.limiter._end(self, learn)

    def dropped(self, pause_s: float | None = None) -> None:
        """The endpoint is overloaded (and asked to be left alone ``pause_s``)."""
        self.limiter._dropped(self, pause_s)

    def restarted(self) -> None:
        """The endpoint changed how it serves: learn it again from 1 (``Vegas.restart``)."""
        self.limiter._restarted(self)

    def release(self) -> None:
        """The request ended, teaching nothing about the endpoint's load."""
        self.limiter._end(self, None)
