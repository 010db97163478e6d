"""How an adaptive :class:`~react_cli.infra.limiter.Limiter` learns its level.

The adaptive rule (:class:`Vegas`) is TCP Vegas's, as Netflix's concurrency-limits applies it
to servers, with AIMD's reaction to loss. A delay-based rule is what a queueing server needs:
Ollama, llama.cpp with ``--parallel K`` and vLLM answer more requests than they serve by
queueing them, with no error, only a longer wait; a rule that grows until something fails
(AIMD) climbs to its cap there and turns the queue into timeouts. So the rule estimates how
many requests wait at the server, from the delay that shows a queue directly (the time to the
first token of a streamed answer, the time per output token of a whole one) against its lowest,
and holds the level where one to three requests wait: the server stays busy and answers stay
fast. A model endpoint's limiter starts by measuring: its first round sends up to ``PROBE``
requests at once, and the answers that came about as fast as the quickest (within
``PROBE_SPREAD``) were served at once, the others queued behind them: the level starts at twice
the ones served at once (a question's turn also waits on its tools), from where it moves as
below, still doubling when every request of the round was served at once. Without the first
round (a Wikipedia host, which asks for few requests at once) it starts at 1 and doubles while
nothing waits (slow start: a short eval must reach a big server's level in a few rounds). It
halves on an overload, once per overload (the requests already on the wire when it halved
report the same overload). It never grows when fewer than half its permits are used (what it
sees then says nothing about more). ``bench/concurrency.py`` compares it with AIMD and Gradient2.

The rule reads no clock: it is driven by :class:`Sample`s (its tests feed it synthetic ones).
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field

ALPHA = 1.0
"""Requests waiting at the server below which the level grows."""
BETA = 3.0
"""Requests waiting above which it shrinks."""
WINDOW = 5
"""Samples a kind's delay is the median of: one slow answer is not a queue."""
MIN_SAMPLES = 3
"""Samples since the level last went down before a queue lowers it again."""
IDLE_STEPS = 4
"""Steps up per round while nothing at all waits (less than half a request)."""
RATE_WINDOW = 32
"""Answers the endpoint's rate is measured over (at most)."""
PROBE = 16
"""Requests a model endpoint's first round sends at once (at most its cap), to measure how many
it serves at once (``Vegas.probing``): a slow start from 1 costs a short eval too many rounds."""
PROBE_SPREAD = 1.5
"""A first-round answer whose delay is within this factor of the quickest one's was served at
the same time, not queued behind it."""


@dataclass(frozen=True)
class Sample:
    """How one request went, as the rule reads it: its delay per unit (a stream's time to
    its first token, 1 unit; a whole answer's time per output token, its tokens), when it was
    sent and with how many requests on the wire (itself included), and when it ended with
    how many on the wire (itself included). Times are the limiter's clock, in seconds."""

    kind: str
    delay: float
    units: float
    sent_at: float
    sent_inflight: int
    at: float
    inflight: int
    seq: int = -1  # its permit's place among the endpoint's requests, from 0 (-1: not known)
    handed: int = 0  # permits handed out by the time it ended


