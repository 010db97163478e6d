"""Reading one completion's answer: an SSE stream or a JSON body, cut and bounded as it comes.

The text is cut client-side by the request's cutter (the text protocol's cuts at an invented
``Observation`` line), so a server that ignores ``stop`` costs at most the tokens read before
the cut, and at ``max_chars``, so one that ignores ``max_tokens`` cannot make an answer grow
without end; the bytes are counted against a size
limit while they are read. Nothing here knows the endpoint: failures are ``Malformed`` (the
answer is unusable), ``CutOff`` (it ended before saying why) or ``BrokeOff`` (it stopped
coming), and the client words them; the last two a fresh request may fix.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import requests

from react_cli.core.records import Api, ToolCall, Usage, cached_count
from react_cli.infra.deadline import Watchdog
from react_cli.infra.http import keep_connection
from react_cli.infra.redaction import Redactor
from react_cli.infra.sizelimit import TooLarge, capped_lines, read_capped
from react_cli.infra.untrusted import decode, loads
from react_cli.llm.base import KeepAll, TextCutter, TextSink, cut_whole
from react_cli.llm.toolcalls import CallAssembler, calls_of

STREAM_READ_BYTES = 512  # per read of a stream: text reaches the screen as it comes
BODY_READ_BYTES = 65_536
ENDED_BEFORE_DONE = "a stream that ended before [DONE]"
DONE_WITHOUT_FINISH = (
    "a stream that ended with [DONE] but no finish_reason, i.e. cut off (servers that answer "
    "one request at a time cut concurrent streams: try --concurrency 1 or --no-stream)"
)


class Malformed(Exception):
    """The endpoint answered 200 with something that is not a usable completion; the message
    says what it held (``malformed JSON: '...'``); ``excerpt`` is the unusable text, if any."""

    def __init__(self, what: str, excerpt: str | None = None) -> None:
        super().__init__(what)
        self.excerpt = excerpt


class CutOff(Malformed):
    """A stream that ended without a finish reason: cut off, so a fresh request may do."""


class EmptyStream(CutOff):
    """A stream that sent nothing at all: llama-cpp-python's answer to a streamed ``auto``
    tool request when the model picks a tool (its handler fails after the headers)."""


class BrokeOff(Exception):
    """The answer stopped coming: the connection broke (``cause``), or (None) the request's
    watchdog cut it at its time limit."""

    def __init__(self, cause: requests.RequestException | None) -> None:
        super().__init__(str(cause) if cause else "cut at the time limit")
        self.cause = cause


class ShownOnce:
    """Forwards streamed text to the sink once, even when a broken stream is re-issued: a
    re-issued request usually repeats what was already shown, and that prefix is dropped."""

    def __init__(self, sink: TextSink) -> None:
        self._sink = sink
        self._shown = ""
        self._attempt = ""

    def new_attempt(self) -> None:
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


@dataclass(frozen=True)
class Answer:
    """The kept text of one completion, its usage (None: not reported) and finish reason, and
    the native tool calls of a chat answer (as sent: see ``toolcalls``)."""

    text: str
    usage: Usage | None
    finish_reason: str | None
    tool_calls: tuple[ToolCall, ...] = ()


@dataclass
class AnswerReader:
    """Reads one answer of ``api`` of at most ``max_chars`` characters and ``limit_bytes``
    bytes (per stream event), cut by a ``cutter`` of its request, showing its text to
    ``sink``; ``log`` hears of cuts. What the answer says is masked by ``redact`` (an endpoint
    may echo its request: the API key), the text shown as it streams too. Once read, it
    tells how the answer came (``first_at``, ``chars``, ``usage``): the endpoint's limiter
    learns from it how busy the server is."""

    api: Api
    max_chars: int
    limit_bytes: int
    watchdog: Watchdog
    sink: ShownOnce | None
    log: Callable[[str], None]
    redact: Redactor
    cutter: Callable[[], TextCutter] = KeepAll
    first_at: float | None = None  # when a streamed answer's first choice came (monotonic)
    chars: int = 0  # characters of text received, over every choice
    usage: Usage | None = None  # the usage reported for the whole answer

    def read(self, response: requests.Response) -> Answer:
        """The answer, whatever shape the server chose (some answer a stream request with one
        JSON body)."""
        try:
            if "text/event-stream" in response.headers.get("Content-Type", ""):
                return self._read_stream(response)
            return self._read_body(response)
        except requests.RequestException as exc:
            raise BrokeOff(exc) from exc

    def read_choices(self, response: requests.Response) -> tuple[list[Answer], Usage | None]:
        """Every choice of a JSON answer (a request for ``n`` completions), in their index
        order, each cut as one answer is, and the usage reported for them all."""
        try:
            data = self._read_json(response)
        except requests.RequestException as exc:
            raise BrokeOff(exc) from exc
        choices = data.get("choices") if isinstance(data, dict) else None
        choices = [c for c in choices if isinstance(c, dict)] if isinstance(choices, list) else []
        if not choices:
            raise Malformed("no choices")
        choices.sort(key=lambda c: c["index"] if type(c.get("index")) is int else len(choices))
        self.usage = _usage(data)
        return [self._choice(choice, None) for choice in choices], self.usage

    def _read_body(self, response: requests.Response) -> Answer:
        answer = self.answer_of(self._read_json(response))
        if self.sink and answer.text:
            self.sink(answer.text)
        return answer

    def answer_of(self, data: Any) -> Answer:
        """The answer a JSON body already read holds (a Batch API output line's too), cut
        and masked as any; Malformed when it holds no choice."""
        choice = _first_choice(data)
        if choice is None:
            raise Malformed("no choices")
        self.usage = _usage(data)
        return self._choice(choice, self.usage)

    def _read_json(self, response: requests.Response) -> Any:
        try:
            raw = read_capped(response.iter_content(BODY_READ_BYTES), self.limit_bytes)
        except TooLarge as exc:  # far larger than any answer needs (the text is cut after)
            raise Malformed(f"a body {exc}") from None
        if self.watchdog.expired:  # a body delimited by the close the watchdog caused
            raise BrokeOff(None)
        try:
            return loads(raw)
        except ValueError:
            raise Malformed("malformed JSON", decode(raw)) from None

    def _choice(self, choice: dict[str, Any], usage: Usage | None) -> Answer:
        """One choice of a JSON answer, cut by the request's cutter and at ``max_chars``."""
        calls: tuple[ToolCall, ...] = ()
        if self.api is Api.CHAT:
            content = _field(choice.get("message"), "content")
            calls = calls_of(choice.get("message"), self.max_chars)
        else:
            content = choice.get("text")
        content = content if isinstance(content, str) else ""
        self.chars += len(content)
        text = cut_whole(self.cutter(), content)
        finish = "stop" if text != content else _finish_reason(choice)
        if len(text) > self.max_chars:
            text, finish = text[: self.max_chars], "length"
            self.log(f"answer longer than {self.max_chars} characters; cut there")
        return Answer(self.redact(text), usage, finish and self.redact(finish), self._masked(calls))

    def _read_stream(self, response: requests.Response) -> Answer:
        """Read SSE until [DONE] or until the cutter cuts (an invented Observation line).

        Keep-alive comments, empty deltas and chunks without choices are read and skipped; the
        watchdog ends a stream that sends only those, or one byte at a time, when its time is up.
        """
        cutter = self.cutter()
        show = self.redact.stream(self.sink) if self.sink else None
        calls = CallAssembler(self.max_chars)
        usage: Usage | None = None
        cached: int | None = None  # llama.cpp's timings may come in a chunk of their own
        finish, done, saw_choice, saw_data = None, False, False, False
        received = shown = 0
        try:
            lines = capped_lines(response.iter_content(STREAM_READ_BYTES), self.limit_bytes)
            for line in lines:
                if self.watchdog.expired:  # a server flooding keep-alives never blocks a read
                    break
                payload = _sse_data(line)
                if payload is None:
                    continue
                saw_data = True
                if payload == "[DONE]":
                    done = True
                    keep_connection(response, lines)
                    break
                try:
                    chunk = loads(payload)
                except ValueError:
                    raise Malformed("malformed stream chunk", payload) from None
                if isinstance(chunk, dict) and chunk.get("usage"):
                    usage = _usage(chunk) or usage
                said = cached_count(chunk)
                cached = cached if said is None else said
                choice = _first_choice(chunk)
                if choice is None:
                    continue
                if not saw_choice:
                    self.first_at = time.monotonic()
                saw_choice = True
                finish = _finish_reason(choice) or finish
                if self.api is Api.CHAT:
                    calls.feed(_field(choice.get("delta"), "tool_calls"))
                piece = self._piece(choice)
                received += len(piece)
                self.chars = received
                released = cutter.feed(piece)[: max(0, self.max_chars - shown)]
                shown += len(released)
                if show and released:
                    show(released)
                if cutter.done:  # the rest is invented; closing the response stops generation
                    finish, done = "stop", True
                    break
                if received > self.max_chars:  # the server ignores max_tokens
                    self.log(f"answer longer than {self.max_chars} characters; cut there")
                    finish, done = "length", True
                    break
        except TooLarge as exc:
            raise Malformed(f"a stream event {exc}") from None
        if self.watchdog.expired and not done:
            raise BrokeOff(None)
        if not saw_data:
            raise EmptyStream(ENDED_BEFORE_DONE)
        if finish is None:  # every complete answer names why it ended
            raise CutOff(DONE_WITHOUT_FINISH if done else ENDED_BEFORE_DONE)
        if not saw_choice:
            raise Malformed("a stream without choices")
        if usage is not None and usage.cached_prompt_tokens is None and cached is not None:
            usage = _with_cached(usage, cached)
        self.usage = usage
        tail = cutter.flush()[: max(0, self.max_chars - shown)]
        if show:
            show(tail)
            show.flush()
        text = self.redact(cutter.text[: self.max_chars])
        return Answer(text, usage, self.redact(finish), self._masked(calls.calls()))

    def _masked(self, calls: tuple[ToolCall, ...]) -> tuple[ToolCall, ...]:
        """The calls with what the endpoint may have echoed masked, like the text."""
        redact = self.redact
        return tuple(
            ToolCall(redact(call.name), redact(call.argument), call.id and redact(call.id))
            for call in calls
        )

    def _piece(self, choice: dict[str, Any]) -> str:
        """The visible text of one chunk; reasoning_content/reasoning fields are ignored."""
        if self.api is Api.CHAT:
            piece = _field(choice.get("delta"), "content")
        else:
            piece = choice.get("text")
        return piece if isinstance(piece, str) else ""


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
    """The reported usage with its cached prompt tokens, however the server said them; None
    when there is none worth keeping (see ``Usage.reported``)."""
    return Usage.reported(data.get("usage"), cached_count(data))


def _with_cached(usage: Usage, cached: int) -> Usage:
    """``usage`` with the cached count a stream said apart (none above the prompt's)."""
    return usage if cached > usage.prompt_tokens else replace(usage, cached_prompt_tokens=cached)


def _sse_data(line: bytes) -> str | None:
    """The payload of an SSE ``data:`` line; None for blank lines, comments and other fields."""
    text = decode(line).strip()
    if not text.startswith("data:"):
        return None
    return text[len("data:") :].strip()
