"""The model client: one ReAct step from any OpenAI-compatible endpoint (chat or completions).

It sends the bodies ``parameters.Parameters`` builds (which drops what the endpoint rejects:
``stop``, ``stream_options``, a grammar, a forced ``tool_choice``; and says that an endpoint
refusing ``tools`` wants ``--protocol text``), stops streaming tool requests after an empty
stream, raises an ``LLMError`` (worded by
``failures``) for what it cannot fix, draws several completions at once for the sampling
methods (``sampling``), and lists the models an endpoint serves. Whatever a fresh request may
fix (a connection error, 429/5xx, an answer that breaks off, stalls or is cut after its 200)
is retried by the one ``retry.RetryPolicy`` within the run's ``Deadline``;
``stream.AnswerReader`` reads the answer.

Every request holds a permit of the endpoint's limiter (``sampling.EndpointFacts.limiter``,
shared by every client of a run) while it is on the wire, and tells it how the answer came: the
time to its first token when streamed, the time per output token when not; an overload (429,
502-504, a timeout); or a stream the server cut because another request arrived (``[DONE]``
without a finish reason while others were on the wire: llama-cpp-python's server does that).
That request is asked again at once without streaming, nothing more is streamed to the endpoint
in the run (that server never cuts a whole answer, it queues them), and its limiter learns it
again from 1.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import requests

from react_cli.core.errors import (
    LLMConnectionError,
    LLMResponseError,
    UsageError,
)
from react_cli.core.records import CHARS_PER_TOKEN, Api, RetryObserver, RetryWait, Usage
from react_cli.core.wording import plural, quoted
from react_cli.infra.deadline import NO_DEADLINE, Deadline, Watchdog
from react_cli.infra.http import (
    TIMED_OUT,
    credentials,
    failure_reason,
    is_transient,
    make_session,
    user_agent,
    watched_request,
)
from react_cli.infra.limiter import Permit, Waited
from react_cli.infra.redaction import Redactor, redact_url, url_secrets
from react_cli.infra.retry import Retryable, RetryPolicy, retry_after_s
from react_cli.infra.sizelimit import TooLarge, read_capped
from react_cli.infra.untrusted import loads
from react_cli.llm.base import (
    Completion,
    ModelRequest,
    Sampled,
    TextSink,
)
from react_cli.llm.failures import Failures, always, reissued
from react_cli.llm.parameters import GRAMMAR, STREAMED_TOOLS, Parameters
from react_cli.llm.sampling import Choices, EndpointFacts, sample
from react_cli.llm.stream import (
    Answer,
    AnswerReader,
    BrokeOff,
    CutOff,
    EmptyStream,
    Malformed,
    ShownOnce,
)
from react_cli.llm.toolcalls import assistant_message

MODEL_HINT = "check the model name ('react-cli models' lists them) and the base URL"
URL_HINT = "check the base URL (an OpenAI-compatible one usually ends in /v1)"
LENGTH_SLACK = 4  # an answer is cut at 4x its estimated length: no honest answer reaches it
DEFAULT_MAX_CHARS = 100_000  # when no max_tokens is set (long <think> blocks fit)
BODY_OVERHEAD_BYTES = 64_000  # JSON around the text of a non-streamed answer
MAX_MODELS_BYTES = 32 << 20  # aggregators list thousands of models, with descriptions (~2 MB)
OVERLOADED = frozenset({429, 502, 503, 504})
"""Statuses that say the endpoint is busy: its limiter halves."""
PROMPT_UNITS = 32
"""Reading the prompt, in output tokens' time (a whole answer's delay is per token of its
answer and of this): a short answer's time is mostly its prompt's."""
STREAM_CUT = "the stream was cut by another request"
T = TypeVar("T")
ChoicesRead = tuple[list[Answer], Usage | None]  # a sampling request's answers and reported usage


class _StreamCut(Exception):
    """A stream the server cut while other requests were on the wire: ask again unstreamed."""


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
        sample_concurrency: int = 4,
        facts: EndpointFacts | None = None,
        on_warning: Callable[[str], None] | None = None,
    ) -> None:
        try:
            self.api = Api(api)
        except ValueError:
            raise UsageError(f"unknown API {quoted(api)}: use one of {', '.join(Api)}") from None
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.timeout_s = timeout_s
        self.max_chars = (
            max_tokens * CHARS_PER_TOKEN * LENGTH_SLACK if max_tokens else DEFAULT_MAX_CHARS
        )
        self.url = _endpoint_url(self.base_url, self.api)
        self.shown_url = redact_url(self.url)  # for messages and logs: no credentials, no query
        self._api_key = api_key or None
        self._auth = credentials(self.url, self._api_key)
        redact = Redactor([self._api_key, *url_secrets(self.url)])
        self._redact = redact  # what the endpoint answers is masked too: it may echo the key
        self._say = Failures(self.shown_url, model, self._api_key is not None, redact)
        self._policy = policy or RetryPolicy()
        self._session = make_session(user_agent(), debug_log, redact)
        self._log = redact.log(debug_log) or _ignore
        self._on_retry = on_retry
        self.sample_concurrency = sample_concurrency
        self.facts = facts or EndpointFacts()
        self.parameters = Parameters(
            self.api,
            model,
            temperature=temperature,
            max_tokens=max_tokens,
            stream=stream,
            facts=self.facts,
            log=self._log,
            warn=on_warning or self._log,
        )

    @property
    def temperature(self) -> float:
        """The run's temperature (the cache keeps only calls at 0)."""
        return self.parameters.temperature

    def close(self) -> None:
        self._session.close()

    def complete(
        self, request: ModelRequest, *, deadline: Deadline, on_text: TextSink | None = None
    ) -> Completion:
        """One call, retried as the policy allows; see the module docstring."""
        started = time.monotonic()
        sink = ShownOnce(on_text) if on_text else None

        def read(response: requests.Response, dog: Watchdog, permit: Permit) -> Answer:
            if sink:
                sink.new_attempt()
            return self._read(response, dog, permit, request, lambda r: r.read(response), sink)

        answer, retries = self._exchange(lambda: self.parameters.body(request), read, deadline)
        elapsed = time.monotonic() - started
        calls = answer.tool_calls
        message = assistant_message(answer.text, calls) if request.tools else None
        return Completion(
            answer.text, answer.usage, elapsed, retries, answer.finish_reason, calls, message
        )

    def sample(
        self, request: ModelRequest, *, n: int, temperature: float, deadline: Deadline
    ) -> Sampled:
        """``n`` completions at ``temperature``, not streamed (see ``sampling``)."""

        def ask(count: int) -> Choices:
            started = time.monotonic()

            def body() -> dict[str, Any]:
                return self.parameters.body(request, temperature=temperature, n=count)

            def read(response: requests.Response, dog: Watchdog, permit: Permit) -> ChoicesRead:
                return self._read(
                    response, dog, permit, request, lambda r: r.read_choices(response), None, count
                )

            (answers, usage), retries = self._exchange(body, read, deadline)
            return Choices(answers, usage, time.monotonic() - started, retries)

        prompt = request.prompt
        return sample(ask, prompt, n, concurrency=self.sample_concurrency, facts=self.facts)

    def _exchange(
        self,
        body_of: Callable[[], dict[str, Any]],
        read: Callable[[requests.Response, Watchdog, Permit], T],
        deadline: Deadline,
    ) -> tuple[T, int]:
        """One request, retried as the policy allows, and sent again at once without a
        parameter the endpoint rejected (or unstreamed, when another request cut its stream);
        its answer and the requests made again."""
        resent = 0

        def attempt() -> T:
            nonlocal resent
            while True:
                body = body_of()
                permit = self._permit(deadline)
                try:
                    with Watchdog(self.timeout_s, deadline) as dog:
                        response = self._send(self.url, dog, deadline, json=body, permit=permit)
                        with response:
                            if response.status_code < 400:
                                try:
                                    return read(response, dog, permit)
                                except _Resend:
                                    resent += 1
                                    continue
                            if response.status_code in OVERLOADED:
                                permit.dropped(self._pause(response))
                            self._drop_rejected(response, body)  # raises unless one was dropped
                            resent += 1
                except _StreamCut:  # it serves one at a time: learnt again, from 1
                    permit.restarted()
                    resent += 1
                    self._stop_streaming()
                finally:
                    permit.release()

        answer, retries = self._policy.call(attempt, deadline, self._on_retry)
        return answer, retries + resent

    def _permit(self, deadline: Deadline) -> Permit:
        """A permit of the endpoint's limiter, in turn, before the run's time runs out."""
        try:
            return self.facts.limiter.acquire(deadline)
        except Waited:
            raise LLMConnectionError(
                f"the run's time limit ran out while waiting to call {self.shown_url} "
                f"({plural(self.facts.limiter.level, 'request')} at once)"
            ) from None

    def _pause(self, response: requests.Response) -> float | None:
        """The wait an overloaded endpoint's ``Retry-After`` asks of every request to it,
        capped as the retry policy caps it."""
        wait = retry_after_s(response.headers.get("Retry-After"))
        return None if wait is None else min(wait, self._policy.max_retry_after_s)

    def _stop_streaming(self) -> None:
        """The endpoint cuts streams when another request arrives: stream no more to it (said
        once per run, as a retry notice)."""
        if not self.facts.learn_cuts_streams():
            return
        said = f"{self.shown_url} ends a stream when another request arrives: not streaming to it"
        self._log(said)
        if self._on_retry is not None:
            self._on_retry(RetryWait(0.0, f"{STREAM_CUT} ({said})", 1, 1))

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
                        message = self._say.error_message(response)
                        raise self._say.refusal(response, message, shown, URL_HINT)
                    try:
                        return read_capped(response.iter_content(65536), MAX_MODELS_BYTES)
                    except requests.RequestException as exc:
                        reason = self._say.reason(exc, dog)
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
        return [self._redact.json(model) for model in models if isinstance(model, dict)]

    def request_identity(
        self, request: ModelRequest, *, temperature: float | None = None, n: int = 0
    ) -> dict[str, Any]:
        """What identifies a call (the cache's key): the endpoint without credentials or query
        string, the API, and the whole body as first sent, never how it is carried (streamed
        or not), never a secret."""
        body = self.parameters.identity(request, temperature=temperature, n=n)
        return {"endpoint": self.shown_url, "api": str(self.api), "body": body}

    def _send(
        self,
        url: str,
        dog: Watchdog,
        deadline: Deadline,
        *,
        json: dict[str, Any] | None = None,
        accept: str | None = None,
        permit: Permit | None = None,
    ) -> requests.Response:
        """POST ``json`` (or GET) under the watchdog; a failure to connect is retryable (a
        timeout tells ``permit`` the endpoint is overloaded)."""
        shown = redact_url(url)
        if deadline.within(0.0):
            raise LLMConnectionError(f"the run's time limit ran out before calling {shown}")
        streamed = bool(json and json.get("stream"))
        headers = {
            "Content-Type": "application/json",
            "Accept": accept or ("text/event-stream" if streamed else "application/json"),
        }
        method = "GET" if json is None else "POST"
        timeout_s = deadline.bound(self.timeout_s)
        try:
            return watched_request(
                self._session,
                method,
                url,
                dog,
                timeout_s,
                json=json,
                headers=headers,
                auth=self._auth,
            )
        except requests.RequestException as exc:
            reason = self._say.reason(exc, dog)
            if json is not None and GRAMMAR in json and failure_reason(exc) in _HUNG_UP:
                raise LLMConnectionError(
                    f"{shown} closed the connection on a request with a grammar ({reason}): "
                    "llama.cpp's server crashes on a grammar it cannot parse; run without "
                    "--constrain and report the grammar's step (--debug shows it)"
                ) from None
            error = LLMConnectionError(f"cannot reach {shown}: {reason}")
            if not is_transient(exc):
                raise error from None
            if permit is not None and reason == TIMED_OUT:
                permit.dropped()
            raise Retryable(reason, always(error)) from None

    def _read(
        self,
        response: requests.Response,
        dog: Watchdog,
        permit: Permit,
        request: ModelRequest,
        read: Callable[[AnswerReader], T],
        sink: ShownOnce | None,
        choices: int = 1,
    ) -> T:
        """The answer of a 200 (of ``choices`` completions), cut as ``request`` says, its
        timing told to ``permit``; a cut or broken one is retryable (and never shown twice)."""
        limit = self._body_limit() * choices
        reader = AnswerReader(
            self.api, self.max_chars, limit, dog, sink, self._log, self._redact, request.cutter
        )
        try:
            answer = read(reader)
        except EmptyStream as exc:
            response.raw.close()  # the server failed after its headers: never reuse the socket
            if request.tools and self.facts.refuse(STREAMED_TOOLS):
                self._log("a streamed tool request got an empty stream; asking without streaming")
                raise _Resend from None
            raise Retryable("the stream was cut off", reissued(self._say.malformed(exc))) from None
        except CutOff as exc:
            if permit.overlapped:  # only a stream is cut off
                raise _StreamCut from None
            raise Retryable("the stream was cut off", reissued(self._say.malformed(exc))) from None
        except Malformed as exc:
            raise self._say.malformed(exc) from None
        except BrokeOff as exc:
            reason = TIMED_OUT if exc.cause is None else self._say.reason(exc.cause, dog)
            if reason == TIMED_OUT:
                permit.dropped()
            error = LLMConnectionError(f"the answer from {self.shown_url} broke off: {reason}")
            raise Retryable(reason, reissued(error)) from None
        _timed(permit, reader, choices)
        return answer

    def _drop_rejected(self, response: requests.Response, body: dict[str, Any]) -> None:
        """Stop sending a parameter the endpoint rejected, or raise what the status means."""
        message = self._say.error_message(response)
        where = f"{self.shown_url} (model {quoted(self.model)})"
        if not self.parameters.drop_rejected(response.status_code, message, body, where):
            raise self._say.refusal(response, message, where, MODEL_HINT)

    def _body_limit(self) -> int:
        """The most bytes an answer (or one stream event) may take: its text at 4 bytes a
        character (UTF-8) and JSON around it; the text is cut at ``max_chars`` after."""
        return 4 * max(self.max_chars, DEFAULT_MAX_CHARS) + BODY_OVERHEAD_BYTES


