"""One place that builds HTTP sessions: retries, backoff with jitter, Retry-After, User-Agent.

Both the model client and the MediaWiki backend use ``make_session`` so retry behaviour is the
same everywhere and bounded in count and in total waiting time.
"""

from __future__ import annotations

import email.utils
import json
import math
import random
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timezone
from typing import Any

import requests
from requests.adapters import HTTPAdapter
from urllib3 import HTTPConnectionPool, HTTPSConnectionPool, PoolManager
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.exceptions import MaxRetryError, ResponseError
from urllib3.response import BaseHTTPResponse
from urllib3.util.retry import Retry

from react_cli import __version__
from react_cli.deadline import current_watchdog, time_left
from react_cli.records import RetryObserver, RetryWait
from react_cli.redaction import Redactor, redact_headers, redact_url
from react_cli.retrycount import note_retries

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
# Substrings of requests/urllib3 error texts, most specific first, and how we say them.
_REASONS = (
    ("refused", "connection refused"),
    ("connect timeout", "timed out connecting"),
    ("timed out", "timed out waiting for the answer"),
    ("resolve", "cannot resolve the host name"),
    ("getaddrinfo", "cannot resolve the host name"),
    ("ssl", "TLS/SSL error"),
    ("remotedisconnected", "the server closed the connection without answering"),
    ("ended prematurely", "the connection broke off mid-answer"),
    ("reset", "the connection was reset"),
)


def failure_reason(exc: BaseException) -> str | None:
    """A network failure in a few plain words (never its text, which may hold a URL)."""
    text = str(exc).lower()
    return next((reason for needle, reason in _REASONS if needle in text), None)


def user_agent(contact: str | None = None) -> str:
    """A Wikimedia-policy User-Agent: tool/version (contact) library/version. The project has
    no web page to name, so without the user's ``contact`` there is none (never a made-up URL)."""
    where = f" ({contact})" if contact else ""
    return f"react-cli/{__version__}{where} requests/{requests.__version__}"


class BoundedRetry(Retry):
    """urllib3 Retry that honours Retry-After but never sleeps longer than ``max_wait_s``.

    A server asking us to wait an hour would otherwise hang the run; we wait at most
    ``max_wait_s`` per attempt, so the total wait is bounded by ``total * max_wait_s``. Inside
    a run's time limit (``deadline.deadline_after``) no retry starts whose wait would end
    past it.
    """

    max_wait_s: float = 30.0
    attempts: int = 0  # the retries allowed at first (``total`` counts down)
    on_wait: RetryObserver | None = None

    def get_retry_after(self, response: BaseHTTPResponse) -> float | None:
        """The header's wait (see ``retry_after_s``), capped; None falls back to the backoff."""
        retry_after = retry_after_s(response.headers.get("Retry-After"))
        return None if retry_after is None else min(retry_after, self.max_wait_s)

    def new(self, **kw):  # type: ignore[no-untyped-def]
        retry = super().new(**kw)
        retry.max_wait_s = self.max_wait_s
        retry.attempts = self.attempts
        retry.on_wait = self.on_wait
        return retry

    def sleep(self, response: BaseHTTPResponse | None = None) -> None:
        """urllib3's wait (Retry-After, else backoff), announced to ``on_wait`` as it starts."""
        wait = None
        if self.respect_retry_after_header and response is not None:
            wait = self.get_retry_after(response)
        if not wait:
            wait = self.get_backoff_time()
        if self.on_wait is not None and self.history:
            self.on_wait(RetryWait(wait, self._last_failure(), len(self.history), self.attempts))
        if wait > 0:
            time.sleep(wait)

    def _last_failure(self) -> str:
        last = self.history[-1]
        if last.status:
            return f"HTTP {last.status}"
        error = last.error or Exception("no answer")
        return failure_reason(error) or type(error).__name__

    def increment(  # type: ignore[no-untyped-def, override]
        self, method=None, url=None, response=None, error=None, _pool=None, _stacktrace=None
    ):
        retry = super().increment(method, url, response, error, _pool, _stacktrace)
        left = time_left()
        if left is not None:
            wait = (retry.get_retry_after(response) if response is not None else None) or 0.0
            if max(wait, retry.get_backoff_time()) >= left:
                reason = error or ResponseError("no time left to retry within the run's limit")
                raise MaxRetryError(_pool, url, reason)  # type: ignore[arg-type]
        return retry


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


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try: attempts after the first, backoff base and cap, max Retry-After wait."""

    retries: int = 4
    backoff_factor: float = 0.5
    backoff_max_s: float = 20.0
    backoff_jitter_s: float = 0.25
    max_retry_after_s: float = 30.0

    def backoff_s(self, attempt: int) -> float:
        """The wait before retry ``attempt + 1`` when the server named none, as urllib3's."""
        wait = min(self.backoff_max_s, self.backoff_factor * 2.0**attempt)
        return wait + random.uniform(0, self.backoff_jitter_s)

    def to_urllib3(self) -> BoundedRetry:
        retry = BoundedRetry(
            total=self.retries,
            connect=self.retries,
            read=self.retries,
            status=self.retries,
            other=0,
            allowed_methods=None,  # POST too: completions are idempotent enough to repeat
            status_forcelist=RETRY_STATUSES,
            backoff_factor=self.backoff_factor,
            backoff_max=self.backoff_max_s,
            backoff_jitter=self.backoff_jitter_s,
            respect_retry_after_header=True,
            raise_on_status=False,
        )
        retry.max_wait_s = self.max_retry_after_s
        retry.attempts = self.retries
        return retry


