"""One place that builds HTTP sessions: retries, backoff with jitter, Retry-After, User-Agent.

Both the model client and the MediaWiki backend use ``make_session`` so retry behaviour is the
same everywhere and bounded in count and in total waiting time.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

import requests
from requests.adapters import HTTPAdapter
from urllib3.exceptions import MaxRetryError, ResponseError
from urllib3.response import BaseHTTPResponse
from urllib3.util.retry import Retry

from react_cli import __version__
from react_cli.deadline import time_left
from react_cli.records import RetryObserver, RetryWait
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
        retry_after = super().get_retry_after(response)
        if retry_after is None:
            return None
        return min(retry_after, self.max_wait_s)

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


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try: attempts after the first, backoff base and cap, max Retry-After wait."""

    retries: int = 4
    backoff_factor: float = 0.5
    backoff_max_s: float = 20.0
    backoff_jitter_s: float = 0.25
    max_retry_after_s: float = 30.0

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


def _count_retries(response: requests.Response, *args: object, **kwargs: object) -> None:
    note_retries(retries_of(response))


def make_session(
    agent: str,
    policy: RetryPolicy | None = None,
    debug_log: Callable[[str], None] | None = None,
    on_retry: RetryObserver | None = None,
) -> requests.Session:
    """A requests session with the retry policy mounted for http and https.

    With ``debug_log``, every request and its answer are logged in one line each (headers
    included, Authorization redacted, URL credentials dropped); ``on_retry`` hears of each
    retry wait as it starts.
    """
    session = requests.Session()
    retry = (policy or RetryPolicy()).to_urllib3()
    retry.on_wait = on_retry
    adapter = HTTPAdapter(max_retries=retry, pool_maxsize=16)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    session.headers["User-Agent"] = agent
    session.hooks["response"].append(_count_retries)
    if debug_log is not None:
        session.hooks["response"].append(_response_logger(debug_log))
    return session


def _response_logger(log: Callable[[str], None]) -> Callable[..., None]:
    """A requests response hook writing the request and the answer to ``log``."""

    def hook(response: requests.Response, *args: object, **kwargs: object) -> None:
        request = response.request
        headers = {k: v for k, v in request.headers.items() if k.lower() != "authorization"}
        if "Authorization" in request.headers:
            headers["Authorization"] = "***"
        url = _without_credentials(str(request.url))
        log(f"{request.method} {url} headers={json.dumps(headers)}")
        elapsed = response.elapsed.total_seconds()
        log(
            f"HTTP {response.status_code} {url} in {elapsed:.3f}s retries={retries_of(response)} "
            f"headers={json.dumps(dict(response.headers))}"
        )

    return hook


def redact_url(url: str) -> str:
    """A URL fit for messages, logs and traces: user, password and query string dropped."""
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def _without_credentials(url: str) -> str:
    scheme, sep, rest = url.partition("://")
    host, slash, path = rest.partition("/")
    return f"{scheme}{sep}{host.rpartition('@')[2]}{slash}{path}"


def retries_of(response: requests.Response) -> int:
    """How many retries urllib3 made before this response (0 when unknown)."""
    retries = getattr(getattr(response, "raw", None), "retries", None)
    history = getattr(retries, "history", None)
    return len(history) if history else 0