class _Resend(Exception):
    """The answer showed the request must be sent again at once, changed (see ``facts``)."""


_HUNG_UP = frozenset(
    {"the server closed the connection without answering", "the connection was reset"}
)


def _timed(permit: Permit, reader: AnswerReader, choices: int) -> None:
    """Tell ``permit`` how long the answer took: to its first token when streamed (which is
    the wait in the server's queue and the prompt's reading), else per output token of a
    choice and ``PROMPT_UNITS`` (so a long answer is no queue)."""
    if reader.first_at is not None:
        permit.done("stream", reader.first_at - permit.sent)
        return
    usage = reader.usage
    tokens = usage.completion_tokens if usage is not None else reader.chars // CHARS_PER_TOKEN
    units = tokens / max(1, choices) + PROMPT_UNITS
    permit.done("whole", (time.monotonic() - permit.sent) / units, units)


def _ignore(line: str) -> None:
    """The client's notes without ``--debug``."""


def _endpoint_url(base_url: str, api: str) -> str:
    """The endpoint of ``api`` (chat, completions or models) under ``base_url``; a query string
    (``?api-version=...``) stays at the end, where the server looks for it."""
    parts = urlsplit(base_url)
    path = parts.path.rstrip("/") + ("/chat/completions" if api == Api.CHAT else f"/{api}")
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))
