"""The record of a run: its steps, and the run around them.

A :class:`Step` holds what its protocol produced, in one shape every protocol fills: the
model calls it made (:class:`Reply`: the text as received, a chat endpoint's assistant
message, what of the text the loop did not keep), the thought, and the actions the reply asked
for (:class:`Action`: as written, the call as run, and what running it gave back). A text step
has one action; a reply of native tool calls, one per call. The display, the exports and every
rule read these records, never a protocol's text.

Each record has one ``to_json``/``from_json`` pair, the only place its trace form is written
and read (older forms are upgraded by ``traces.upgrade`` before they get here).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from react_cli.core import fields
from react_cli.core.errors import ReactCliError
from react_cli.core.records import StopReason, StrEnum, ToolCall, Usage
from react_cli.core.sources import PageSource

PARSE_ERROR = "parse_error"  # the JSON ``error`` of a step whose reply held no valid action


class ErrorKind(Enum):
    """What went wrong in a step (a tool's failure is its action's: ``Action.error``)."""

    PARSE = "parse"  # the model's reply held no valid action (the loop goes on)
    MODEL = "model"  # the model endpoint failed (the run ends)


@dataclass(frozen=True)
class StepError:
    """A step's error: its kind and what happened, in a message fit for the user."""

    kind: ErrorKind
    message: str


PARSE_FAILURE = StepError(ErrorKind.PARSE, "no valid action")


class RefusedBy(StrEnum):
    """Who refused a tool call that needs consent (``tools.consent``); the value is what an
    action's ``refused`` records. A refused call ran nothing: its observation says so to the
    model, and the run goes on."""

    USER = "user"  # asked on the terminal, the user answered no
    DENY_RULE = "deny_rule"  # --deny-tool or [tools] deny (a re-run on live tools)
    NO_TERMINAL = "no_terminal"  # nobody to ask (eval, piped input) and no --allow-tool


_REFUSED = {
    RefusedBy.USER: "refused by the user",
    RefusedBy.DENY_RULE: "refused by a deny rule",
    RefusedBy.NO_TERMINAL: "refused: no terminal to ask",
}


def refusal_text(refused: RefusedBy | str) -> str:
    """Who refused a call, in a few words for people: ``refused by the user``."""
    return _REFUSED[refused] if isinstance(refused, RefusedBy) else f"refused ({refused})"


def refused_by(value: str | None) -> RefusedBy | str | None:
    """A recorded ``refused``: one this react-cli knows, or the text a newer one wrote."""
    if value is None:
        return None
    try:
        return RefusedBy(value)
    except ValueError:
        return value


class Cue(StrEnum):
    """What a model call asked for, and so the label its reply is shown under."""

    THOUGHT = "thought"  # a thought, its action perhaps after it ("Thought k:")
    ACTION = "action"  # an action alone: Act, the paper's follow-up, a forced answer ("Action k:")


@dataclass(frozen=True)
class Reply:
    """One model call of a step, as received: its ``text`` (what a re-run plays back), a chat
    endpoint's assistant ``message`` (native tool calls), the end of the text the loop did not
    keep (``ignored``: shown dimmed), and whether ``max_tokens`` cut it before its action. A
    recorded cue this version does not know (a newer writer's) is kept as text."""

    cue: Cue | str
    text: str
    message: dict[str, Any] | None = None
    ignored: str = ""
    max_tokens_reached: bool = False

    @property
    def shown_as(self) -> Cue:
        """The label the reply is shown under (a cue this version does not know: a thought's)."""
        return Cue.ACTION if self.cue is Cue.ACTION else Cue.THOUGHT

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"cue": str(self.cue), "text": self.text}
        if self.message is not None:
            data["message"] = self.message
        if self.ignored:
            data["ignored"] = self.ignored
        if self.max_tokens_reached:
            data["max_tokens_reached"] = True
        return data

    @classmethod
    def from_json(cls, data: Any) -> Reply:
        data = _object(data, "a reply")
        message = data.get("message")
        if message is not None and not isinstance(message, dict):  # its fields are read, as
            # hostile as when they arrived, by ``llm.toolcalls``
            raise TypeError(f"a reply's message is {type(message).__name__}, not an object")
        return cls(
            cue=_cue(fields.needed(fields.optional_text(data, "cue"), "cue")),
            text=fields.needed(fields.optional_text(data, "text"), "text"),
            message=message,
            ignored=fields.optional_text(data, "ignored") or "",
            max_tokens_reached=bool(fields.flag(data.get("max_tokens_reached"), "a reply's flag")),
        )


