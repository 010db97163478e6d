"""The record of a run: its steps, each with a typed error, and the run around them.

Each record has one ``to_json``/``from_json`` pair, the only place its trace form is written
and read. The JSON is that of every trace so far: a parse error is ``"error": "parse_error"``,
a model error the message in ``error``, a tool error the message in ``details.error``, and the
flags of a forced or length-stopped step are in ``details`` too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from react_cli.core import fields
from react_cli.core.errors import ReactCliError
from react_cli.core.records import StopReason, ToolCall, Usage
from react_cli.core.sources import PageSource

PARSE_ERROR = "parse_error"  # the JSON ``error`` of a step whose output held no valid action
FORCED = "forced"  # details flag: the extra Finish[ call of --force-answer
MAX_TOKENS_REACHED = "max_tokens_reached"  # details flag: a reply stopped by max_tokens
CACHED = "cached"  # details flag: the cache answered the step's model call(s)
CACHED_USAGE = "cached_usage"  # details: what those calls would have cost
_FLAGS = (FORCED, MAX_TOKENS_REACHED, CACHED)


class ErrorKind(Enum):
    """What went wrong in a step."""

    PARSE = "parse"  # the model's output held no valid action (the loop goes on)
    MODEL = "model"  # the model endpoint failed (the run ends)
    TOOL = "tool"  # Search/Lookup failed (the observation says so; the loop goes on)


@dataclass(frozen=True)
class StepError:
    """A step's error: its kind and what happened, in a message fit for the user."""

    kind: ErrorKind
    message: str


PARSE_FAILURE = StepError(ErrorKind.PARSE, "no valid action")


