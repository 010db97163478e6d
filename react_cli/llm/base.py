"""What a model is asked and what it answers: the seam between the loop and any endpoint.

A :class:`ModelRequest` says which call it is (a step's, the paper's follow-up for the action
alone, a forced answer, a sample) besides what to send, so a recorded model answers each call
from the recording by that identity, never by reading the prompt. The request also carries the
protocol's :class:`TextCutter`: the client cuts a reply where the protocol says the model began
inventing (the text protocol: an ``Observation`` line) while it streams, knowing no protocol.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from react_cli.core.records import StrEnum, Usage
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


@dataclass(frozen=True)
class ModelRequest:
    """One call to the model: which call it is (``kind``, of step ``step``; 0 for samples),
    the prompt the model continues, its stop sequences, and how to cut its reply."""

    kind: CallKind
    prompt: str
    stop: tuple[str, ...] = ()
    step: int = 0
    cutter: Callable[[], TextCutter] = KeepAll


@dataclass
class Completion:
    """One model call's result.

    ``text`` is the model's output exactly as received, already cut by the request's cutter;
    ``<think>`` blocks are still in it. ``finish_reason`` is the endpoint's (``"length"``: it
    stopped at ``max_tokens``); ``retries`` the requests the call had to make again. A call
    the cache answered is ``cached``: it cost nothing (``usage`` zero), and ``cached_usage``
    is what it would have cost.
    """

    text: str
    usage: Usage | None = None  # None: the endpoint reported none (the loop then estimates)
    latency_s: float = 0.0
    retries: int = 0
    finish_reason: str | None = None
    cached: bool = False
    cached_usage: Usage | None = None


TextSink = Callable[[str], None]
"""Receives model text as it streams in (only text that survives the request's cut)."""


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
