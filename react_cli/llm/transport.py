"""The wire under the model client: one request sent under its watchdog, and the answer of a 200
read, its timing told to the endpoint's limiter.

What a fresh request may fix (a connection that fails, an answer that breaks off, stalls or is
cut after its 200) is a ``retry.Retryable`` for the client's retry policy; a stream the server
cut because another request arrived while others were on the wire is :class:`StreamCut` (the
client asks again unstreamed), an empty stream to a tool request :class:`Resend` (asked again
at once, unstreamed). The limiter learns how each answer came (``Permit.done``): the time to
its first token when streamed, the time per output token when not; a timeout is an overload
(``Permit.dropped``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

import requests

from react_cli.core.errors import LLMConnectionError
from react_cli.core.records import CHARS_PER_TOKEN, Api
from react_cli.infra.credentials import redact_url
from react_cli.infra.deadline import Deadline, Watchdog
from react_cli.infra.http import (
    TIMED_OUT,
    failure_reason,
    is_transient,
    is_unreachable,
    watched_request,
)
from react_cli.infra.limiter import Permit
from react_cli.infra.redaction import Redactor
from react_cli.infra.retry import Retryable
from react_cli.llm.base import ModelRequest
from react_cli.llm.endpoint import EndpointFacts
from react_cli.llm.failures import Failures, always, reissued, unreachable_hint
from react_cli.llm.parameters import GRAMMAR, STREAMED_TOOLS
from react_cli.llm.stream import AnswerReader, BrokeOff, CutOff, EmptyStream, Malformed, ShownOnce

DEFAULT_MAX_CHARS = 100_000  # when no max_tokens is set (long <think> blocks fit)
BODY_OVERHEAD_BYTES = 64_000  # JSON around the text of a non-streamed answer
PROMPT_UNITS = 32
"""Reading the prompt, in output tokens' time (a whole answer's delay is per token of its
answer and of this): a short answer's time is mostly its prompt's."""
T = TypeVar("T")
_HUNG_UP = frozenset(
    {"the server closed the connection without answering", "the connection was reset"}
)


class StreamCut(Exception):
    """A stream the server cut while other requests were on the wire: ask again unstreamed."""


class Resend(Exception):
    """The answer showed the request must be sent again at once, changed (see ``facts``)."""


class Wire:
    """How one client's requests go out and their answers come in (see the module
    docstring); ``url`` is the endpoint's, ``say`` words its failures."""

    def __init__(
        self,
        *,
        session: requests.Session,
        url: str,
        api: Api,
        auth: Any,
        timeout_s: float,
        max_chars: int,
        facts: EndpointFacts,
        say: Failures,
        redact: Redactor,
        log: Callable[[str], None],
    ) -> None:
        self.session, self.url, self.api, self.auth = session, url, api, auth
        self.shown_url = redact_url(url)
        self.timeout_s, self.max_chars, self.facts = timeout_s, max_chars, facts
        self._say, self._redact, self._log = say, redact, log

    def send(
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
                self.session,
                method,
                url,
                dog,
                timeout_s,
                json=json,
                headers=headers,
                auth=self.auth,
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
            if is_unreachable(exc):
                raise LLMConnectionError(f"{error}; {unreachable_hint(url)}") from None
            if not is_transient(exc):
                raise error from None
            if permit is not None and reason == TIMED_OUT:
                permit.dropped()
            raise Retryable(reason, always(error)) from None

    def read(
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
                raise Resend from None
            raise Retryable("the stream was cut off", reissued(self._say.malformed(exc))) from None
        except CutOff as exc:
            if permit.overlapped:  # only a stream is cut off
                raise StreamCut from None
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

    def _body_limit(self) -> int:
        """The most bytes an answer (or one stream event) may take: its text at 4 bytes a
        character (UTF-8) and JSON around it; the text is cut at ``max_chars`` after."""
        return 4 * max(self.max_chars, DEFAULT_MAX_CHARS) + BODY_OVERHEAD_BYTES


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