@dataclass
class Step:
    """One Thought/Action/Observation round, with what it cost."""

    index: int
    thought: str = ""
    action: str | None = None  # as the model wrote it (an invalid one too)
    call: ToolCall | None = None  # the action as run: a tool of the run's set, or Finish
    observation: str = ""
    raw: str = ""
    followup_raw: str | None = None  # the extra "Action k:" call's output, when one was made
    usage: Usage = field(default_factory=Usage)
    latency_s: float = 0.0
    tool_latency_s: float = 0.0
    retries: int = 0  # model requests retried or re-issued
    tool_retries: int = 0  # Wikipedia requests retried
    error: StepError | None = None
    details: dict[str, Any] = field(default_factory=dict)  # the tool's facts about its call
    forced: bool = False  # the extra Finish[ call of --force-answer
    max_tokens_reached: bool = False  # a reply stopped by max_tokens before its action
    source: PageSource | None = None  # the page text the observation showed, if it showed one
    # Native tool calls (--protocol tools): the assistant message of the step's call and of its
    # follow-up as received; and, for a call that came in an earlier step's reply with others,
    # that step (the reply, its cost and time are booked there; this step made no model call).
    message: dict[str, Any] | None = None
    followup_message: dict[str, Any] | None = None
    reply_step: int | None = None
    cached: bool = False  # the cache answered its model call(s): ``usage`` counts none of it
    cached_usage: Usage = field(default_factory=Usage)  # what those calls would have cost

    def failed(self, kind: ErrorKind) -> bool:
        return self.error is not None and self.error.kind is kind

    @property
    def error_text(self) -> str | None:
        """The ``error`` a trace records: ``parse_error`` or the model endpoint's failure;
        None without one, and for a tool's failure (the observation says it, ``details``
        holds it)."""
        if self.error is None or self.error.kind is ErrorKind.TOOL:
            return None
        return PARSE_ERROR if self.error.kind is ErrorKind.PARSE else self.error.message

    def to_json(self) -> dict[str, Any]:
        details: dict[str, Any] = {flag: True for flag in _FLAGS if getattr(self, flag)}
        if self.cached:
            details[CACHED_USAGE] = self.cached_usage.to_json()
        details.update(self.details)
        if self.error is not None and self.error.kind is ErrorKind.TOOL:
            details["error"] = self.error.message
        call = {} if self.call is None else {"call": self.call.to_json()}
        source = {} if self.source is None else {"source": self.source.to_json()}
        native = {
            key: value
            for key, value in (
                ("message", self.message),
                ("followup_message", self.followup_message),
                ("reply_step", self.reply_step),
            )
            if value is not None
        }
        return {
            "index": self.index,
            "thought": self.thought,
            "action": self.action,
            **call,
            "observation": self.observation,
            "raw": self.raw,
            "followup_raw": self.followup_raw,
            **native,
            "usage": self.usage.to_json(),
            "latency_s": round(self.latency_s, 4),
            "tool_latency_s": round(self.tool_latency_s, 4),
            "retries": self.retries,
            "tool_retries": self.tool_retries,
            "error": self.error_text,
            "details": details,
            **source,
        }

    @classmethod
    def from_json(cls, data: Any) -> Step:
        """A recorded step; TypeError/ValueError when a field has the wrong type or is not
        finite (missing fields take their defaults)."""
        if not isinstance(data, dict):
            raise TypeError(f"a step is {type(data).__name__}, not an object")
        details = data.get("details") or {}
        if not isinstance(details, dict):
            raise TypeError("step details are not an object")
        details = dict(details)
        flags = {flag: bool(details.pop(flag, False)) for flag in _FLAGS}
        cached_usage = details.pop(CACHED_USAGE, None)
        message = fields.optional_text(data, "error")
        tool_error = details.pop("error", None)
        if message is not None:
            error: StepError | None = (
                PARSE_FAILURE if message == PARSE_ERROR else StepError(ErrorKind.MODEL, message)
            )
        elif tool_error is not None:
            error = StepError(ErrorKind.TOOL, str(tool_error))
        else:
            error = None
        usage = data.get("usage")
        source = data.get("source")
        return cls(
            index=fields.whole(data.get("index"), "index") or 0,
            thought=fields.optional_text(data, "thought") or "",
            action=fields.optional_text(data, "action"),
            call=_call(data.get("call")),
            observation=fields.optional_text(data, "observation") or "",
            raw=fields.optional_text(data, "raw") or "",
            followup_raw=fields.optional_text(data, "followup_raw"),
            usage=Usage.from_json(usage if isinstance(usage, dict) else None),
            latency_s=seconds(data.get("latency_s"), "latency_s"),
            tool_latency_s=seconds(data.get("tool_latency_s"), "tool_latency_s"),
            retries=fields.whole(data.get("retries"), "retries") or 0,
            tool_retries=fields.whole(data.get("tool_retries"), "tool_retries") or 0,
            error=error,
            details=details,
            source=None if source is None else PageSource.from_json(source),
            message=_message(data, "message"),
            followup_message=_message(data, "followup_message"),
            reply_step=fields.whole(data.get("reply_step"), "reply_step", low=1),
            cached_usage=Usage.from_json(cached_usage if isinstance(cached_usage, dict) else None),
            **flags,
        )


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
            duration_s=seconds(data.get("duration_s"), "duration_s"),
            error=None if data.get("error") is None else str(data["error"]),
        )


def _call(data: Any) -> ToolCall | None:
    """A recorded call (traces before it was recorded have none: replay reads the action)."""
    if data is None:
        return None
    if not isinstance(data, dict):
        raise TypeError(f"a step's call is {type(data).__name__}, not an object")
    name, argument = fields.optional_text(data, "name"), fields.optional_text(data, "argument")
    if not name or argument is None:
        raise TypeError("a step's call has no name or argument")
    arguments = data.get("arguments")
    if arguments is not None and not isinstance(arguments, dict):
        raise TypeError(f"a step's call arguments are {type(arguments).__name__}, not an object")
    return ToolCall(name, argument, fields.optional_text(data, "id"), arguments)


def _message(data: dict[str, Any], key: str) -> dict[str, Any] | None:
    """A recorded assistant message: absent or null is None; anything but an object is a
    TypeError (its fields are read, as hostile as when they arrived, by ``llm.toolcalls``)."""
    value = data.get(key)
    if value is not None and not isinstance(value, dict):
        raise TypeError(f"{key} is {type(value).__name__}, not an object")
    return value


def _stop_reason(text: str) -> StopReason | str:
    try:
        return StopReason(text)
    except ValueError:
        return text


def seconds(value: Any, name: str) -> float:
    """A recorded duration: a finite number ≥ 0 (missing = 0)."""
    return fields.seconds(value, name)
