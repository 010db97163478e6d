"""Time limits that hold whatever a server sends: the run's deadline and each request's own.

A run's time limit is a :class:`Deadline` value the loop hands to every model and tool call,
as httpx hands a ``Timeout`` to a request: a call shortens its request timeouts to the time
left and starts no retry whose wait would end past it. Passed, never looked up, so a call made
without one (``NO_DEADLINE``) has no limit and concurrent runs never share one.

Socket timeouts bound one read, not a request: a server that sends an SSE keep-alive, an empty
chunk or a single byte before each read times out keeps a request alive forever, and a buffered
read of a Content-Length body waits for all its bytes however slowly they come. So each request
owns a :class:`Watchdog`: a timer that shuts the request's sockets down when its time is up,
which ends any blocked read at once, whatever the transfer shape (chunked, Content-Length, or
delimited by the connection's close). ``http.watched_request`` carries it to the connection.
One thread keeps every watchdog's time (:class:`_Alarms`), started with the first: a thread per
request cost more than many a request itself.

A deadline may also carry a :class:`Cancel` (an eval's stop): once it is set, no time is left
(no request starts, no retry waits) and every watchdog under it shuts its sockets at once, so
the calls in flight end now rather than at their own limits.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import math
import os
import socket
import threading
import time
from dataclasses import dataclass, field
from types import TracebackType

MIN_TIMEOUT_S = 0.01


class Cancel:
    """Set once, from any thread: the calls of every deadline holding it end at once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._set = False
        self._dogs: set[Watchdog] = set()

    def set(self) -> None:
        with self._lock:
            self._set = True
            dogs, self._dogs = list(self._dogs), set()
        for dog in dogs:
            dog.expire()

    def is_set(self) -> bool:
        return self._set

    def watch(self, dog: Watchdog) -> None:
        """Expire ``dog`` when this is set (at once if it is already)."""
        with self._lock:
            if not self._set:
                self._dogs.add(dog)
                return
        dog.expire()

    def forget(self, dog: Watchdog) -> None:
        with self._lock:
            self._dogs.discard(dog)


@dataclass(frozen=True)
class Deadline:
    """A point in ``time.monotonic()`` time no request may run past; ``at`` None: no limit.
    ``cancel``, once set, leaves no time at all."""

    at: float | None = None
    cancel: Cancel | None = field(default=None, compare=False)

    @classmethod
    def after(cls, seconds: float | None, cancel: Cancel | None = None) -> Deadline:
        """``seconds`` from now (None: no limit), ended early by ``cancel``."""
        return cls(None if seconds is None else time.monotonic() + seconds, cancel)

    def left(self) -> float | None:
        """Seconds until the deadline (≤ 0 once it has passed, or was cancelled); None when
        there is none."""
        if self.cancel is not None and self.cancel.is_set():
            return -math.inf
        return None if self.at is None else self.at - time.monotonic()

    def bound(self, timeout_s: float) -> float:
        """``timeout_s`` shortened to the time left, never below a tiny positive value."""
        left = self.left()
        return timeout_s if left is None else max(MIN_TIMEOUT_S, min(timeout_s, left))

    def allows(self, wait_s: float) -> bool:
        """Whether a wait of ``wait_s`` ends before the deadline (a retry after it can start)."""
        left = self.left()
        return left is None or wait_s < left

    def within(self, slack_s: float) -> bool:
        """Whether at most ``slack_s`` is left (a request failing now failed for lack of time)."""
        left = self.left()
        return left is not None and left < slack_s


