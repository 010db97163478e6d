"""A run-wide time limit that every HTTP call made inside the run respects.

``Agent.run`` opens ``deadline_after(seconds)`` around the loop; the model client and the
Wikipedia backend shorten their request timeouts to :func:`time_left`, and urllib3's retries
(``http.BoundedRetry``) give up rather than wait past it. A context variable, so the limit
reaches every client without threading a parameter through each protocol.
"""

from __future__ import annotations

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
