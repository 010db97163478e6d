"""Chosen runs written as a prompt file, in the protocol's own form.

The text protocol's prompt is the instruction of the prompt the runs were made with (the
paper's header, its ``{tools}`` marker kept), the exemplars as Question / Thought / Action /
Observation blocks as the paper's own examples are written, then the template's question
line. The tools protocol's is the instruction (the system message), the exemplars as example
messages (the question, each reply with its calls, each call answered by its observation,
``finish`` by the answer), one JSON object a line, then the question line. Either way a
long observation is cut as the prompt's own examples are: at a sentence's end, within the
longest observation of the paper's examples for the task (:func:`observation_limit`).

The front matter says what the prompt is and where it came from: method, task, protocol, the
exemplars' ``questions`` (ids and text hashes: ``eval`` refuses a dataset holding them), one
``source`` line per exemplar (eval folder, row, trace file and its SHA-256), the ``model`` and
method the runs were made with, and the ``selection`` settings.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from react_cli.core.method import Method, Task
from react_cli.core.records import ProtocolName
from react_cli.core.trajectory import Step
from react_cli.distill.select import Candidate
from react_cli.llm.toolcalls import assistant_message
from react_cli.loop.prompts import QUESTION_MARKER, PromptTemplate, load_prompt, shipped_name
from react_cli.loop.tools.calls import wire_call

QUESTION_LABELS = {Task.HOTPOTQA: "Question", Task.FEVER: "Claim"}
EXAMPLES_LINE = "Here are some examples."


def one_line(text: str) -> str:
    """Text on one line: a front matter value, a thought."""
    return " ".join(text.split())


def observation_limit(task: Task) -> int:
    """The longest observation of the paper's own examples for ``task`` (249 characters for
    HotpotQA's), which a distilled prompt's observations are cut to."""
    text = load_prompt(str(task)).text
    lengths = [
        len(line.split(": ", 1)[1])
        for line in text.splitlines()
        if line.startswith("Observation ") and ": " in line
    ]
    return max(lengths, default=250)


def cut_observation(text: str, limit: int) -> str:
    """``text`` on one line, cut after the last sentence that ends within ``limit``
    characters (at a word, with an ellipsis, when even the first sentence is longer)."""
    text = one_line(text)
    if len(text) <= limit:
        return text
    head = text[:limit]
    end = max(head.rfind(". "), head.rfind("? "), head.rfind("! "))
    if end > 0:
        return head[: end + 1]
    space = head.rfind(" ")
    return (head[:space] if space > 0 else head).rstrip() + " …"


@dataclass(frozen=True)
class Parts:
    """A prompt's instruction and its question line (``Question: {question}``)."""

    instruction: str
    question_line: str


def parts_of(template: PromptTemplate, protocol: ProtocolName) -> Parts:
    """The instruction and question line of the prompt the runs were made with, if it speaks
    ``protocol``; else of the shipped prompt of its task and method in ``protocol``."""
    if template.protocol is not protocol or QUESTION_MARKER not in template.text:
        template = load_prompt(shipped_name(template.task, template.method, protocol))
    text = template.text
    line = text.rfind("\n", 0, text.find(QUESTION_MARKER)) + 1
    head, question_line = text[:line], text[line:]
    if protocol is ProtocolName.TOOLS:
        return Parts(template.chat("")[0], question_line)
    label = f"{QUESTION_LABELS[template.task]}:"
    rows = head.split("\n")
    first = next((i for i, row in enumerate(rows) if row.startswith(label)), len(rows))
    return Parts("\n".join(rows[:first]).rstrip("\n"), question_line)


def text_exemplar(candidate: Candidate, limit: int, label: str) -> str:
    """One run as the paper's examples are written."""
    thoughts = candidate.method is not Method.ACT
    lines = [f"{label}: {one_line(candidate.question)}"]
    for step in candidate.trace.run.steps:
        k = step.index
        if thoughts:
            lines.append(f"Thought {k}: {one_line(step.thought)}")
        for action in step.actions:
            assert action.call is not None  # the rules keep runs of valid actions only
            lines.append(f"Action {k}: {one_line(str(action.call))}")
            if action.call.name.casefold() != "finish":
                lines.append(f"Observation {k}: {cut_observation(action.observation, limit)}")
    return "\n".join(lines)