@dataclass
class Action:
    """One action a step's reply asked for, and what running it gave back.

    ``written`` is the action as the step shows it: as the model wrote it in the text
    protocol (an invalid one too), the paper's ``Name[argument]`` for a native call; None when
    the reply held none. ``call`` is the action as run, a tool of the run's set or Finish (None:
    it could not be run, and ``observation`` told the model why). The rest is the tool's:
    its facts (``details``), the page text it showed, its failure, who refused it when it
    needed consent (nothing ran), its time and the requests it made again."""

    written: str | None
    call: ToolCall | None = None
    observation: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    source: PageSource | None = None
    error: str | None = None
    refused: RefusedBy | str | None = None
    latency_s: float = 0.0
    retries: int = 0

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"action": self.written}
        if self.call is not None:
            data["call"] = self.call.to_json()
        data.update(
            observation=self.observation,
            details=self.details,
            latency_s=round(self.latency_s, 4),
            retries=self.retries,
        )
        if self.source is not None:
            data["source"] = self.source.to_json()
        if self.error is not None:
            data["error"] = self.error
        if self.refused is not None:
            data["refused"] = str(self.refused)
        return data

    @classmethod
    def from_json(cls, data: Any) -> Action:
        data = _object(data, "an action")
        details, source = data.get("details") or {}, data.get("source")
        if not isinstance(details, dict):
            raise TypeError("an action's details are not an object")
        return cls(
            written=fields.optional_text(data, "action"),
            call=_call(data.get("call")),
            observation=fields.optional_text(data, "observation") or "",
            details=dict(details),
            source=None if source is None else PageSource.from_json(source),
            error=fields.optional_text(data, "error"),
            refused=refused_by(fields.optional_text(data, "refused")),
            latency_s=fields.seconds(data.get("latency_s"), "an action's latency_s"),
            retries=fields.whole(data.get("retries"), "an action's retries") or 0,
        )


def action_label(index: int, number: int, count: int) -> str:
    """How action ``number`` of ``count`` in step ``index`` is labelled: ``2``, or, in a step
    of several, ``2.1``, ``2.2``..."""
    return str(index) if count == 1 else f"{index}.{number}"


@dataclass
class Step:
    """One round of the loop: the model calls it made, its thought, its actions and what
    they gave back, what the calls cost, and how it went (``error``: no valid action, or the
    endpoint failed; ``forced``: the extra call of ``--force-answer``; ``cached``: the cache
    answered its calls, ``cached_usage`` what they would have cost, ``usage`` counting none)."""

    index: int
    thought: str = ""
    replies: list[Reply] = field(default_factory=list)
    actions: list[Action] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    latency_s: float = 0.0
    retries: int = 0  # model requests retried or re-issued
    error: StepError | None = None
    forced: bool = False
    cached: bool = False
    cached_usage: Usage = field(default_factory=Usage)

    def failed(self, kind: ErrorKind) -> bool:
        return self.error is not None and self.error.kind is kind

    @property
    def error_text(self) -> str | None:
        """The ``error`` a trace records: ``parse_error`` or the model endpoint's failure."""
        if self.error is None:
            return None
        return PARSE_ERROR if self.error.kind is ErrorKind.PARSE else self.error.message

    @property
    def calls(self) -> int:
        """The model calls the step made: each reply, and the call that failed, if one did."""
        return len(self.replies) + self.failed(ErrorKind.MODEL)

    @property
    def max_tokens_reached(self) -> bool:
        return any(reply.max_tokens_reached for reply in self.replies)

    @property
    def tool_latency_s(self) -> float:
        return sum(action.latency_s for action in self.actions)

    @property
    def tool_retries(self) -> int:
        return sum(action.retries for action in self.actions)

    def label(self, position: int) -> str:
        """The label of the action at ``position`` (from 0): see :func:`action_label`."""
        return action_label(self.index, position + 1, len(self.actions))

    def to_json(self) -> dict[str, Any]:
        flags: dict[str, Any] = {"forced": True} if self.forced else {}
        if self.cached:
            flags.update(cached=True, cached_usage=self.cached_usage.to_json())
        return {
            "index": self.index,
            "thought": self.thought,
            "replies": [reply.to_json() for reply in self.replies],
            "actions": [action.to_json() for action in self.actions],
            "usage": self.usage.to_json(),
            "latency_s": round(self.latency_s, 4),
            "retries": self.retries,
            "error": self.error_text,
            **flags,
        }

    @classmethod
    def from_json(cls, data: Any) -> Step:
        """A recorded step; TypeError/ValueError when a field has the wrong type or is not
        finite (missing fields take their defaults)."""
        data = _object(data, "a step")
        message = fields.optional_text(data, "error")
        error = None
        if message is not None:
            error = PARSE_FAILURE if message == PARSE_ERROR else StepError(ErrorKind.MODEL, message)
        usage, cached_usage = data.get("usage"), data.get("cached_usage")
        return cls(
            index=fields.whole(data.get("index"), "index") or 0,
            thought=fields.optional_text(data, "thought") or "",
            replies=[Reply.from_json(item) for item in _list(data, "replies")],
            actions=[Action.from_json(item) for item in _list(data, "actions")],
            usage=Usage.from_json(usage if isinstance(usage, dict) else None),
            latency_s=fields.seconds(data.get("latency_s"), "latency_s"),
            retries=fields.whole(data.get("retries"), "retries") or 0,
            error=error,
            forced=bool(fields.flag(data.get("forced"), "forced")),
            cached=bool(fields.flag(data.get("cached"), "cached")),
            cached_usage=Usage.from_json(cached_usage if isinstance(cached_usage, dict) else None),
        )