@dataclass
class Vegas:
    """The adaptive rule: its level, and what it learnt (see the module docstring).

    TCP Vegas estimates the packets queued in the network as ``window × (1 − base / rtt)``,
    which is Little's law (queue = rate × wait) with the rate taken as ``window / rtt``. The
    delay that shows an endpoint's queue is not a request's whole time (the time to the first
    token is a fraction of it), so the rate is measured instead: answers per second over the
    last ``RATE_WINDOW``; the wait is how far the delay (the median of the kind's last
    ``WINDOW``) stands above its base (the lowest such median seen), times the units it counts.

    Slow start adds 1 per answer, but never goes above twice the requests that answer's
    request shared the wire with (growth is only claimed as far as it was tried); the first
    queue it meets halves the level (it doubled once too often), as TCP leaves slow start.
    Then the level moves by about 1 per round (a window of ``level`` answers): up while
    less than ``ALPHA`` waits (by ``IDLE_STEPS`` while nothing at all does), down while more
    than ``BETA`` wait. A queue is read only from the median of ``MIN_SAMPLES`` answers or
    more, to requests sent after the level last went down (the others saw the level before).
    """

    level: int = 1
    max_level: int = 64
    slow_start: bool = True
    probing: bool = False  # the first round measures where the level starts (``_probe``)
    _round: int = 0  # requests of the first round: those handed out before its first answer
    _first: list[float] = field(default_factory=list)  # the first round's delays
    _arrived: int = 0  # the first round's answers so far
    _base: dict[str, float] = field(default_factory=dict)
    _recent: dict[str, deque[float]] = field(default_factory=dict)
    _ends: deque[float] = field(default_factory=lambda: deque(maxlen=RATE_WINDOW))
    _credit: float = 0.0  # fractions of a step, in congestion avoidance (+1 per window)
    _lowered_at: float = -math.inf  # when the level last went down

    def sample(self, sample: Sample) -> None:
        """Learn from a request that ended well (one sent before the level last went down
        saw the level before: it only counts for the rate)."""
        self._ends.append(sample.at)
        if self.probing:
            self._probe(sample)
            return
        if sample.delay <= 0 or sample.sent_at < self._lowered_at:
            return
        recent = self._recent.setdefault(sample.kind, deque(maxlen=WINDOW))
        recent.append(sample.delay)
        now = sorted(recent)[len(recent) // 2]
        self._base[sample.kind] = min(self._base.get(sample.kind, now), now)
        queue = self.waiting(sample.kind, sample.units)
        if queue > BETA:
            if len(recent) < MIN_SAMPLES:
                return  # one answer alone is no queue
            # From slow start, it went too far (by up to twice): back to where it was.
            self._lower(self.level // 2 if self.slow_start else self.level - 1, sample.at)
            self.slow_start = False
            recent.clear()
        elif sample.inflight * 2 < self.level:  # app-limited: nothing learnt about more
            return
        elif queue < ALPHA:
            if self.slow_start:  # +1 per answer: doubles per round
                self._set(max(self.level, min(self.level + 1, 2 * sample.sent_inflight)))
            else:  # +1 per round, or +IDLE_STEPS when nothing waits at all
                self._grow(IDLE_STEPS if queue < ALPHA / 2 else 1)
        else:
            self.slow_start = False

    def _probe(self, sample: Sample) -> None:
        """Learn the first round: once every request of it answered (or one sent after it
        did), the level starts at twice those served at once, in slow start still when all
        were (the endpoint may serve more), else past it."""
        if not self._round:
            self._round = max(1, sample.handed)
        if 0 <= sample.seq < self._round:
            self._arrived += 1
            if sample.delay > 0:
                self._first.append(sample.delay)
            if self._arrived < self._round:
                return
        self.probing = False
        if not self._first:
            return
        quickest = min(self._first)
        served = sum(delay <= quickest * PROBE_SPREAD for delay in self._first)
        self._base[sample.kind] = quickest
        self.slow_start = served >= self._round
        self._credit, self._lowered_at = 0.0, sample.at  # what came before saw the probe
        self._set(2 * served)

    def waiting(self, kind: str, units: float = 1.0) -> float:
        """How many requests wait at the server, by what answers of ``kind`` say lately (a
        whole answer's delay is per unit: ``units`` of them)."""
        recent = self._recent.get(kind)
        if not recent:
            return 0.0
        now = sorted(recent)[len(recent) // 2]
        return self.rate() * (now - self._base[kind]) * units

    def rate(self) -> float:
        """Answers per second lately (0 until there are three)."""
        ends = self._ends
        span = ends[-1] - ends[0] if len(ends) >= 3 else 0.0
        return (len(ends) - 1) / span if span > 0 else 0.0

    def drop(self, at: float) -> None:
        """An overload at time ``at``: halve."""
        self.slow_start = self.probing = False
        self._lower(self.level // 2, at)

    def restart(self, at: float) -> None:
        """The endpoint changed how it serves (it cut a stream: it serves one request at a
        time, and nothing more is streamed to it): from 1, with every delay learnt again."""
        self.slow_start = self.probing = False
        self._base.clear()
        self._recent.clear()
        self._lower(1, at)

    def _lower(self, level: int, at: float) -> None:
        self._credit = 0.0
        self._lowered_at = at
        self._set(level)

    def _grow(self, steps: int) -> None:
        """+``steps`` per window of ``level`` answers, 1 at a time."""
        self._credit += steps / self.level
        if self._credit >= 1:
            self._credit = 0.0
            self._set(self.level + 1)

    def _set(self, level: int) -> None:
        self.level = max(1, min(self.max_level, level))