def example_messages(
    candidate: Candidate, number: int, limit: int | None, question_line: str
) -> list[dict[str, Any]]:
    """One run as the chat of the tools protocol holds it: the question, each reply with its
    calls (ids ``example_N_K``), each call answered by its observation (cut to ``limit``
    unless None), ``finish`` by the answer."""
    specs = candidate.trace.tool_specs
    user = question_line.replace(QUESTION_MARKER, one_line(candidate.question), 1).strip()
    messages: list[dict[str, Any]] = [{"role": "user", "content": user}]
    for step in candidate.trace.run.steps:
        calls = []
        for count, action in enumerate(step.actions, start=1):
            assert action.call is not None
            calls.append(wire_call(action.call, specs, f"example_{number}_{step.index}_{count}"))
        thought = one_line(step.thought) if candidate.method is not Method.ACT else ""
        messages.append(assistant_message(thought, tuple(calls)))
        for action, call in zip(step.actions, calls, strict=True):
            assert action.call is not None
            finish = action.call.name.casefold() == "finish"
            content = _answer(candidate) if finish else action.observation
            if limit is not None and not finish:
                content = cut_observation(content, limit)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": content})
    return messages


def _answer(candidate: Candidate) -> str:
    return candidate.trace.run.answer or ""


def text_steps(step: Step, thoughts: bool) -> str:
    """A step's thought and action as the text protocol writes them (no observation)."""
    lines = [f"Thought {step.index}: {one_line(step.thought)}"] if thoughts else []
    lines += [f"Action {step.index}: {one_line(str(a.call))}" for a in step.actions]
    return "\n".join(lines)


@dataclass(frozen=True)
class Provenance:
    """What the front matter records beside the exemplars."""

    model: str
    distilled: str
    selection: str


def prompt_file(
    chosen: Sequence[Candidate],
    protocol: ProtocolName,
    provenance: Provenance,
    redact: Callable[[str], str],
) -> str:
    """The prompt file's text: front matter, instruction, exemplars, question line."""
    first = chosen[0]
    template = first.trace.template()
    task, method = template.task, first.method
    task = task_of(first)
    template = PromptTemplate(template.name, template.text, method, task, template.protocol)
    parts = parts_of(template, protocol)
    limit = observation_limit(task)
    keys = [key for candidate in chosen for key in candidate.keys]
    head = [
        "---",
        f"method: {method}",
        f"task: {task}",
        f"protocol: {protocol}",
        f"questions: {', '.join(one_line(key).replace(',', ' ') for key in keys)}",
        f"model: {one_line(provenance.model)}",
        f"distilled: {one_line(provenance.distilled)}",
        f"selection: {one_line(provenance.selection)}",
        *(
            f"source: {one_line(str(c.folder))} row {c.row.index} {one_line(c.trace_name)} "
            f"sha256 {c.trace_sha256}"
            for c in chosen
        ),
        "---",
    ]
    if protocol is ProtocolName.TEXT:
        label = QUESTION_LABELS[task]
        instruction = parts.instruction.rstrip("\n")
        if instruction and EXAMPLES_LINE not in instruction:
            instruction += f"\n{EXAMPLES_LINE}"
        blocks = "\n".join(text_exemplar(c, limit, label) for c in chosen)
        head_text = f"{instruction}\n\n" if instruction else ""  # Act's prompt has none
        body = head_text + blocks + "\n" + parts.question_line
    else:
        rows = [
            json.dumps(message, ensure_ascii=False)
            for number, c in enumerate(chosen, start=1)
            for message in example_messages(c, number, limit, parts.question_line)
        ]
        body = parts.instruction + "\n" + "\n".join(rows) + "\n" + parts.question_line
    return redact("\n".join(head) + "\n" + body)


def task_of(candidate: Candidate) -> Task:
    """The task of the eval the run came from (FEVER claims, else questions)."""
    return Task.FEVER if candidate.summary.dataset.format.value == "fever" else Task.HOTPOTQA
