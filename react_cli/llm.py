"""The model client: one ReAct step from any OpenAI-compatible endpoint (chat or completions).

Retries for connection errors and 429/5xx are urllib3's (``http.make_session``); this module
adds only what urllib3 cannot see: failures after a 200 (a stream that breaks off or stalls),
and endpoints that reject ``stop`` or ``stream_options``, which are dropped for the rest of the
run. The text is always cut client-side at an invented ``Observation`` line, so a server that
ignores ``stop`` costs at most the tokens read before the cut, and at ``max_chars`` (derived from
``max_tokens``), so one that ignores ``max_tokens`` cannot make an answer grow without end.
Inside a run's time limit (``deadline.deadline_after``) every request is bounded by the time left.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from typing import Any, NoReturn
from urllib.parse import urlsplit, urlunsplit

import requests
from urllib3.exceptions import HTTPError

from react_cli.deadline import bounded, current_watchdog, time_left, watchdog
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
    RetryPolicy,
    failure_reason,
    make_session,
    retries_of,
    user_agent,
)
from react_cli.parser import ObservationCutter, cut_at_observation
from react_cli.records import Completion, RetryObserver, RetryWait, TextSink, Usage
from react_cli.redaction import Redactor, redact_url, url_secrets
from react_cli.sanitize import decode, loads
from react_cli.sizelimit import TooLarge, capped_lines, read_capped
from react_cli.wording import plural

APIS = ("chat", "completions")
MAX_MESSAGE_CHARS = 300
MODEL_HINT = "check the model name ('react-cli models' lists them) and the base URL"
URL_HINT = "check the base URL (an OpenAI-compatible one usually ends in /v1)"
CONNECT_TIMEOUT_S = 10.0
MAX_CHARS_PER_TOKEN = 16  # a size cap, not an estimate: generous, so no honest answer is cut
DEFAULT_MAX_CHARS = 100_000  # when no max_tokens is set (long <think> blocks fit)
BODY_OVERHEAD_BYTES = 64_000  # JSON around the text of a non-streamed answer
ERROR_BODY_BYTES = 65_536  # of an error answer, only this much is read (its message is cut)
STREAM_READ_BYTES = 512  # per read of a stream: text reaches the screen as it comes
EXCERPT_CHARS = 80  # of a malformed answer, shown in the error
_CUT_OFF = {
    False: "a stream that ended before [DONE]",
    True: (
        "a stream that ended with [DONE] but no finish_reason, i.e. cut off (servers that "
        "answer one request at a time cut concurrent streams: try --concurrency 1 or --no-stream)"
    ),
}
_MENTIONS_STOP = re.compile(r"\bstop(?:_sequences?)?\b", re.IGNORECASE)
_TIMED_OUT = "timed out waiting for the answer"


class _Transient(Exception):
    """A failure after the 200 that a fresh request may fix; ``error`` is raised if none does,
    ``reason`` says it in a few words for the retry notice."""

    def __init__(self, error: LLMError, reason: str) -> None:
        super().__init__(str(error))
        self.error = error
        self.reason = reason


class _Echo:
    """Forwards streamed text to the sink once, even when a broken stream is re-issued.

    A re-issued request usually repeats what was already shown; that prefix is swallowed.
    """

    def __init__(self, sink: TextSink) -> None:
        self._sink = sink
        self._shown = ""
        self._attempt = ""

    def restart(self) -> None:
        self._attempt = ""

    def __call__(self, piece: str) -> None:
        self._attempt += piece
        if self._attempt.startswith(self._shown):
            new, self._shown = self._attempt[len(self._shown) :], self._attempt
        elif self._shown.startswith(self._attempt):
            return
        else:  # the retry diverged from what is on screen: show it as it comes
            new, self._shown = piece, self._attempt
        if new:
            self._sink(new)


class OpenAIClient:
    """``records.Model`` over HTTP; one instance per run (it learns what the endpoint rejects)."""

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        api: str = "chat",
        temperature: float = 0.0,
        max_tokens: int | None = None,
        stream: bool = True,
        timeout_s: float = 120.0,
        policy: RetryPolicy | None = None,
        session: requests.Session | None = None,
        debug_log: Callable[[str], None] | None = None,
        on_retry: RetryObserver | None = None,
    ) -> None:
        if api not in APIS:
            raise UsageError(f"unknown API {api!r}: use one of {', '.join(APIS)}")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api = api
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.stream = stream
        self.timeout_s = timeout_s
        self.max_chars = max_tokens * MAX_CHARS_PER_TOKEN if max_tokens else DEFAULT_MAX_CHARS
        self.url = _endpoint_url(self.base_url, api)
        self.shown_url = redact_url(self.url)  # for messages and logs: no credentials, no query
        self.stop_supported = True
        self.stream_options_supported = True
        self._api_key = api_key or None
        self._redact = Redactor([self._api_key, *url_secrets(self.url)])
        self._policy = policy or RetryPolicy()
        self._owns_session = session is None
        self._session = session or make_session(user_agent(), self._policy, on_retry=on_retry)
        self._debug_log = debug_log
        self._on_retry = on_retry

    def close(self) -> None:
        if self._owns_session:
            self._session.close()

    def complete(self, prompt: str, stop: list[str], on_text: TextSink | None = None) -> Completion:
        """One call, re-issued only for what urllib3 cannot retry; see the module docstring."""
        started = time.monotonic()
        echo = _Echo(on_text) if on_text else None
        retries = reissues = 0
        while True:
            body = self._body(prompt, stop)
            with watchdog(self.timeout_s):  # bounds the whole attempt, however the server sends
                response = self._send(body)
                retries += retries_of(response)
                with response:
                    if response.status_code >= 400:
                        self._drop_rejected(response, body)  # raises unless one was dropped
                        retries += 1
                        continue
                    try:
                        text, usage, finish = self._read(response, echo)
                    except _Transient as failure:
                        error, reason = failure.error, failure.reason
                    else:
                        elapsed = time.monotonic() - started
                        return Completion(text, usage, elapsed, retries, finish)
            wait = self._policy.backoff_s(reissues)
            left = time_left()
            out_of_time = time.monotonic() - started + wait > self._budget_s() or (
                left is not None and wait >= left
            )
            if reissues >= self._policy.retries or out_of_time:
                raise type(error)(f"{error} (after {plural(reissues, 're-issued request')})")
            self._log(f"re-issuing the request after: {error}")
            if self._on_retry is not None:
                self._on_retry(RetryWait(wait, reason, reissues + 1, self._policy.retries))
            time.sleep(wait)
            reissues += 1
            retries += 1
            if echo:
                echo.restart()

    def _body(self, prompt: str, stop: list[str]) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "temperature": self.temperature}
        if self.api == "chat":
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

    def _headers(self) -> dict[str, str]:
        headers = {
            "Content-Type": "application/json",
            "Accept": "text/event-stream" if self.stream else "application/json",
        }
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        return headers

    def _send(self, body: dict[str, Any]) -> requests.Response:
        """POST with urllib3's retries; what still fails to connect is an LLMConnectionError."""
        left = time_left()
        if left is not None and left <= 0:
            raise LLMConnectionError(
                f"the run's time limit ran out before calling {self.shown_url}"
            )
        timeout = bounded(self.timeout_s)
        headers = self._headers()
        if self._debug_log:
            shown = {**self._session.headers, **headers}
            if "Authorization" in shown:
                shown["Authorization"] = "Bearer ***"
            self._log(f"POST {self.shown_url} headers={json.dumps(shown)} body={json.dumps(body)}")
        try:
            response = self._session.post(
                self.url,
                json=body,
                headers=headers,
                stream=True,
                timeout=(min(CONNECT_TIMEOUT_S, timeout), timeout),
            )
        except requests.RequestException as exc:
            raise LLMConnectionError(
                f"cannot reach {self.shown_url}: {self._reason(exc)}"
            ) from None
        headers_in = json.dumps(dict(response.headers))
        self._log(f"HTTP {response.status_code} {self.shown_url} headers={headers_in}")
        return response

    def _drop_rejected(self, response: requests.Response, body: dict[str, Any]) -> None:
        """Stop sending a parameter the endpoint rejected, or raise the matching LLMError."""
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
        self._refuse(response, message, where, MODEL_HINT)

    def _error_message(self, response: requests.Response) -> str:
        """The server's message from an error answer (at most ``ERROR_BODY_BYTES`` read)."""
        try:
            raw = response.raw.read(ERROR_BODY_BYTES, decode_content=True)
        except (requests.RequestException, OSError, ValueError, HTTPError):
            raw = b""
        return self._clean(_server_message(decode(raw)))

    def _refuse(self, response: requests.Response, message: str, where: str, hint: str) -> NoReturn:
        """The LLMError for an error status: a configuration error (401/403, 404 with
        ``hint``), a rejected request, or a server that kept failing."""
        status = response.status_code
        said = f": {message}" if message else ""
        if status in (401, 403):
            key = "rejected the API key" if self._api_key else "requires an API key"
            raise LLMAuthError(
                f"the endpoint {key} (HTTP {status}) at {where}{said}; "
                "set OPENAI_API_KEY or --api-key"
            )
        if status == 404:
            raise LLMNotFoundError(f"not found (HTTP 404) at {where}: {hint}{said}")
        if status < 500 and status != 429:
            raise LLMRequestError(
                f"the endpoint rejected the request (HTTP {status}) at {where}{said}"
            )
        retried = retries_of(response)
        if retried < self._policy.retries and time_left() is not None:
            said += "; no time left to retry within the run's time limit"
        raise LLMConnectionError(
            f"{where} kept failing with HTTP {status} after "
            f"{plural(retried, 'retry', 'retries')}{said}"
        )

    def list_models(self) -> list[dict[str, Any]]:
        """``GET {base_url}/models``: what the endpoint serves, to find the name for ``-m``;
        failures raise the same errors as a completion."""
        url = _endpoint_url(self.base_url, "models")
        shown = redact_url(url)
        headers = {**self._headers(), "Accept": "application/json"}
        try:
            with watchdog(self.timeout_s):
                response = self._session.get(
                    url,
                    headers=headers,
                    stream=True,
                    timeout=(min(CONNECT_TIMEOUT_S, self.timeout_s), self.timeout_s),
                )
                with response:
                    if response.status_code >= 400:
                        self._refuse(response, self._error_message(response), shown, URL_HINT)
                    raw = read_capped(response.iter_content(chunk_size=65536), self._body_limit())
        except requests.RequestException as exc:
            raise LLMConnectionError(f"cannot reach {shown}: {self._reason(exc)}") from None
        except TooLarge as exc:
            raise LLMResponseError(f"{shown} answered HTTP 200 with a list {exc}") from None
        try:
            data = loads(raw)
        except ValueError:
            data = None
        models = data.get("data") if isinstance(data, dict) else None
        if not isinstance(models, list):
            raise LLMResponseError(f"{shown} answered HTTP 200 without a list of models")
        return [model for model in models if isinstance(model, dict)]

    def _read(
        self, response: requests.Response, echo: _Echo | None
    ) -> tuple[str, Usage | None, str | None]:
        if "text/event-stream" in response.headers.get("Content-Type", ""):
            return self._read_stream(response, echo)
        try:  # also when streaming was asked for: some servers answer with one JSON body
            raw = read_capped(response.iter_content(chunk_size=65536), self._body_limit())
        except TooLarge as exc:  # far larger than any answer needs (the text is cut after)
            raise self._malformed(f"a body {exc}") from None
        except requests.RequestException as exc:
            raise _Transient(self._broke_off(exc), self._reason(exc)) from None
        if _cut_by_watchdog():  # a body delimited by the close the watchdog caused
            raise _Transient(self._broke_off(None), _TIMED_OUT)
        try:
            data = loads(raw)
        except ValueError:
            raise self._malformed(f"malformed JSON: {self._excerpt(decode(raw))}") from None
        choice = _first_choice(data)
        if choice is None:
            raise self._malformed("no choices")
        if self.api == "chat":
            content = _field(choice.get("message"), "content")
        else:
            content = choice.get("text")
        content = content if isinstance(content, str) else ""
        text = cut_at_observation(content)
        finish = "stop" if text != content else _finish_reason(choice)
        if len(text) > self.max_chars:
            text, finish = text[: self.max_chars], "length"
            self._log(f"answer longer than {self.max_chars} characters; cut there")
        if echo and text:
            echo(text)
        return text, _usage(data), finish

    def _read_stream(
        self, response: requests.Response, echo: _Echo | None
    ) -> tuple[str, Usage | None, str | None]:
        """Read SSE until [DONE] or until the cutter sees an invented Observation line.

        Keep-alive comments, empty deltas and chunks without choices are read and skipped; the
        watchdog (``deadline.watchdog``) ends a stream that sends only those, or one byte at a
        time, when the attempt's time is up.
        """
        cutter = ObservationCutter()
        usage: Usage | None = None
        finish, done, saw_choice = None, False, False
        received = shown = 0
        try:
            lines = capped_lines(response.iter_content(STREAM_READ_BYTES), self._body_limit())
            for line in lines:
                if _cut_by_watchdog():  # a server flooding keep-alives never blocks a read
                    break
                payload = _sse_data(line)
                if payload is None:
                    continue
                if payload == "[DONE]":
                    done = True
                    break
                try:
                    chunk = loads(payload)
                except ValueError:
                    raise self._malformed(
                        f"malformed stream chunk: {self._excerpt(payload)}"
                    ) from None
                if isinstance(chunk, dict) and chunk.get("usage"):
                    usage = _usage(chunk) or usage
                choice = _first_choice(chunk)
                if choice is None:
                    continue
                saw_choice = True
                finish = _finish_reason(choice) or finish
                piece = self._piece(choice)
                received += len(piece)
                released = cutter.feed(piece)[: max(0, self.max_chars - shown)]
                shown += len(released)
                if echo and released:
                    echo(released)
                if cutter.done:  # the rest is invented; closing the response stops generation
                    finish, done = "stop", True
                    break
                if received > self.max_chars:  # the server ignores max_tokens
                    self._log(f"answer longer than {self.max_chars} characters; cut there")
                    finish, done = "length", True
                    break
        except TooLarge as exc:
            raise self._malformed(f"a stream event {exc}") from None
        except requests.RequestException as exc:
            raise _Transient(self._broke_off(exc), self._reason(exc)) from None
        if _cut_by_watchdog() and not done:
            raise _Transient(self._broke_off(None), _TIMED_OUT)
        if finish is None:  # every complete answer names why it ended
            raise _Transient(self._malformed(_CUT_OFF[done]), "the stream was cut off")
        if not saw_choice:
            raise self._malformed("a stream without choices")
        tail = cutter.flush()[: max(0, self.max_chars - shown)]
        if echo and tail:
            echo(tail)
        return cutter.text[: self.max_chars], usage, finish

    def _body_limit(self) -> int:
        """The most bytes an answer (or one stream event) may take: its text at 4 bytes a
        character (UTF-8) and JSON around it; the text is cut at ``max_chars`` after."""
        return 4 * max(self.max_chars, DEFAULT_MAX_CHARS) + BODY_OVERHEAD_BYTES

    def _piece(self, choice: dict[str, Any]) -> str:
        """The visible text of one chunk; reasoning_content/reasoning fields are ignored."""
        delta = choice.get("delta")
        piece = _field(delta, "content") if self.api == "chat" else choice.get("text")
        return piece if isinstance(piece, str) else ""

    def _budget_s(self) -> float:
        """No re-issue starts once a call has run this long."""
        return self.timeout_s * (self._policy.retries + 1)

    def _malformed(self, what: str) -> LLMResponseError:
        return LLMResponseError(
            f"{self.shown_url} (model {self.model!r}) answered HTTP 200 with {self._clean(what)}"
        )

    def _broke_off(self, exc: requests.RequestException | None) -> LLMConnectionError:
        """The answer stopped coming: ``exc`` says why, or (None) the watchdog cut it."""
        reason = _TIMED_OUT if exc is None else self._reason(exc)
        return LLMConnectionError(f"the answer from {self.shown_url} broke off: {reason}")

    def _reason(self, exc: requests.RequestException) -> str:
        if _cut_by_watchdog():
            return _TIMED_OUT
        return failure_reason(exc) or self._clean(f"{type(exc).__name__}: {exc}")

    def _excerpt(self, text: str) -> str:
        """The start of an unusable answer, quoted, with secrets masked before it is cut."""
        return repr(self._redact(text)[:EXCERPT_CHARS])

    def _clean(self, text: str) -> str:
        """One short line for an error message, never holding a secret."""
        text = " ".join(self._redact(text).split())
        if len(text) > MAX_MESSAGE_CHARS:
            text = text[: MAX_MESSAGE_CHARS - 1] + "…"
        return text

    def _log(self, line: str) -> None:
        if self._debug_log:
            self._debug_log(self._redact(line))


