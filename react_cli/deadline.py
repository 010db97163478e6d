"""Time limits that hold whatever a server sends: the run's deadline and each request's own.

``Agent.run`` opens ``deadline_after(seconds)`` around the loop; the model client and the
Wikipedia backend shorten their request timeouts to :func:`time_left`, and urllib3's retries
(``http.BoundedRetry``) give up rather than wait past it. A context variable, so the limit
reaches every client without threading a parameter through each protocol.

Socket timeouts bound one read, not a request: a server that sends an SSE keep-alive, an empty
chunk or a single byte before each read times out keeps a request alive forever, and a buffered
read of a Content-Length body waits for all its bytes however slowly they come. So each request
also runs under a :class:`Watchdog` (``watchdog(seconds)`` around it): a timer that shuts the
request's socket down when its time is up, which ends any blocked read at once, whatever the
transfer shape (chunked, Content-Length, or delimited by the connection's close).
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_DEADLINE: ContextVar[float | None] = ContextVar("react_cli_deadline", default=None)
MIN_TIMEOUT_S = 0.01


@contextmanager
def deadline_after(seconds: float | None) -> Iterator[None]:
    """Within the block, no request may run past ``seconds`` from now (None: no limit).

    A nested deadline never extends an outer one.
    """
    if seconds is None:
        yield
        return
    at = time.monotonic() + seconds
    outer = _DEADLINE.get()
    token = _DEADLINE.set(at if outer is None else min(at, outer))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def time_left() -> float | None:
    """Seconds until the deadline (≤ 0 once it has passed); None when there is none."""
    at = _DEADLINE.get()
    return None if at is None else at - time.monotonic()


def bounded(timeout_s: float) -> float:
    """``timeout_s`` shortened to the time left, never below a tiny positive value."""
    left = time_left()
    return timeout_s if left is None else max(MIN_TIMEOUT_S, min(timeout_s, left))


class Watchdog:
    """Shuts down the sockets of a request attempt once it has run ``attempt_s`` seconds or
    the run's deadline has come, whichever is first.

    urllib3 makes several attempts for one request (retries); each starts a fresh timer
    (``start_attempt``) and reports its sockets (``watch``). ``expired`` says whether the
    current attempt was cut: a read that failed or ended then failed because of the time.
    """

    def __init__(self, attempt_s: float) -> None:
        self.attempt_s = attempt_s
        self.expired = False
        self._lock = threading.Lock()
        self._attempt = 0
        self._sockets: list[socket.socket] = []
        self._timer: threading.Timer | None = None

    def start_attempt(self) -> None:
        left = time_left()
        wait = self.attempt_s if left is None else min(self.attempt_s, left)
        with self._lock:
            self._cancel()
            self._attempt += 1
            self.expired = False
            self._sockets = []
            self._timer = threading.Timer(max(0.0, wait), self._expire, (self._attempt,))
            self._timer.daemon = True
            self._timer.start()

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)
            if self.expired:
                _shut(sock)

    def stop(self) -> None:
        with self._lock:
            self._cancel()

    def _expire(self, attempt: int) -> None:
        with self._lock:
            if attempt != self._attempt or self._timer is None:
                return  # a timer of an attempt that has ended
            self.expired = True
            for sock in self._sockets:
                _shut(sock)

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


def _shut(sock: socket.socket) -> None:
    """End every blocked and future read on ``sock`` (shutdown wakes a reader; close does not)."""
    with contextlib.suppress(OSError):  # already closed
        socket.socket.shutdown(sock, socket.SHUT_RDWR)  # the plain socket's, also for TLS ones


_WATCHDOG: ContextVar[Watchdog | None] = ContextVar("react_cli_watchdog", default=None)


@contextmanager
def watchdog(attempt_s: float) -> Iterator[Watchdog]:
    """Within the block, every HTTP attempt made through ``http.make_session`` sessions is cut
    after ``attempt_s`` seconds (or at the run's deadline); read the body inside the block."""
    dog = Watchdog(attempt_s)
    token = _WATCHDOG.set(dog)
    try:
        yield dog
    finally:
        _WATCHDOG.reset(token)
        dog.stop()


def current_watchdog() -> Watchdog | None:
    """The watchdog of the enclosing ``watchdog`` block, if any."""
    return _WATCHDOG.get()