def actions_of(steps: Iterable[Step]) -> Iterator[Action]:
    """Every action of ``steps``, in the order the run took them."""
    return (action for step in steps for action in step.actions)


@dataclass
class Run:
    """One question through the loop, from its prompt to the reason it stopped.

    ``stop_reason`` is a ``StopReason``; a recorded run may name one this version does not
    know (a newer writer's), kept as text so it can still be shown.
    """

    question: str
    answer: str | None
    stop_reason: StopReason | str
    steps: list[Step]
    usage: Usage
    duration_s: float
    error: str | None = None
    failure: ReactCliError | None = None  # the endpoint error that ended the run, if one did

    @property
    def forced(self) -> bool:
        """Whether the answer came from ``--force-answer``'s extra call at the step limit."""
        return any(step.forced for step in self.steps)

    @property
    def max_tokens_reached(self) -> bool:
        """Whether a reply of the run stopped at ``max_tokens`` before its action."""
        return any(step.max_tokens_reached for step in self.steps)

    @property
    def cached_usage(self) -> Usage:
        """What the calls the cache answered would have cost (``usage`` counts none of it)."""
        return sum((step.cached_usage for step in self.steps), Usage())

    @property
    def refused_calls(self) -> int:
        """The tool calls of the run that needed consent and were refused."""
        return sum(action.refused is not None for action in actions_of(self.steps))

    def to_json(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "answer": self.answer,
            "stop_reason": str(self.stop_reason),
            "error": self.error,
            "usage": self.usage.to_json(),
            "duration_s": round(self.duration_s, 4),
            "steps": [step.to_json() for step in self.steps],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Run:
        """A recorded run; TypeError/ValueError/KeyError for a malformed one."""
        steps = [Step.from_json(item) for item in data["steps"]]
        usage = data.get("usage")
        return cls(
            question=str(data["question"]),
            answer=None if data.get("answer") is None else str(data["answer"]),
            stop_reason=_stop_reason(str(data["stop_reason"])),
            steps=steps,
            usage=(
                Usage.from_json(usage)
                if isinstance(usage, dict)
                else sum((s.usage for s in steps), Usage())
            ),
            duration_s=fields.seconds(data.get("duration_s"), "duration_s"),
            error=None if data.get("error") is None else str(data["error"]),
        )


def _object(data: Any, what: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise TypeError(f"{what} is {type(data).__name__}, not an object")
    return data


def _list(data: dict[str, Any], key: str) -> list[Any]:
    value = data.get(key) or []
    if not isinstance(value, list):
        raise TypeError(f"a step's {key} are {type(value).__name__}, not a list")
    return value


def _call(data: Any) -> ToolCall | None:
    """A recorded call (absent: the action was not run)."""
    if data is None:
        return None
    data = _object(data, "an action's call")
    name, argument = fields.optional_text(data, "name"), fields.optional_text(data, "argument")
    if not name or argument is None:
        raise TypeError("an action's call has no name or argument")
    arguments = data.get("arguments")
    if arguments is not None and not isinstance(arguments, dict):
        raise TypeError(f"a call's arguments are {type(arguments).__name__}, not an object")
    return ToolCall(name, argument, fields.optional_text(data, "id"), arguments)


def _cue(text: str) -> Cue | str:
    try:
        return Cue(text)
    except ValueError:
        return text


def _stop_reason(text: str) -> StopReason | str:
    try:
        return StopReason(text)
    except ValueError:
        return text