def _cut_by_watchdog() -> bool:
    """Whether the current attempt's watchdog has cut it (its time is up)."""
    dog = current_watchdog()
    return dog is not None and dog.expired


def _endpoint_url(base_url: str, api: str) -> str:
    """The endpoint of ``api`` (chat, completions or models) under ``base_url``; a query string
    (``?api-version=...``) stays at the end, where the server looks for it."""
    parts = urlsplit(base_url)
    path = parts.path.rstrip("/") + ("/chat/completions" if api == "chat" else f"/{api}")
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


def _first_choice(data: Any) -> dict[str, Any] | None:
    choices = data.get("choices") if isinstance(data, dict) else None
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        return choices[0]
    return None


def _field(data: Any, key: str) -> Any:
    """``data[key]`` when ``data`` is an object holding it, else None (servers send odd shapes)."""
    return data.get(key) if isinstance(data, dict) else None


def _finish_reason(choice: dict[str, Any]) -> str | None:
    reason = choice.get("finish_reason")
    return reason if isinstance(reason, str) and reason else None


def _usage(data: dict[str, Any]) -> Usage | None:
    """The reported usage; None when there is none (or it counts nothing)."""
    usage = Usage.from_dict(data["usage"]) if isinstance(data.get("usage"), dict) else None
    return usage if usage is not None and usage.total_tokens else None


def _sse_data(line: bytes) -> str | None:
    """The payload of an SSE ``data:`` line; None for blank lines, comments and other fields."""
    text = decode(line).strip()
    if not text.startswith("data:"):
        return None
    return text[len("data:") :].strip()
