"""What a model is asked and what it answers: the seam between the loop and any endpoint.

A :class:`ModelRequest` says which call it is (a step's, the paper's follow-up for the action
alone, a forced answer, a sample) besides what to send, so a recorded model answers each call
from the recording by that identity, never by reading the prompt. The request also carries the
protocol's :class:`TextCutter`: the client cuts a reply where the protocol says the model began
inventing (the text protocol: an ``Observation`` line) while it streams, knowing no protocol.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Protocol

from react_cli.core.records import StrEnum, ToolCall, Usage
from react_cli.infra.deadline import Deadline


class CallKind(StrEnum):
    """Which call of a run a request is."""

    STEP = "step"  # a step's call (the text protocol's "Thought k:", Act's "Action k:")
    FOLLOWUP = "followup"  # the paper's extra call for the action alone, after a bare thought
    FORCED = "forced"  # --force-answer's call for the final answer at the step limit
    SAMPLE = "sample"  # Standard's or CoT's greedy call, or CoT-SC's samples


class TextCutter(Protocol):
    """Cuts a reply as it streams in: ``feed`` returns what is safe to show now, ``flush`` the
    rest at the end; once ``done``, the rest of the stream is not the model's answer."""

    @property
    def done(self) -> bool: ...

    @property
    def text(self) -> str:
        """Everything kept so far."""
        ...

    def feed(self, piece: str) -> str: ...

    def flush(self) -> str: ...


class KeepAll:
    """The cutter of a request whose protocol cuts nothing."""

    def __init__(self) -> None:
        self._parts: list[str] = []

    @property
    def done(self) -> bool:
        return False

    @property
    def text(self) -> str:
        return "".join(self._parts)

    def feed(self, piece: str) -> str:
        self._parts.append(piece)
        return piece

    def flush(self) -> str:
        return ""


def cut_whole(cutter: TextCutter, text: str) -> str:
    """``text`` received at once (a JSON answer), cut as a stream of it would be."""
    cutter.feed(text)
    cutter.flush()
    return cutter.text


class ChoiceMode(StrEnum):
    """Which calls a request with tools asks for (OpenAI's ``tool_choice``)."""

    AUTO = "auto"  # the model's choice: text, calls, or both
    REQUIRED = "required"  # some call
    FUNCTION = "function"  # a call of one named function


@dataclass(frozen=True)
class ToolChoice:
    """A request's ``tool_choice``: a mode, and the function a ``FUNCTION`` choice names. The
    two forced modes are ones an endpoint may not take (the client then asks with ``auto``)."""

    mode: ChoiceMode = ChoiceMode.AUTO
    function: str | None = None

    @classmethod
    def of(cls, function: str) -> ToolChoice:
        return cls(ChoiceMode.FUNCTION, function)

    @property
    def forced(self) -> bool:
        return self.mode is not ChoiceMode.AUTO

    def wire(self) -> str | dict[str, Any]:
        """As the request's ``tool_choice``."""
        if self.mode is ChoiceMode.FUNCTION:
            return {"type": "function", "function": {"name": self.function}}
        return str(self.mode)


AUTO = ToolChoice()
REQUIRED = ToolChoice(ChoiceMode.REQUIRED)


@dataclass(frozen=True)
class ModelRequest:
    """One call to the model: which call it is (``kind``, of step ``step``; 0 for samples),
    the prompt the model continues, its stop sequences, and how to cut its reply.

    A chat request with tools (``--protocol tools``) sends ``messages`` (the chat so far, as
    OpenAI messages) instead of the prompt, declares ``tools`` (OpenAI ``tools`` entries) and
    says which calls it wants (``tool_choice``). ``grammar`` (``--constrain``) is a GBNF grammar
    the reply must follow, built by the protocol from its tools, for servers that take one.
    ``cache_key`` is what the endpoint may route its prompt cache by (an eval's question: see
    :class:`CacheKeyed`), sent as ``prompt_cache_key``; never part of the call's identity."""

    kind: CallKind
    prompt: str
    stop: tuple[str, ...] = ()
    step: int = 0
    cutter: Callable[[], TextCutter] = KeepAll
    messages: tuple[dict[str, Any], ...] = ()
    tools: tuple[dict[str, Any], ...] = ()
    tool_choice: ToolChoice = AUTO
    grammar: str | None = None
    cache_key: str | None = None

    def sent_text(self) -> str:
        """What the model reads, as text: the prompt, or the messages and the declared tools
        (for estimating its tokens where the endpoint reports none)."""
        if not self.messages:
            return self.prompt
        parts = [str(message.get("content") or "") for message in self.messages]
        parts += [
            json.dumps(message["tool_calls"])
            for message in self.messages
            if message.get("tool_calls")
        ]
        if self.tools:
            parts.append(json.dumps(list(self.tools), separators=(",", ":")))
        return "\n".join(parts)


