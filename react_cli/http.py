"""One place that builds HTTP sessions: retries, backoff with jitter, Retry-After, User-Agent.

Both the model client and the MediaWiki backend use ``make_session`` so retry behaviour is the
same everywhere and bounded in count and in total waiting time.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

import requests
from requests.adapters import HTTPAdapter
from urllib3.exceptions import MaxRetryError, ResponseError
from urllib3.util.retry import Retry

from react_cli import __version__
from react_cli.deadline import time_left
from react_cli.redaction import Redactor, redact_headers, redact_url
from react_cli.retrycount import note_retries

PROJECT_URL = "https://github.com/react-cli/react-cli"
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


def user_agent(contact: str | None = None) -> str:
    """A Wikimedia-policy User-Agent: tool/version (URL; contact) library/version."""
    where = f"{PROJECT_URL}; {contact}" if contact else PROJECT_URL
    return f"react-cli/{__version__} ({where}) requests/{requests.__version__}"


class BoundedRetry(Retry):
    """urllib3 Retry that honours Retry-After but never sleeps longer than ``max_wait_s``.

    A server asking us to wait an hour would otherwise hang the run; we wait at most
    ``max_wait_s`` per attempt, so the total wait is bounded by ``total * max_wait_s``. Inside
    a run's time limit (``deadline.deadline_after``) no retry starts whose wait would end
    past it.
    """

    max_wait_s: float = 30.0

    def get_retry_after(self, response):  # type: ignore[no-untyped-def]
        retry_after = super().get_retry_after(response)
        if retry_after is None:
            return None
        return min(retry_after, self.max_wait_s)

    def new(self, **kw):  # type: ignore[no-untyped-def]
        retry = super().new(**kw)
        retry.max_wait_s = self.max_wait_s
        return retry

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

    def to_urllib3(self) -> Retry:
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
        return retry


def _count_retries(response: requests.Response, *args: object, **kwargs: object) -> None:
    note_retries(retries_of(response))


def make_session(
    agent: str,
    policy: RetryPolicy | None = None,
    debug_log: Callable[[str], None] | None = None,
    redactor: Redactor | None = None,
) -> requests.Session:
    """A requests session with the retry policy mounted for http and https.

    With ``debug_log``, every request and its answer are logged in one line each (headers
    included, credential headers and URL user information dropped, and whatever ``redactor``
    knows masked: the secrets of the URL the session serves).
    """
    session = requests.Session()
    adapter = HTTPAdapter(max_retries=(policy or RetryPolicy()).to_urllib3(), pool_maxsize=16)
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
