"""What a run reports while it runs: typed events, told to one :class:`Observer`.

The loop never prints; the renderer of ``ask -v`` is an observer, and so is anything that
wants to watch a run (a test's recorder). Events are plain records, so one generic
:class:`Forward` passes them on (a method hands its loop's steps to its own observer, but not
the loop's start and end, which are not the method's).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

from react_cli.core.records import ToolCall, Usage
from react_cli.core.trajectory import Cue, Reply, Run, Step
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
class ReplyStarted(Event):
    """A model call of step ``index`` starts, asking for what ``cue`` says: a thought (its
    label shown with the reply's first text), or an action alone."""

    index: int
    cue: Cue


@dataclass(frozen=True)
class ModelText(Event):
    """Text of the model's reply as it streams in, as its protocol shows it (``loop.protocol
    .Shown``: the thought, not the action, which :class:`ActionChosen` tells)."""

    text: str


@dataclass(frozen=True)
class ModelDone(Event):
    """The model call that sent the text so far has returned (a tool may run next)."""


@dataclass(frozen=True)
class ActionChosen(Event):
    """Action ``number`` of the ``count`` a reply of step ``index`` asked for, as the step
    shows it (``Search[X]``), before it runs."""

    index: int
    number: int
    count: int
    written: str


@dataclass(frozen=True)
class TextIgnored(Event):
    """The end of a reply's text the loop did not keep (an invented next step, an echoed
    instruction), shown dimmed once the reply's action is told."""

    text: str


@dataclass(frozen=True)
class Observed(Event):
    """What action ``number`` of ``count`` in step ``index`` gave back (the tool's
    observation, or what was wrong with the action), as the model is shown it."""

    index: int
    number: int
    count: int
    observation: str


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


def read_events(step: Step, reply: Reply, last: bool) -> Iterator[Event]:
    """What is told once ``reply`` of ``step`` is read: the actions it asked for (those of
    the step's ``last`` reply), then the text it did not keep."""
    if last:
        count = len(step.actions)
        for number, action in enumerate(step.actions, start=1):
            if action.written is not None:
                yield ActionChosen(step.index, number, count, action.written)
    if reply.ignored:
        yield TextIgnored(reply.ignored)


def observed(step: Step, position: int) -> Observed | None:
    """What the action at ``position`` of ``step`` gave back, if it gave anything (a Finish
    gives nothing)."""
    action = step.actions[position]
    if not action.observation:
        return None
    count = len(step.actions)
    return Observed(step.index, position + 1, count, action.observation)


def recorded_events(step: Step) -> Iterator[Event]:
    """The events a live loop told of ``step``, from its record alone (a replay), whatever
    its protocol: each reply (its thought as the text the first one showed), what it asked
    for and what it did not keep, each action's observation, the step's end."""
    for number, reply in enumerate(step.replies):
        yield ReplyStarted(step.index, reply.shown_as)
        if number == 0 and reply.shown_as is Cue.THOUGHT and step.thought:
            yield ModelText(step.thought)
        yield ModelDone()
        yield from read_events(step, reply, number == len(step.replies) - 1)
    for position in range(len(step.actions)):
        told = observed(step, position)
        if told is not None:
            yield told
    yield StepFinished(step)