@dataclass
class Completion:
    """One model call's result.

    ``text`` is the model's output exactly as received, already cut by the request's cutter;
    ``<think>`` blocks are still in it. ``finish_reason`` is the endpoint's (``"length"``: it
    stopped at ``max_tokens``); ``retries`` the requests the call had to make again. A call
    the cache answered is ``cached``: it cost nothing (``usage`` zero), and ``cached_usage``
    is what it would have cost.

    A reply to a request with tools also holds its ``tool_calls`` as the endpoint sent them
    (each a ``ToolCall`` whose ``name`` is the function's and ``argument`` its arguments' JSON
    text, unread), and ``message``: the assistant message, as the chat goes on with it.
    """

    text: str
    usage: Usage | None = None  # None: the endpoint reported none (the loop then estimates)
    latency_s: float = 0.0
    retries: int = 0
    finish_reason: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    message: dict[str, Any] | None = None
    cached: bool = False
    cached_usage: Usage | None = None

    def output_text(self) -> str:
        """What the model wrote, as text: its text and its calls (for estimating tokens)."""
        calls = "".join(f"{call.name}{call.argument}" for call in self.tool_calls)
        return self.text + calls


TextSink = Callable[[str], None]
"""Receives model text as it streams in (only text that survives the request's cut)."""


def discard(line: str) -> None:
    """A sink for notes nobody reads: the client's without ``--debug``, a batch's reader and
    request parameters (the eval's folder keeps what they would say)."""


class Model(Protocol):
    """Anything that answers a request: the HTTP client, or a scripted or recorded model."""

    def complete(
        self, request: ModelRequest, *, deadline: Deadline, on_text: TextSink | None = None
    ) -> Completion:
        """Answer ``request`` before ``deadline``; ``on_text`` sees the text as it streams in."""
        ...


@dataclass
class Sampled:
    """What a sampling call returned: its completions in order, and the requests it took
    (one for all of them when the endpoint answers ``n``)."""

    completions: list[Completion]
    requests: int


class Sampler(Protocol):
    """Anything that draws ``n`` completions of a request at a temperature (CoT's greedy call
    is one at temperature 0, CoT-SC's samples many): the HTTP client, or a recorded trace."""

    def sample(
        self, request: ModelRequest, *, n: int, temperature: float, deadline: Deadline
    ) -> Sampled:
        """``n`` completions of ``request`` before ``deadline``, in a stable order."""
        ...


class LanguageModel(Model, Sampler, Protocol):
    """A model endpoint's client: it answers requests and it samples."""


class CacheKeyed:
    """A model (and sampler) whose every request carries ``key`` as its prompt cache key, so
    an endpoint that routes by it sends a question's calls where its prefix is cached."""

    def __init__(self, model: Model, sampler: Sampler | None, key: str) -> None:
        self._model, self._sampler, self.key = model, sampler, key

    def complete(
        self, request: ModelRequest, *, deadline: Deadline, on_text: TextSink | None = None
    ) -> Completion:
        keyed = replace(request, cache_key=self.key)
        return self._model.complete(keyed, deadline=deadline, on_text=on_text)

    def sample(
        self, request: ModelRequest, *, n: int, temperature: float, deadline: Deadline
    ) -> Sampled:
        if self._sampler is None:
            raise RuntimeError("this model draws no samples")
        keyed = replace(request, cache_key=self.key)
        return self._sampler.sample(keyed, n=n, temperature=temperature, deadline=deadline)
