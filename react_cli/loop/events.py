"""What a run reports while it runs: typed events, told to one :class:`Observer`.

The loop never prints; the renderer of ``ask -v`` is an observer, and so is anything that
wants to watch a run (a test's recorder). Events are plain records, so one generic
:class:`Forward` passes them on (a method hands its loop's steps to its own observer, but not
the loop's start and end, which are not the method's).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from react_cli.core.records import ToolCall, Usage
from react_cli.core.trajectory import Run, Step
from react_cli.llm.base import Completion, ModelRequest
from react_cli.tools.base import ToolResult, ToolSpec


class Event:
    """Something that happened in a run."""


@dataclass(frozen=True)
class RunStarted(Event):
    question: str


@dataclass(frozen=True)
class ToolsDeclared(Event):
    """A loop starts with these tools (Finish last): what its model may call."""

    specs: tuple[ToolSpec, ...]


@dataclass(frozen=True)
class EarlierShown(Event):
    """A follow-up question's loop starts after ``shown`` of the ``given`` earlier turns of
    its conversation (the token budget dropped the others)."""

    shown: int
    given: int


@dataclass(frozen=True)
class StepStarted(Event):
    """A step with a thought starts (the text protocol's ``Thought k:``)."""

    index: int


@dataclass(frozen=True)
class ActionRequested(Event):
    """The model is asked for an action alone: after a thought without one (as in the paper),
    or every step of a run without thoughts (Act), where this starts the step."""

    index: int


@dataclass(frozen=True)
class ThoughtStarted(Event):
    """A step starts whose reply is all thought: its action comes apart, complete (a native
    tool call, told by :class:`ActionChosen`), so none of its text is read as an action."""

    index: int


@dataclass(frozen=True)
class ActionChosen(Event):
    """A step's action, complete, as the paper writes it (``Search[X]``), where the protocol
    does not stream it as text: a native tool call, after the reply's text."""

    index: int
    action: str


@dataclass(frozen=True)
class ModelText(Event):
    """Text of the model's reply, as it streams in."""

    text: str


@dataclass(frozen=True)
class ModelDone(Event):
    """The model call that sent the text so far has returned (a tool may run next)."""


@dataclass(frozen=True)
class ModelCalled(Event):
    """A model call ended: which call it was, what it cost (estimated if the endpoint said
    nothing) and how long it took; a failed call has no ``completion`` but its ``error``."""

    request: ModelRequest
    completion: Completion | None
    usage: Usage
    latency_s: float
    error: str | None = None


@dataclass(frozen=True)
class ToolCalled(Event):
    """A tool call ended: the call as run, its result (the observation before the loop joins
    its white space), and how long it took."""

    call: ToolCall
    result: ToolResult
    latency_s: float


@dataclass(frozen=True)
class StepFinished(Event):
    step: Step


@dataclass(frozen=True)
class RunFinished(Event):
    run: Run


class Observer(Protocol):
    """Told of every event of a run, in order, on the run's thread."""

    def notify(self, event: Event) -> None: ...


class Ignore:
    """The observer of a run nobody watches."""

    def notify(self, event: Event) -> None:
        """Nothing to do."""


@dataclass(frozen=True)
class Tee:
    """Tells every event to each of ``observers`` in turn (the renderer and the spans)."""

    observers: tuple[Observer, ...]

    def notify(self, event: Event) -> None:
        for observer in self.observers:
            observer.notify(event)


@dataclass(frozen=True)
class Forward:
    """Passes every event on to ``observer`` except those of the types in ``skip``."""

    observer: Observer
    skip: tuple[type[Event], ...] = ()

    def notify(self, event: Event) -> None:
        if not isinstance(event, self.skip):
            self.observer.notify(event)
