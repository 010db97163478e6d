"""A trace's trajectory as Inspect AI chat messages: one sample's ``messages``, and the model
calls they came from (``Turn``: what ``share.inspect_events`` makes the transcript's events of).

The prompt template is the system message and the question the user's; each step is the
assistant's message (its thought) with the calls of its actions as tool calls (their arguments
named as the tool's schema names them), each answered by the tool's message (a refused call as
Inspect's approvers reject one, a failed one with its error); a step without a valid action is
the model's text and what it was told; the samples of the sampling methods are the assistant's
messages that follow. The trace is read as untrusted input from the eval folder (one outside
it is not read), its text cleaned and clipped (``share.text.shown``), and the lists stop at
:data:`MAX_ITEMS`.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from react_cli.core.errors import TraceError
from react_cli.core.records import ToolCall, Usage
from react_cli.core.trajectory import Action, ErrorKind, Step, refusal_text
from react_cli.share.evaldir import inside
from react_cli.share.text import one_line, shown
from react_cli.tools.base import FINISH, ToolSpec
from react_cli.tools.calls import call_arguments
from react_cli.traces.trace import Trace

MAX_ITEMS = 500
"""Steps and samples exported per question at most (a hand-made trace may hold millions)."""
MAX_DEPTH = 5
"""Levels of a call's JSON arguments kept (deeper ones become their JSON text)."""
Json = dict[str, Any]


@dataclass(frozen=True)
class Called:
    """A tool call of a turn: as the assistant's message holds it, and its tool's answer
    (None for Finish, which runs nothing)."""

    call: Json
    answer: Json | None
    latency_s: float


@dataclass(frozen=True)
class Turn:
    """One model call: ``messages[:given]`` were its input, ``output`` its message."""

    given: int
    output: Json
    usage: Usage
    latency_s: float
    retries: int = 0
    error: str | None = None
    max_tokens_reached: bool = False
    calls: tuple[Called, ...] = ()


@dataclass
class Trajectory:
    """A question's messages, the model calls they came from, the tools the model was told
    of, when the run started, and what the metadata should say of it (no trace, a trace that
    could not be read, lists cut)."""

    messages: list[Json]
    turns: list[Turn] = field(default_factory=list)
    tools: tuple[ToolSpec, ...] = ()
    created: str | None = None
    notes: Json = field(default_factory=dict)


def trajectory(directory: Path, question_text: str, name: str | None) -> Trajectory:
    """The trajectory of a question of the eval folder ``directory``, from its trace (``name``,
    in the folder)."""
    question: Json = {"role": "user", "content": shown(question_text)}
    path = None if name is None else inside(directory, name)
    if path is None:
        return Trajectory([question], notes={"trajectory": "no trace available for this question"})
    try:
        trace = Trace.read(path)
    except TraceError as exc:  # said of the trace's name in the folder, not of a local path
        reason = str(exc).removeprefix(f"{path}: ")
        return Trajectory([question], notes={"trajectory": shown(f"{name}: {reason}")})
    messages: list[Json] = []
    if trace.prompt_template is not None:
        messages.append({"role": "system", "content": shown(trace.prompt_template)})
    messages.append(question)
    made = Trajectory(messages, tools=trace.tool_specs, created=trace.created)
    transcript = _Transcript(trace.tool_specs)
    steps, samples = trace.run.steps, trace.record.samples
    for step in steps[:MAX_ITEMS]:
        said, turn = transcript.step(step, len(messages))
        messages += said
        made.turns.append(turn)
    given = len(messages)
    for sample in samples[:MAX_ITEMS]:
        message = {"role": "assistant", "content": shown(sample.raw)}
        messages.append(message)
        made.turns.append(Turn(given, message, sample.usage, sample.latency_s, sample.retries))
    cut = {
        "steps_not_exported": max(0, len(steps) - MAX_ITEMS) or None,
        "samples_not_exported": max(0, len(samples) - MAX_ITEMS) or None,
    }
    made.notes = {key: value for key, value in cut.items() if value is not None}
    return made