class Watchdog:
    """Shuts down the sockets of one request once it has run ``timeout_s`` seconds or the
    deadline has come, whichever is first.

    Used as a context manager around the request and the reading of its body; the connection
    reports its sockets (``watch``). ``expired`` says whether the request was cut: a read that
    failed or ended then failed because of the time.
    """

    def __init__(self, timeout_s: float, deadline: Deadline) -> None:
        left = deadline.left()
        self.limit_s = timeout_s if left is None else max(0.0, min(timeout_s, left))
        self.expired = False
        self._cancel = deadline.cancel
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._alarm: _Alarm | None = None
        self._running = False

    def __enter__(self) -> Watchdog:
        self._running = True
        if math.isfinite(self.limit_s):
            self._alarm = _ALARMS.set(time.monotonic() + self.limit_s, self)
        if self._cancel is not None:
            self._cancel.watch(self)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        with self._lock:
            if self._alarm is not None:
                _ALARMS.unset(self._alarm)
            self._alarm = None
            self._running = False
            self._sockets = []
        if self._cancel is not None:
            self._cancel.forget(self)

    def watch(self, sock: socket.socket) -> None:
        """Shut ``sock`` down when the time is up (at once if it is already)."""
        with self._lock:
            self._sockets.append(sock)
            if self.expired:
                _shut(sock)

    def expire(self) -> None:
        """Shut the request's sockets now: its time is up, or its deadline was cancelled."""
        with self._lock:
            if not self._running:
                return  # the request ended meanwhile
            self.expired = True
            for sock in self._sockets:
                _shut(sock)


class _Alarm:
    """When a watchdog's time is up; ``dog`` None once its request ended."""

    __slots__ = ("at", "dog", "seq")

    def __init__(self, at: float, seq: int, dog: Watchdog) -> None:
        self.at, self.seq = at, seq
        self.dog: Watchdog | None = dog

    def __lt__(self, other: _Alarm) -> bool:
        return (self.at, self.seq) < (other.at, other.seq)


class _Alarms:
    """One daemon thread expiring every watchdog whose time is up, earliest first; an alarm
    unset is dropped when it comes up (or when unset ones are most of the heap)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._heap: list[_Alarm] = []
        self._unset = 0
        self._seq = itertools.count()
        self._thread: threading.Thread | None = None

    def set(self, at: float, dog: Watchdog) -> _Alarm:
        alarm = _Alarm(at, next(self._seq), dog)
        with self._cond:
            heapq.heappush(self._heap, alarm)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="watchdog", daemon=True)
                self._thread.start()
            elif self._heap[0] is alarm:
                self._cond.notify()  # earlier than what the thread waits for
        return alarm

    def unset(self, alarm: _Alarm) -> None:
        with self._cond:
            if alarm.dog is None:
                return
            alarm.dog = None
            self._unset += 1
            if self._unset > 64 and 2 * self._unset > len(self._heap):
                self._heap = [kept for kept in self._heap if kept.dog is not None]
                heapq.heapify(self._heap)
                self._unset = 0

    def after_fork(self) -> None:
        """A child process has none of its parent's threads, nor its requests."""
        self._cond = threading.Condition()
        self._heap, self._unset, self._thread = [], 0, None

    def _run(self) -> None:
        while True:
            with self._cond:
                dog = self._next_due()
            dog.expire()  # outside the lock: expiring takes the dog's

    def _next_due(self) -> Watchdog:
        """The dog of the earliest alarm once its time has come (under the lock)."""
        while True:
            if not self._heap:
                self._cond.wait()
                continue
            alarm = self._heap[0]
            dog = alarm.dog
            if dog is None:  # unset
                heapq.heappop(self._heap)
                self._unset -= 1
                continue
            wait = alarm.at - time.monotonic()
            if wait > 0:
                self._cond.wait(wait)
                continue
            heapq.heappop(self._heap)
            alarm.dog = None
            return dog


_ALARMS = _Alarms()
os.register_at_fork(after_in_child=_ALARMS.after_fork)


NO_DEADLINE = Deadline()
"""No limit: a call outside a run (``react-cli models``, ``wiki search``) or a run without one."""


def _shut(sock: socket.socket) -> None:
    """End every blocked and future read on ``sock`` (shutdown wakes a reader; close does not)."""
    with contextlib.suppress(OSError):  # already closed
        socket.socket.shutdown(sock, socket.SHUT_RDWR)  # the plain socket's, also for TLS ones
