"""A trace's trajectory as Inspect AI chat messages: one sample's ``messages``.

The prompt template is the system message and the question the user's; each step is the
assistant's message (its thought) with the calls of its actions as tool calls, each answered
by the tool's message (a refused call as Inspect's approvers reject one, a failed one with its
error); a step without a valid action is the model's text and what it was told; the samples
of the sampling methods are the assistant's messages that follow. The trace is read as
untrusted input from the eval folder (one outside it is not read), its text cleaned and
clipped (``share.text.shown``), and the lists stop at :data:`MAX_ITEMS`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from react_cli.core.errors import TraceError
from react_cli.core.records import ToolCall
from react_cli.core.trajectory import Action, ErrorKind, Step, refusal_text
from react_cli.share.evaldir import inside
from react_cli.share.text import one_line, shown
from react_cli.tools.base import FINISH, ToolSpec
from react_cli.traces.trace import Trace

MAX_ITEMS = 500
"""Steps and samples exported per question at most (a hand-made trace may hold millions)."""
Json = dict[str, Any]


def trajectory_messages(
    directory: Path, question_text: str, name: str | None
) -> tuple[list[Json], Json]:
    """The trajectory of a question of the eval folder ``directory`` as chat messages, from
    its trace (``name``, in the folder); and what the metadata should say about it (no trace,
    a trace that could not be read, lists cut)."""
    question: Json = {"role": "user", "content": shown(question_text)}
    path = None if name is None else inside(directory, name)
    if path is None:
        return [question], {"trajectory": "no trace available for this question"}
    try:
        trace = Trace.read(path)
    except TraceError as exc:  # said of the trace's name in the folder, not of a local path
        reason = str(exc).removeprefix(f"{path}: ")
        return [question], {"trajectory": shown(f"{name}: {reason}")}
    messages: list[Json] = []
    if trace.prompt_template is not None:
        messages.append({"role": "system", "content": shown(trace.prompt_template)})
    messages.append(question)
    transcript = _Transcript(trace.tool_specs)
    steps, samples = trace.run.steps, trace.record.samples
    for step in steps[:MAX_ITEMS]:
        messages += transcript.step(step)
    messages += [
        {"role": "assistant", "content": shown(sample.raw)} for sample in samples[:MAX_ITEMS]
    ]
    cut = {
        "steps_not_exported": max(0, len(steps) - MAX_ITEMS) or None,
        "samples_not_exported": max(0, len(samples) - MAX_ITEMS) or None,
    }
    return messages, {key: value for key, value in cut.items() if value is not None}


class _Transcript:
    """A trace's steps as messages: tool calls named as the run's tools spell them, their
    argument under the name their declaration gives it, and each with an id unique in the
    sample (the call's own where the endpoint gave one)."""

    def __init__(self, specs: tuple[ToolSpec, ...]) -> None:
        self.arguments = {spec.name.casefold(): spec.argument for spec in (*specs, FINISH)}
        self.ids: set[str] = set()

    def step(self, step: Step) -> list[Json]:
        acted = [] if step.failed(ErrorKind.MODEL) else step.actions
        calls = [(position, a, a.call) for position, a in enumerate(acted) if a.call is not None]
        hints: list[Json] = [
            {"role": "user", "content": shown(action.observation)}
            for action in step.actions
            if action.call is None and action.observation
        ]
        if not calls:  # no valid action (or no reply): the model's text, what it was told
            text = "".join(reply.text for reply in step.replies)
            return [{"role": "assistant", "content": shown(text)}, *hints]
        said: Json = {"role": "assistant", "content": shown(step.thought), "tool_calls": []}
        answers: list[Json] = []
        for position, action, call in calls:
            call_id = self._id(call, step.label(position))
            name = one_line(call.name, 100)
            argument = self.arguments.get(call.name.casefold(), "argument")
            said["tool_calls"].append(
                {
                    "id": call_id,
                    "function": name,
                    "arguments": {one_line(argument, 100): shown(call.argument)},
                    "type": "function",
                }
            )
            if call.name.casefold() != FINISH.name.casefold():
                answers.append(_answer(action, call_id, name))
        return [said, *answers, *hints]

    def _id(self, call: ToolCall, label: str) -> str:
        wanted = one_line(call.id, 100) if call.id else f"step{label}"
        unique, count = wanted, 1
        while unique in self.ids:  # a repeated id (a hand-made trace): made unique
            count += 1
            unique = f"{wanted}-{count}"
        self.ids.add(unique)
        return unique


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
