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

Every request holds a permit of the endpoint's limiter (``endpoint.EndpointFacts.limiter``,
shared by every client of a run) while it is on the wire (``transport.Wire`` sends it, reads
its answer and tells the limiter how it came), and an overload (429, 502-504) halves it; a
stream the server cut because another request arrived (``[DONE]`` without a finish reason
while others were on the wire: llama-cpp-python's server does that) is asked again at once
without streaming, nothing more is streamed to the endpoint in the run (that server never cuts
a whole answer, it queues them), and its limiter learns it again from 1.
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
from react_cli.core.records import CHARS_PER_TOKEN, Api, RetryObserver, Usage
from react_cli.core.wording import plural, quoted
from react_cli.infra.auth import credentials
from react_cli.infra.credentials import redact_url, url_secrets
from react_cli.infra.deadline import NO_DEADLINE, Deadline, Watchdog
from react_cli.infra.http import (
    make_session,
    user_agent,
)
from react_cli.infra.limiter import Permit, Waited
from react_cli.infra.redaction import Redactor
from react_cli.infra.retry import RetryPolicy, retry_after_s
from react_cli.infra.sizelimit import TooLarge, read_capped
from react_cli.infra.untrusted import loads
from react_cli.llm.base import (
    Completion,
    ModelRequest,
    Sampled,
    TextSink,
    discard,
)
from react_cli.llm.endpoint import EndpointFacts
from react_cli.llm.failures import Failures, versionless_hint
from react_cli.llm.parameters import Parameters, forced_failure
from react_cli.llm.sampling import Choices, sample
from react_cli.llm.stream import (
    Answer,
    ShownOnce,
)
from react_cli.llm.toolcalls import assistant_message
from react_cli.llm.transport import DEFAULT_MAX_CHARS, Resend, StreamCut, Wire

MODEL_HINT = "check the model name ('react-cli models' lists them) and the base URL"
URL_HINT = "check the base URL (an OpenAI-compatible one usually ends in /v1)"
LENGTH_SLACK = 4  # an answer is cut at 4x its estimated length: no honest answer reaches it
MAX_MODELS_BYTES = 32 << 20  # aggregators list thousands of models, with descriptions (~2 MB)
OVERLOADED = frozenset({429, 498, 502, 503, 504})
"""Statuses that say the endpoint is busy: its limiter halves."""
T = TypeVar("T")
ChoicesRead = tuple[list[Answer], Usage | None]  # a sampling request's answers and reported usage


class OpenAIClient:
    """``base.Model`` over HTTP; one instance per run (it learns what the endpoint rejects)."""

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
        on_note: Callable[[str], None] | None = None,
        service_tier: str | None = None,
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
        self._log = redact.log(debug_log) or discard  # the notes without --debug
        self._on_retry = on_retry
        self._on_note = on_note or self._log
        self.sample_concurrency = sample_concurrency
        self.facts = facts or EndpointFacts()
        self._wire = Wire(
            session=self._session,
            url=self.url,
            api=self.api,
            auth=self._auth,
            timeout_s=timeout_s,
            max_chars=self.max_chars,
            facts=self.facts,
            say=self._say,
            redact=redact,
            log=self._log,
        )
        self.parameters = Parameters(
            self.api,
            model,
            temperature=temperature,
            max_tokens=max_tokens,
            stream=stream,
            facts=self.facts,
            log=self._log,
            warn=on_warning or self._log,
            service_tier=service_tier,
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
            return self._wire.read(response, dog, permit, request, lambda r: r.read(response), sink)

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
                return self._wire.read(
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
        forced_failures = 0  # 500s answering a forced tool_choice: a refusal once persistent

        def attempt() -> T:
            nonlocal resent, forced_failures
            while True:
                body = body_of()
                permit = self._permit(deadline)
                try:
                    with Watchdog(self.timeout_s, deadline) as dog:
                        response = self._wire.send(
                            self.url, dog, deadline, json=body, permit=permit
                        )
                        with response:
                            if response.status_code < 400:
                                try:
                                    return read(response, dog, permit)
                                except Resend:
                                    resent += 1
                                    continue
                            if response.status_code in OVERLOADED:
                                permit.dropped(self._pause(response))
                            forced_failures += forced_failure(response.status_code, body)
                            persistent = forced_failures > self._policy.retries
                            # raises unless a parameter was dropped: then sent again at once
                            self._drop_rejected(response, body, persistent)
                            resent += 1
                except StreamCut:  # it serves one at a time: learnt again, from 1
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
        once per run, as a note: what was learnt, not a failure; the request cut is asked
        again at once, unstreamed)."""
        if not self.facts.learn_cuts_streams():
            return
        self._on_note(
            f"{redact_url(self.base_url)} ends a stream when another request arrives "
            "(llama-cpp-python's server does): not streaming to it from now on"
        )

    def list_models(self, deadline: Deadline = NO_DEADLINE) -> list[dict[str, Any]]:
        """``GET {base_url}/models``: what the endpoint serves, to find the name for ``-m``;
        failures raise the same errors as a completion."""
        url = _endpoint_url(self.base_url, "models")
        shown = redact_url(url)

        def attempt() -> bytes:
            with Watchdog(self.timeout_s, deadline) as dog:
                response = self._wire.send(url, dog, deadline, accept="application/json")
                with response:
                    if response.status_code >= 400:
                        message = self._say.error_message(response)
                        hint = versionless_hint(self.base_url) or URL_HINT
                        raise self._say.refusal(response, message, shown, hint)
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

    def _drop_rejected(
        self, response: requests.Response, body: dict[str, Any], persistent: bool
    ) -> None:
        """Stop sending a parameter the endpoint rejected, or raise what the status means
        (``persistent``: every try of a forced ``tool_choice`` got a 500)."""
        message = self._say.error_message(response)
        where = f"{self.shown_url} (model {quoted(self.model)})"
        status = response.status_code
        if not self.parameters.drop_rejected(status, message, body, where, persistent):
            hint = versionless_hint(self.base_url) or MODEL_HINT
            raise self._say.refusal(response, message, where, hint)


def _endpoint_url(base_url: str, api: str) -> str:
    """The endpoint of ``api`` (chat, completions or models) under ``base_url``; a query string
    (``?api-version=...``) stays at the end, where the server looks for it."""
    parts = urlsplit(base_url)
    path = parts.path.rstrip("/") + ("/chat/completions" if api == Api.CHAT else f"/{api}")
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))
