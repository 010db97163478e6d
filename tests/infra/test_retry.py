"""The one retry policy, the deadline passed to it, and failures told apart by exception type."""

from __future__ import annotations

import http.client
import socket
import ssl

import pytest
import requests
from urllib3 import exceptions as u3

from react_cli.core.records import RetryWait
from react_cli.infra.deadline import MIN_TIMEOUT_S, NO_DEADLINE, Deadline
from react_cli.infra.http import TIMED_OUT, failure_reason, is_transient
from react_cli.infra.retry import Retryable, RetryPolicy

QUICK = RetryPolicy(retries=3, backoff_factor=0.001, backoff_max_s=0.01, backoff_jitter_s=0.0)


class Flaky:
    """Fails ``failures`` times with ``failure``, then answers ``"ok"``."""

    def __init__(self, failures: int, **failure: float | int | None) -> None:
        self.failures = failures
        self.calls = 0
        self.failure = failure

    def __call__(self) -> str:
        self.calls += 1
        if self.calls <= self.failures:
            raise Retryable("HTTP 503", self.give_up, **self.failure)  # type: ignore[arg-type]
        return "ok"

    @staticmethod
    def give_up(retries: int, out_of_time: bool) -> Exception:
        return RuntimeError(f"gave up after {retries} (out of time: {out_of_time})")


def test_a_call_returns_its_result_and_the_retries_it_took() -> None:
    waits: list[RetryWait] = []
    assert QUICK.call(Flaky(2), NO_DEADLINE, waits.append) == ("ok", 2)
    assert [(w.reason, w.attempt, w.attempts) for w in waits] == [
        ("HTTP 503", 1, 3),
        ("HTTP 503", 2, 3),
    ]
    assert QUICK.call(Flaky(0), NO_DEADLINE) == ("ok", 0)


def test_retries_stop_at_the_policy_count_with_the_failures_error() -> None:
    flaky = Flaky(10)
    with pytest.raises(RuntimeError, match=r"^gave up after 3 \(out of time: False\)$"):
        QUICK.call(flaky, NO_DEADLINE)
    assert flaky.calls == 4


def test_a_kind_of_failure_may_allow_fewer_retries_and_shorter_waits() -> None:
    waits: list[RetryWait] = []
    flaky = Flaky(10, max_retries=1, retry_after_s=60.0, max_wait_s=0.01)
    with pytest.raises(RuntimeError, match="gave up after 1"):
        QUICK.call(flaky, NO_DEADLINE, waits.append)
    assert flaky.calls == 2 and [(w.seconds, w.attempts) for w in waits] == [(0.01, 1)]


def test_the_wait_is_retry_after_capped_else_the_backoff() -> None:
    policy = RetryPolicy(backoff_factor=0.5, backoff_max_s=20.0, backoff_jitter_s=0.0)
    assert policy.wait_s(0, Retryable("x", Flaky.give_up, retry_after_s=3600)) == 30.0
    assert policy.wait_s(0, Retryable("x", Flaky.give_up, retry_after_s=0)) == 0.0
    backoff = [policy.wait_s(n, Retryable("x", Flaky.give_up)) for n in range(8)]
    assert backoff == [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 20.0, 20.0]


def test_no_retry_starts_whose_wait_would_end_past_the_deadline() -> None:
    flaky, waits = Flaky(10, retry_after_s=0.2), []
    with pytest.raises(RuntimeError, match=r"gave up after 2 \(out of time: True\)"):
        QUICK.call(flaky, Deadline.after(0.5), waits.append)  # two waits of 0.2 s fit
    assert flaky.calls == 3 and [w.seconds for w in waits] == [0.2, 0.2]


def test_a_deadline_bounds_timeouts_and_waits() -> None:
    assert NO_DEADLINE.left() is None and NO_DEADLINE.bound(7.0) == 7.0
    assert NO_DEADLINE.allows(1e9) and not NO_DEADLINE.within(1e9)
    soon = Deadline.after(1.0)
    left = soon.left()
    assert left is not None and 0.9 < left <= 1.0
    assert soon.bound(7.0) <= 1.0 and soon.bound(0.5) == 0.5
    assert soon.allows(0.5) and not soon.allows(2.0) and soon.within(2.0)
    past = Deadline.after(-1.0)
    assert past.bound(5.0) == MIN_TIMEOUT_S and past.within(0.0)


def chained(outer: BaseException, *inner: BaseException) -> BaseException:
    """``outer`` raised from the chain ``inner`` (each caused by the next)."""
    for cause, effect in zip(inner[1:], inner, strict=False):
        effect.__cause__ = cause
    outer.__cause__ = inner[0] if inner else None
    return outer


def refused() -> BaseException:
    failed = u3.NewConnectionError(None, "Failed to establish a new connection")  # type: ignore[arg-type]
    failed.__cause__ = ConnectionRefusedError(111, "Connection refused")
    return requests.ConnectionError(u3.MaxRetryError(None, "/v1", failed))  # type: ignore[arg-type]


def failures() -> dict[str, tuple[BaseException, str | None]]:
    """Failures as requests raises them, by the exceptions they wrap, and how each is said."""
    protocol = u3.ProtocolError
    return {
        "refused": (refused(), "connection refused"),
        "disconnected": (
            requests.ConnectionError(chained(protocol("x"), http.client.RemoteDisconnected())),
            "the server closed the connection without answering",
        ),
        "reset": (
            requests.ConnectionError(protocol("x", ConnectionResetError())),
            "the connection was reset",
        ),
        "ended": (
            requests.exceptions.ChunkedEncodingError(protocol("Response ended prematurely")),
            "the connection broke off mid-answer",
        ),
        "read-timeout": (
            requests.ReadTimeout(u3.ReadTimeoutError(None, "/", "Read timed out.")),  # type: ignore[arg-type]
            TIMED_OUT,
        ),
        "connect-timeout": (
            requests.ConnectTimeout(chained(u3.ConnectTimeoutError("x"), TimeoutError())),
            "timed out connecting",
        ),
        "tls": (
            requests.exceptions.SSLError(chained(u3.SSLError("x"), ssl.SSLError())),
            "TLS/SSL error",
        ),
        "dns": (
            requests.ConnectionError(chained(protocol("x"), socket.gaierror(-2, "Name"))),
            "cannot resolve the host name",
        ),
        # the text says nothing: "refused" in a message is not a refused connection
        "text": (requests.ConnectionError("connection refused, ssl, timed out"), None),
    }


@pytest.mark.parametrize("name", failures())
def test_failures_are_told_apart_by_type_not_text(name: str) -> None:
    exc, reason = failures()[name]
    assert failure_reason(exc) == reason


def test_a_timeout_is_worth_a_retry_a_refused_connection_or_tls_error_is_not() -> None:
    """Issue 32: a refused connection or a name that does not resolve is the same a second
    later (offline, a firewall, a server not started): said at once, not retried."""
    assert not is_transient(refused())  # type: ignore[arg-type]
    assert is_transient(requests.ReadTimeout())
    assert is_transient(requests.ConnectionError(ConnectionResetError()))
    assert not is_transient(requests.exceptions.SSLError())
    assert not is_transient(requests.exceptions.InvalidURL())
