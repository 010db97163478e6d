"""How the model endpoint's failures are said: one short line each, never holding a secret.

What an error status means (a key or a model to fix, a rejected request, a server that kept
failing), an unusable answer, a broken connection.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

import requests
from urllib3.exceptions import HTTPError

from react_cli.core.errors import (
    LLMAuthError,
    LLMConnectionError,
    LLMError,
    LLMNotFoundError,
    LLMRequestError,
    LLMResponseError,
)
from react_cli.core.wording import plural, quoted
from react_cli.infra.credentials import redact_url
from react_cli.infra.deadline import Watchdog
from react_cli.infra.http import TIMED_OUT, failure_reason
from react_cli.infra.redaction import Redactor
from react_cli.infra.retry import RETRY_STATUSES, GiveUp, Retryable, retry_after_s
from react_cli.infra.untrusted import decode, loads
from react_cli.llm.stream import Malformed

MAX_MESSAGE_CHARS = 300
ERROR_BODY_BYTES = 65_536  # of an error answer, only this much is read (its message is cut)
EXCERPT_CHARS = 80  # of a malformed answer, shown in the error
CAPACITY_STATUS = 498
"""Groq's flex tier out of capacity ("capacity exceeded"): a busy tier, not a failure."""
_UNAVAILABLE = re.compile(r"resource[ _]unavailable|capacity", re.IGNORECASE)
CAPACITY_RETRIES = 30
"""Retries of a flex tier's "resource unavailable" (backoff capped as every retry's): flex
requests wait for capacity for minutes rather than fail their question."""


@dataclass(frozen=True)
class Failures:
    """Words the failures of one endpoint (``shown_url``, ``model``), masking what
    ``redact`` knows (the API key, the URL's credentials and query)."""

    shown_url: str
    model: str
    has_key: bool
    redact: Redactor

    def error_message(self, response: requests.Response) -> str:
        """The server's message from an error answer (at most ``ERROR_BODY_BYTES`` read)."""
        try:
            raw = response.raw.read(ERROR_BODY_BYTES, decode_content=True)
        except (requests.RequestException, OSError, ValueError, HTTPError):
            raw = b""
        return self.clean(_server_message(decode(raw)))

    def refusal(
        self, response: requests.Response, message: str, where: str, hint: str
    ) -> Exception:
        """What an error status means: a configuration error (401/403, 404 with ``hint``), a
        rejected request, or (429, 5xx) a failure to retry, ending in "kept failing"."""
        status = response.status_code
        said = f": {message}" if message else ""
        if status in (401, 403):
            key = "rejected the API key" if self.has_key else "requires an API key"
            return LLMAuthError(
                f"the endpoint {key} (HTTP {status}) at {where}{said}; "
                "set OPENAI_API_KEY or --api-key"
            )
        if status == 404:
            return LLMNotFoundError(f"not found (HTTP 404) at {where}: {hint}{said}")
        if busy_tier(status, message):
            return _busy(status, response, where, said)
        if status < 500 and status != 429:
            return LLMRequestError(
                f"the endpoint rejected the request (HTTP {status}) at {where}{said}"
            )

        def kept_failing(retries: int, out_of_time: bool) -> Exception:
            return _given_up(f"{where} kept failing with HTTP {status}", retries, said, out_of_time)

        if status not in RETRY_STATUSES:
            return kept_failing(0, False)
        return Retryable.for_status(status, response.headers, kept_failing)

    def malformed(self, exc: Malformed) -> LLMError:
        """An answer that is not a usable completion, with an excerpt of it if there is one."""
        what = str(exc)
        if exc.excerpt is not None:  # quoted with secrets masked before it is cut
            what += f": {self.redact(exc.excerpt)[:EXCERPT_CHARS]!r}"
        where = f"{self.shown_url} (model {quoted(self.model)})"
        return LLMResponseError(f"{where} answered HTTP 200 with {self.clean(what)}")

    def reason(self, exc: requests.RequestException, dog: Watchdog) -> str:
        """Why a request failed, in a few words (the watchdog's cut is a timeout)."""
        if dog.expired:
            return TIMED_OUT
        return failure_reason(exc) or self.clean(f"{type(exc).__name__}: {exc}")

    def clean(self, text: str) -> str:
        """One short line for an error message, never holding a secret."""
        text = " ".join(self.redact(text).split())
        if len(text) > MAX_MESSAGE_CHARS:
            text = text[: MAX_MESSAGE_CHARS - 1] + "…"
        return text


LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1"})
_VERSION = re.compile(r"/v\d+(?:/|$)")  # /v1, /v1beta/...: where OpenAI-compatible APIs live


def versionless_hint(base_url: str) -> str | None:
    """For a 404 from a base URL without a version in its path (``http://host:8080``): the
    ``/v1`` an OpenAI-compatible server serves its API under."""
    try:
        parts = urlsplit(base_url)
    except ValueError:
        return None
    if _VERSION.search(parts.path):
        return None
    with_v1 = redact_url(urlunsplit(parts._replace(path=parts.path.rstrip("/") + "/v1")))
    return (
        f"the base URL has no /v1: try --base-url {with_v1} (then check the model name: "
        "'react-cli models' lists them)"
    )


def unreachable_hint(url: str) -> str:
    """What to do about an endpoint whose name does not resolve or that refused to connect:
    start the server (one on this machine), or use one that is (offline, behind a firewall)."""
    host = (urlsplit(url).hostname or "").lower()
    if host in LOOPBACK or host.endswith(".localhost"):
        return "is the model server started? ('react-cli models' lists what it serves)"
    return (
        "offline or behind a firewall? a model server on this machine needs no network: "
        "--base-url http://127.0.0.1:8080/v1"
    )


def always(error: LLMError) -> GiveUp:
    """A failure whose message does not change with the retries made (it still counts them)."""

    def give_up(retries: int, out_of_time: bool) -> LLMError:
        error.retries = retries
        return error

    return give_up


def reissued(error: LLMError) -> GiveUp:
    """A failure after the 200: its message ends with how often the request was re-issued."""
    return lambda retries, out_of_time: type(error)(
        f"{error} (after {plural(retries, 're-issued request')})", retries
    )


def busy_tier(status: int, message: str) -> bool:
    """Whether an error answer says the service tier has no capacity now (flex's 429
    "resource unavailable", Groq's 498): worth waiting for, many times over."""
    return status == CAPACITY_STATUS or (status == 429 and bool(_UNAVAILABLE.search(message)))


def _busy(status: int, response: requests.Response, where: str, said: str) -> Retryable:
    """A busy tier's answer, retried with backoff up to :data:`CAPACITY_RETRIES` times."""

    def still_busy(retries: int, out_of_time: bool) -> Exception:
        return _given_up(f"{where} had no capacity (HTTP {status})", retries, said, out_of_time)

    wait = retry_after_s(response.headers.get("Retry-After"))
    return Retryable(
        f"HTTP {status}: no capacity", still_busy, retry_after_s=wait, max_retries=CAPACITY_RETRIES
    )


def _server_message(text: str) -> str:
    """The human part of an error body: OpenAI ``error.message``, vLLM ``message``, or raw."""
    try:
        data = loads(text)
    except ValueError:
        return text
    error = data.get("error", data) if isinstance(data, dict) else data
    if isinstance(error, dict):
        error = error.get("message") or error.get("detail") or error
    return error if isinstance(error, str) else text


def _given_up(what: str, retries: int, said: str, out_of_time: bool) -> LLMConnectionError:
    """An answer retried until the retries or the run's time ran out: ``what`` happened after
    how many retries, what the endpoint said, and whether the time limit ended it."""
    late = "; no time left to retry within the run's time limit" if out_of_time else ""
    return LLMConnectionError(
        f"{what} after {plural(retries, 'retry', 'retries')}{said}{late}", retries
    )
