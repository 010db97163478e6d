"""The one retry policy: how often a failed request is tried again and how long to wait first.

Every retry in react-cli goes through :meth:`RetryPolicy.call`: the model client's (connection
errors, 429/5xx, a stream that breaks off after its 200) and the Wikipedia backend's (the same,
and ``maxlag``). The wait is the server's ``Retry-After`` (read by the one RFC 9110 parser,
capped) or an exponential backoff with jitter; each wait is announced to the ``RetryObserver``
as it starts; no retry starts whose wait would end past the run's deadline; and the call
returns how many retries it made, so a step records them.
"""

from __future__ import annotations

import email.utils
import math
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timezone
from typing import TypeVar

from react_cli.core.records import RetryObserver, RetryWait
from react_cli.infra.deadline import Deadline

T = TypeVar("T")
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
GiveUp = Callable[[int, bool], Exception]
"""Builds the error a failure ends in: from the retries made, and whether the deadline (not
the count) stopped the next one."""


class Retryable(Exception):
    """An attempt failed in a way a fresh attempt may fix.

    ``reason`` says what failed in the retry notice ("HTTP 429", "connection refused");
    ``give_up`` makes the error to raise when no retry follows. A kind of failure may allow
    fewer retries (``max_retries``) or shorter waits (``max_wait_s``) than the policy.
    """

    def __init__(
        self,
        reason: str,
        give_up: GiveUp,
        *,
        retry_after_s: float | None = None,
        max_retries: int | None = None,
        max_wait_s: float | None = None,
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.give_up = give_up
        self.retry_after_s = retry_after_s
        self.max_retries = max_retries
        self.max_wait_s = max_wait_s

    @classmethod
    def for_status(cls, status: int, headers: Mapping[str, str], give_up: GiveUp) -> Retryable:
        """An error status worth retrying (see ``RETRY_STATUSES``), with its Retry-After."""
        return cls(
            f"HTTP {status}", give_up, retry_after_s=retry_after_s(headers.get("Retry-After"))
        )


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try: retries after the first attempt, backoff base and cap, jitter, and the
    longest ``Retry-After`` honoured (a server asking for an hour would hang the run)."""

    retries: int = 4
    backoff_factor: float = 0.5
    backoff_max_s: float = 20.0
    backoff_jitter_s: float = 0.25
    max_retry_after_s: float = 30.0

    def wait_s(self, retry: int, failure: Retryable) -> float:
        """The wait before retry number ``retry + 1``: the server's, else the backoff."""
        if failure.retry_after_s is not None:
            wait = min(failure.retry_after_s, self.max_retry_after_s)
        else:
            wait = min(self.backoff_max_s, self.backoff_factor * 2.0**retry)
            wait += random.uniform(0, self.backoff_jitter_s)
        return wait if failure.max_wait_s is None else min(wait, failure.max_wait_s)

    def call(
        self,
        attempt: Callable[[], T],
        deadline: Deadline,
        on_retry: RetryObserver | None = None,
    ) -> tuple[T, int]:
        """``attempt()`` and the number of retries it took; an attempt raises ``Retryable``
        to be tried again. When none may follow, its ``give_up`` error is raised."""
        retries = 0
        while True:
            try:
                return attempt(), retries
            except Retryable as failure:
                limit = self.retries if failure.max_retries is None else failure.max_retries
                wait = self.wait_s(retries, failure)
                if retries >= limit:
                    raise failure.give_up(retries, False) from None
                if not deadline.allows(wait):
                    raise failure.give_up(retries, True) from None
                retries += 1
                if on_retry is not None:
                    on_retry(RetryWait(wait, failure.reason, retries, limit))
                if wait > 0:
                    time.sleep(wait)


def retry_after_s(value: str | None, now: float | None = None) -> float | None:
    """Seconds a ``Retry-After`` header asks for, per RFC 9110 (section 10.2.3): delay-seconds
    (ASCII digits) or an HTTP-date still to come. None for anything else (``1.5``, ``-1``,
    ``nan``, a date gone by, garbage): the caller then waits its own backoff."""
    text = (value or "").strip(" \t")
    if text.isascii() and text.isdigit():
        return float(text) if len(text) <= 15 else math.inf  # a huge wait: capped anyway
    try:
        date = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if date.tzinfo is None:
        date = date.replace(tzinfo=timezone.utc)  # HTTP-dates are GMT
    seconds = date.timestamp() - (time.time() if now is None else now)
    return seconds if seconds > 0 else None
