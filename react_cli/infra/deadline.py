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

A deadline may also carry a :class:`Cancel` (an eval's stop): once it is set, no time is left
(no request starts, no retry waits) and every watchdog under it shuts its sockets at once, so
the calls in flight end now rather than at their own limits.
"""

from __future__ import annotations

import contextlib
import math
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
        self._timer: threading.Timer | None = None
        self._running = False

    def __enter__(self) -> Watchdog:
        self._running = True
        if math.isfinite(self.limit_s):
            self._timer = threading.Timer(self.limit_s, self.expire)
            self._timer.daemon = True
            self._timer.start()
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
            if self._timer is not None:
                self._timer.cancel()
            self._timer = None
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


NO_DEADLINE = Deadline()
"""No limit: a call outside a run (``react-cli models``, ``wiki search``) or a run without one."""


def _shut(sock: socket.socket) -> None:
    """End every blocked and future read on ``sock`` (shutdown wakes a reader; close does not)."""
    with contextlib.suppress(OSError):  # already closed
        socket.socket.shutdown(sock, socket.SHUT_RDWR)  # the plain socket's, also for TLS ones