class _WatchedConnection(HTTPConnection):
    """Reports each socket it opens to the enclosing ``deadline.watchdog`` block."""

    def _new_conn(self) -> socket.socket:
        sock = super()._new_conn()
        _watch(sock)
        return sock


class _WatchedHTTPSConnection(_WatchedConnection, HTTPSConnection):
    """TLS: the plain socket is watched while the handshake runs, then the TLS one."""

    def connect(self) -> None:
        super().connect()
        if self.sock is not None:
            _watch(self.sock)


def _watch(sock: socket.socket) -> None:
    dog = current_watchdog()
    if dog is not None:
        dog.watch(sock)


class _WatchedAttempts(HTTPConnectionPool):
    """Every attempt (urllib3 retries included) gets the watchdog's full time afresh."""

    def _make_request(self, conn: Any, *args: Any, **kwargs: Any) -> BaseHTTPResponse:
        dog = current_watchdog()
        if dog is not None:
            dog.start_attempt()
            if conn.sock is not None:  # a kept-alive connection: its socket is not new
                dog.watch(conn.sock)
        return super()._make_request(conn, *args, **kwargs)


class _WatchedPool(_WatchedAttempts):
    ConnectionCls = _WatchedConnection


class _WatchedHTTPSPool(_WatchedAttempts, HTTPSConnectionPool):
    ConnectionCls = _WatchedHTTPSConnection


_WATCHED_POOLS = {"http": _WatchedPool, "https": _WatchedHTTPSPool}


class _WatchedAdapter(HTTPAdapter):
    """An adapter whose connections (direct or through an HTTP proxy) obey the watchdog."""

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = _WATCHED_POOLS

    def proxy_manager_for(self, proxy: str, **kwargs: Any) -> PoolManager:
        manager: PoolManager = super().proxy_manager_for(proxy, **kwargs)
        manager.pool_classes_by_scheme = _WATCHED_POOLS
        return manager


def _count_retries(response: requests.Response, *args: object, **kwargs: object) -> None:
    note_retries(retries_of(response))


def make_session(
    agent: str,
    policy: RetryPolicy | None = None,
    debug_log: Callable[[str], None] | None = None,
    on_retry: RetryObserver | None = None,
    redactor: Redactor | None = None,
) -> requests.Session:
    """A requests session with the retry policy mounted for http and https.

    With ``debug_log``, every request and its answer are logged in one line each (headers
    included, credential headers and URL user information dropped, and whatever ``redactor``
    knows masked: the secrets of the URL the session serves); ``on_retry`` hears of each
    retry wait as it starts.
    """
    session = requests.Session()
    retry = (policy or RetryPolicy()).to_urllib3()
    retry.on_wait = on_retry
    adapter = _WatchedAdapter(max_retries=retry, pool_maxsize=16)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    session.headers["User-Agent"] = agent
    session.hooks["response"].append(_count_retries)
    log = (redactor or Redactor()).log(debug_log)
    if log is not None:
        session.hooks["response"].append(_response_logger(log))
    return session


def _response_logger(log: Callable[[str], None]) -> Callable[..., None]:
    """A requests response hook writing the request and the answer to ``log``."""

    def hook(response: requests.Response, *args: object, **kwargs: object) -> None:
        request = response.request
        url = redact_url(str(request.url), keep_query=True)
        log(f"{request.method} {url} headers={json.dumps(redact_headers(request.headers))}")
        elapsed = response.elapsed.total_seconds()
        log(
            f"HTTP {response.status_code} {url} in {elapsed:.3f}s retries={retries_of(response)} "
            f"headers={json.dumps(redact_headers(response.headers))}"
        )

    return hook


def retries_of(response: requests.Response) -> int:
    """How many retries urllib3 made before this response (0 when unknown)."""
    retries = getattr(getattr(response, "raw", None), "retries", None)
    history = getattr(retries, "history", None)
    return len(history) if history else 0