class _Transcript:
    """A trace's steps as messages: tool calls named as the run's tools spell them, their
    arguments as the tool's schema names them, and each with an id unique in the sample (the
    call's own where the endpoint gave one)."""

    def __init__(self, specs: tuple[ToolSpec, ...]) -> None:
        self.specs = {spec.name.casefold(): spec for spec in (*specs, FINISH)}
        self.ids: set[str] = set()

    def step(self, step: Step, given: int) -> tuple[list[Json], Turn]:
        """The step's messages, and its model call (its input: the ``given`` messages before
        them)."""
        acted = [] if step.failed(ErrorKind.MODEL) else step.actions
        calls = [(position, a, a.call) for position, a in enumerate(acted) if a.call is not None]
        hints: list[Json] = [
            {"role": "user", "content": shown(action.observation)}
            for action in step.actions
            if action.call is None and action.observation
        ]
        error = None if step.error is None else shown(step.error.message)
        reached = any(reply.max_tokens_reached for reply in step.replies)
        if not calls:  # no valid action (or no reply): the model's text, what it was told
            text = "".join(reply.text for reply in step.replies)
            said: Json = {"role": "assistant", "content": shown(text)}
            turn = Turn(given, said, step.usage, step.latency_s, step.retries, error, reached)
            return [said, *hints], turn
        said = {"role": "assistant", "content": shown(step.thought), "tool_calls": []}
        answers: list[Json] = []
        made: list[Called] = []
        for position, action, call in calls:
            call_id = self._id(call, step.label(position))
            name = one_line(call.name, 100)
            arguments = call_arguments(call, self.specs.get(call.name.casefold()))
            tool_call: Json = {
                "id": call_id,
                "function": name,
                "arguments": {one_line(key, 100): _cleaned(v) for key, v in arguments.items()},
                "type": "function",
            }
            said["tool_calls"].append(tool_call)
            answer = None
            if call.name.casefold() != FINISH.name.casefold():
                answer = _answer(action, call_id, name)
                answers.append(answer)
            made.append(Called(tool_call, answer, action.latency_s))
        turn = Turn(
            given, said, step.usage, step.latency_s, step.retries, error, reached, tuple(made)
        )
        return [said, *answers, *hints], turn

    def _id(self, call: ToolCall, label: str) -> str:
        wanted = one_line(call.id, 100) if call.id else f"step{label}"
        unique, count = wanted, 1
        while unique in self.ids:  # a repeated id (a hand-made trace): made unique
            count += 1
            unique = f"{wanted}-{count}"
        self.ids.add(unique)
        return unique


def _cleaned(value: Any, depth: int = 0) -> Any:
    """A call's argument fit for the log: its texts shown, its lists and objects cut at
    :data:`MAX_ITEMS` entries and :data:`MAX_DEPTH` levels (deeper: their JSON text)."""
    if isinstance(value, str):
        return shown(value)
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if depth >= MAX_DEPTH:
        return shown(json.dumps(value, ensure_ascii=False, default=str))
    if isinstance(value, list):
        return [_cleaned(item, depth + 1) for item in value[:MAX_ITEMS]]
    if isinstance(value, dict):
        items = list(value.items())[:MAX_ITEMS]
        return {one_line(str(key), 100): _cleaned(item, depth + 1) for key, item in items}
    return shown(str(value))


def _answer(action: Action, call_id: str, name: str) -> Json:
    """The tool's message answering a call: a refused one as Inspect's approvers reject a call
    (nothing ran), a failed one with its error."""
    answer: Json = {
        "role": "tool",
        "content": shown(action.observation),
        "tool_call_id": call_id,
        "function": name,
    }
    if action.refused is not None:
        answer["error"] = {"type": "approval", "message": shown(refusal_text(action.refused))}
    elif action.error is not None:
        answer["error"] = {"type": "unknown", "message": shown(action.error)}
    return answer


def model_usage(usage: Usage) -> dict[str, int]:
    """``usage`` as Inspect's ``ModelUsage`` (a model event's, a sample's, the eval's)."""
    return {
        "input_tokens": usage.prompt_tokens,
        "output_tokens": usage.completion_tokens,
        "total_tokens": usage.total_tokens,
    }
