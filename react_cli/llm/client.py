"""The model client: one ReAct step from any OpenAI-compatible endpoint (chat or completions).

It builds the request, stops sending ``stop`` or ``stream_options`` once the endpoint rejects
them (for the rest of the run), words every failure as an ``LLMError``, and lists the models
an endpoint serves. Whatever a fresh request may fix (a connection error, 429/5xx, an answer
that breaks off, stalls or is cut after its 200) is retried by the one ``retry.RetryPolicy``
within the run's ``Deadline``; ``stream.AnswerReader`` reads the answer.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import requests
from urllib3.exceptions import HTTPError

from react_cli.deadline import NO_DEADLINE, Deadline, Watchdog
from react_cli.errors import (
    LLMAuthError,
    LLMConnectionError,
    LLMError,
    LLMNotFoundError,
    LLMRequestError,
    LLMResponseError,
    UsageError,
)
from react_cli.http import (
    TIMED_OUT,
    failure_reason,
    is_transient,
    make_session,
    user_agent,
    watched_request,
)
from react_cli.llm.stream import Answer, AnswerReader, BrokeOff, CutOff, Malformed, ShownOnce
from react_cli.records import CHARS_PER_TOKEN, Api, Completion, RetryObserver, TextSink
from react_cli.redaction import Redactor, redact_url, url_secrets
from react_cli.retry import RETRY_STATUSES, GiveUp, Retryable, RetryPolicy
from react_cli.sizelimit import TooLarge, read_capped
from react_cli.untrusted import decode, loads
from react_cli.wording import plural

MAX_MESSAGE_CHARS = 300
MODEL_HINT = "check the model name ('react-cli models' lists them) and the base URL"
URL_HINT = "check the base URL (an OpenAI-compatible one usually ends in /v1)"
LENGTH_SLACK = 4  # an answer is cut at 4x its estimated length: no honest answer reaches it
DEFAULT_MAX_CHARS = 100_000  # when no max_tokens is set (long <think> blocks fit)
BODY_OVERHEAD_BYTES = 64_000  # JSON around the text of a non-streamed answer
ERROR_BODY_BYTES = 65_536  # of an error answer, only this much is read (its message is cut)
EXCERPT_CHARS = 80  # of a malformed answer, shown in the error
_MENTIONS_STOP = re.compile(r"\bstop(?:_sequences?)?\b", re.IGNORECASE)


class OpenAIClient:
    """``records.Model`` over HTTP; one instance per run (it learns what the endpoint rejects)."""

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        api: Api | str = Api.CHAT,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        stream: bool = True,
        timeout_s: float = 120.0,
        policy: RetryPolicy | None = None,
        debug_log: Callable[[str], None] | None = None,
        on_retry: RetryObserver | None = None,
    ) -> None:
        try:
            self.api = Api(api)
        except ValueError:
            raise UsageError(f"unknown API {api!r}: use one of {', '.join(Api)}") from None
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.stream = stream
        self.timeout_s = timeout_s
        self.max_chars = (
            max_tokens * CHARS_PER_TOKEN * LENGTH_SLACK if max_tokens else DEFAULT_MAX_CHARS
        )
        self.url = _endpoint_url(self.base_url, self.api)
        self.shown_url = redact_url(self.url)  # for messages and logs: no credentials, no query
        self.stop_supported = True
        self.stream_options_supported = True
        self._api_key = api_key or None
        self._redact = Redactor([self._api_key, *url_secrets(self.url)])
        self._policy = policy or RetryPolicy()
        self._session = make_session(user_agent(), debug_log, self._redact)
        self._log = self._redact.log(debug_log) or _ignore
        self._on_retry = on_retry

    def close(self) -> None:
        self._session.close()

    def complete(
        self, prompt: str, stop: list[str], *, deadline: Deadline, on_text: TextSink | None = None
    ) -> Completion:
        """One call, retried as the policy allows; see the module docstring."""
        started = time.monotonic()
        sink = ShownOnce(on_text) if on_text else None
        resent = 0  # requests sent again at once without a rejected parameter

        def attempt() -> Answer:
            nonlocal resent
            if sink:
                sink.new_attempt()
            while True:
                body = self._body(prompt, stop)
                with Watchdog(self.timeout_s, deadline) as dog:
                    response = self._send(self.url, dog, deadline, json=body)
                    with response:
                        if response.status_code < 400:
                            return self._read(response, dog, sink)
                        self._drop_rejected(response, body)  # raises unless one was dropped
                        resent += 1

        answer, retries = self._policy.call(attempt, deadline, self._on_retry)
        elapsed = time.monotonic() - started
        return Completion(
            answer.text, answer.usage, elapsed, retries + resent, answer.finish_reason
        )

    def list_models(self, deadline: Deadline = NO_DEADLINE) -> list[dict[str, Any]]:
        """``GET {base_url}/models``: what the endpoint serves, to find the name for ``-m``;
        failures raise the same errors as a completion."""
        url = _endpoint_url(self.base_url, "models")
        shown = redact_url(url)

        def attempt() -> bytes:
            with Watchdog(self.timeout_s, deadline) as dog:
                response = self._send(url, dog, deadline, accept="application/json")
                with response:
                    if response.status_code >= 400:
                        message = self._error_message(response)
                        raise self._refusal(response, message, shown, URL_HINT)
                    try:
                        return read_capped(response.iter_content(65536), self._body_limit())
                    except requests.RequestException as exc:
                        reason = self._reason(exc, dog)
                        raise LLMConnectionError(f"cannot reach {shown}: {reason}") from None
                    except TooLarge as exc:
                        raise LLMResponseError(
                            f"{shown} answered HTTP 200 with a list {exc}"
                        ) from None

        raw, _ = self._policy.call(attempt, deadline, self._on_retry)
        try:
            data = loads(raw)
        except ValueError:
            data = None
        models = data.get("data") if isinstance(data, dict) else None
        if not isinstance(models, list):
            raise LLMResponseError(f"{shown} answered HTTP 200 without a list of models")
        return [model for model in models if isinstance(model, dict)]

    def _body(self, prompt: str, stop: list[str]) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "temperature": self.temperature}
        if self.api is Api.CHAT:
            body["messages"] = [{"role": "user", "content": prompt}]
        else:
            body["prompt"] = prompt
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        if stop and self.stop_supported:
            body["stop"] = stop
        body["stream"] = self.stream
        if self.stream and self.stream_options_supported:
            body["stream_options"] = {"include_usage": True}
        return body

    def _send(
        self,
        url: str,
        dog: Watchdog,
        deadline: Deadline,
        *,
        json: dict[str, Any] | None = None,
        accept: str | None = None,
    ) -> requests.Response:
        """POST ``json`` (or GET) under the watchdog; a failure to connect is retryable."""
        shown = redact_url(url)
        if deadline.within(0.0):
            raise LLMConnectionError(f"the run's time limit ran out before calling {shown}")
        headers = {
            "Content-Type": "application/json",
            "Accept": accept or ("text/event-stream" if self.stream else "application/json"),
        }
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        method = "GET" if json is None else "POST"
        timeout_s = deadline.bound(self.timeout_s)
        try:
            return watched_request(
                self._session, method, url, dog, timeout_s, json=json, headers=headers
            )
        except requests.RequestException as exc:
            reason = self._reason(exc, dog)
            error = LLMConnectionError(f"cannot reach {shown}: {reason}")
            if not is_transient(exc):
                raise error from None
            raise Retryable(reason, _always(error)) from None

    def _read(self, response: requests.Response, dog: Watchdog, sink: ShownOnce | None) -> Answer:
        """The answer of a 200; a cut or broken one is retryable (and never shown twice)."""
        reader = AnswerReader(self.api, self.max_chars, self._body_limit(), dog, sink, self._log)
        try:
            return reader.read(response)
        except CutOff as exc:
            raise Retryable("the stream was cut off", _reissued(self._malformed(exc))) from None
        except Malformed as exc:
            raise self._malformed(exc) from None
        except BrokeOff as exc:
            reason = TIMED_OUT if exc.cause is None else self._reason(exc.cause, dog)
            error = LLMConnectionError(f"the answer from {self.shown_url} broke off: {reason}")
            raise Retryable(reason, _reissued(error)) from None

    def _drop_rejected(self, response: requests.Response, body: dict[str, Any]) -> None:
        """Stop sending a parameter the endpoint rejected, or raise what the status means."""
        status = response.status_code
        message = self._error_message(response)
        if status == 400 and "stream_options" in body and "stream_options" in message:
            self.stream_options_supported = False
            self._log("endpoint rejected stream_options; retrying without it")
            return
        if status == 400 and "stop" in body and _MENTIONS_STOP.search(message):
            self.stop_supported = False
            self._log("endpoint rejected stop; retrying without it (cutting client-side)")
            return
        where = f"{self.shown_url} (model {self.model!r})"
        raise self._refusal(response, message, where, MODEL_HINT)

    def _error_message(self, response: requests.Response) -> str:
        """The server's message from an error answer (at most ``ERROR_BODY_BYTES`` read)."""
        try:
            raw = response.raw.read(ERROR_BODY_BYTES, decode_content=True)
        except (requests.RequestException, OSError, ValueError, HTTPError):
            raw = b""
        return self._clean(_server_message(decode(raw)))

    def _refusal(
        self, response: requests.Response, message: str, where: str, hint: str
    ) -> Exception:
        """What an error status means: a configuration error (401/403, 404 with ``hint``), a
        rejected request, or (429, 5xx) a failure to retry, ending in "kept failing"."""
        status = response.status_code
        said = f": {message}" if message else ""
        if status in (401, 403):
            key = "rejected the API key" if self._api_key else "requires an API key"
            return LLMAuthError(
                f"the endpoint {key} (HTTP {status}) at {where}{said}; "
                "set OPENAI_API_KEY or --api-key"
            )
        if status == 404:
            return LLMNotFoundError(f"not found (HTTP 404) at {where}: {hint}{said}")
        if status < 500 and status != 429:
            return LLMRequestError(
                f"the endpoint rejected the request (HTTP {status}) at {where}{said}"
            )

        def kept_failing(retries: int, out_of_time: bool) -> Exception:
            late = "; no time left to retry within the run's time limit" if out_of_time else ""
            return LLMConnectionError(
                f"{where} kept failing with HTTP {status} after "
                f"{plural(retries, 'retry', 'retries')}{said}{late}"
            )

        if status not in RETRY_STATUSES:
            return kept_failing(0, False)
        return Retryable.for_status(status, response.headers, kept_failing)

    def _body_limit(self) -> int:
        """The most bytes an answer (or one stream event) may take: its text at 4 bytes a
        character (UTF-8) and JSON around it; the text is cut at ``max_chars`` after."""
        return 4 * max(self.max_chars, DEFAULT_MAX_CHARS) + BODY_OVERHEAD_BYTES

    def _malformed(self, exc: Malformed) -> LLMError:
        what = str(exc)
        if exc.excerpt is not None:  # quoted with secrets masked before it is cut
            what += f": {self._redact(exc.excerpt)[:EXCERPT_CHARS]!r}"
        return LLMResponseError(
            f"{self.shown_url} (model {self.model!r}) answered HTTP 200 with {self._clean(what)}"
        )

    def _reason(self, exc: requests.RequestException, dog: Watchdog) -> str:
        if dog.expired:
            return TIMED_OUT
        return failure_reason(exc) or self._clean(f"{type(exc).__name__}: {exc}")

    def _clean(self, text: str) -> str:
        """One short line for an error message, never holding a secret."""
        text = " ".join(self._redact(text).split())
        if len(text) > MAX_MESSAGE_CHARS:
            text = text[: MAX_MESSAGE_CHARS - 1] + "…"
        return text


def _ignore(line: str) -> None:
    """The client's notes without ``--debug``."""


def _always(error: Exception) -> GiveUp:
    """A failure whose message does not change with the retries made."""
    return lambda retries, out_of_time: error


def _reissued(error: LLMError) -> GiveUp:
    """A failure after the 200: its message ends with how often the request was re-issued."""
    return lambda retries, out_of_time: type(error)(
        f"{error} (after {plural(retries, 're-issued request')})"
    )


def _endpoint_url(base_url: str, api: str) -> str:
    """The endpoint of ``api`` (chat, completions or models) under ``base_url``; a query string
    (``?api-version=...``) stays at the end, where the server looks for it."""
    parts = urlsplit(base_url)
    path = parts.path.rstrip("/") + ("/chat/completions" if api == Api.CHAT else f"/{api}")
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


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
