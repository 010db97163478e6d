"""Chosen runs as fine-tuning records: OpenAI's chat format or ShareGPT's, JSON Lines.

Each run is one record: the instruction as the system message, the question as the user's,
each step's thought and action as the assistant's, each observation as the user's (the text
protocol) or as a ``tool`` message answering the call by its id (native tool calls, the
assistant's calls as ``tool_calls``, the tools declared in the record's ``tools``). The run
ends with the assistant's Finish. Observations are kept whole: a fine-tuned model is shown
whole observations when it runs. ShareGPT's roles are ``system``, ``human``, ``gpt``, and
for tool calls ``function_call`` (the call as JSON: ShareGPT has no place for a thought
beside a call, so the tools form keeps it in the call's ``thought``) and ``observation``.

Every record is checked (:func:`check_record`) before it is written, and the same check
reads a file back: roles in order, every tool message answering a call made before it.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from typing import Any

from react_cli.core.errors import UsageError
from react_cli.core.method import Method
from react_cli.core.records import ProtocolName, StrEnum
from react_cli.distill.render import (
    EXAMPLES_LINE,
    QUESTION_LABELS,
    Parts,
    example_messages,
    one_line,
    parts_of,
    task_of,
    text_steps,
)
from react_cli.distill.select import Candidate
from react_cli.loop.prompts import PromptTemplate


class RecordFormat(StrEnum):
    """``distill --format``: a prompt file, or fine-tuning records."""

    PROMPT = "prompt"
    OPENAI_CHAT = "openai-chat"
    SHAREGPT = "sharegpt"


FORMATS = tuple(RecordFormat)


def _parts(candidate: Candidate, protocol: ProtocolName) -> Parts:
    template = candidate.trace.template()
    template = PromptTemplate(
        template.name, template.text, candidate.method, task_of(candidate), template.protocol
    )
    parts = parts_of(template, protocol)
    instruction = parts.instruction.replace(EXAMPLES_LINE, "").strip()
    return Parts(instruction, parts.question_line)


def chat_record(candidate: Candidate, protocol: ProtocolName) -> dict[str, Any]:
    """One run in OpenAI's chat fine-tuning format."""
    parts = _parts(candidate, protocol)
    system = {"role": "system", "content": parts.instruction}
    if protocol is ProtocolName.TOOLS:
        messages = example_messages(candidate, 1, None, parts.question_line)
        if messages[-1]["role"] == "tool":  # the answer to finish: the run ends at the call
            messages.pop()
        tools = [spec.declaration() for spec in candidate.trace.tool_specs]
        return {"messages": [system, *messages], "tools": tools}
    thoughts = candidate.method is not Method.ACT
    label = QUESTION_LABELS[task_of(candidate)]
    messages = [system, {"role": "user", "content": f"{label}: {one_line(candidate.question)}"}]
    for step in candidate.trace.run.steps:
        messages.append({"role": "assistant", "content": text_steps(step, thoughts)})
        for action in step.actions:
            assert action.call is not None
            if action.call.name.casefold() != "finish":
                text = f"Observation {step.index}: {action.observation}"
                messages.append({"role": "user", "content": text})
    return {"messages": messages}


def sharegpt_record(candidate: Candidate, protocol: ProtocolName) -> dict[str, Any]:
    """One run in ShareGPT's format (as LLaMA-Factory reads it)."""
    chat = chat_record(candidate, protocol)
    turns: list[dict[str, str]] = []
    for message in chat["messages"][1:]:
        role = message["role"]
        if role == "user":
            turns.append({"from": "human", "value": message["content"]})
        elif role == "tool":
            turns.append({"from": "observation", "value": message["content"]})
        elif message.get("tool_calls"):
            for call in message["tool_calls"]:
                function = call["function"]
                value = {
                    "name": function["name"],
                    "arguments": json.loads(function["arguments"] or "{}"),
                    "thought": message["content"],
                }
                turns.append({"from": "function_call", "value": json.dumps(value)})
        else:
            turns.append({"from": "gpt", "value": message["content"]})
    record: dict[str, Any] = {"conversations": turns, "system": chat["messages"][0]["content"]}
    if "tools" in chat:
        record["tools"] = json.dumps(chat["tools"], ensure_ascii=False)
    return record


def records(
    chosen: Sequence[Candidate],
    form: RecordFormat,
    protocol: ProtocolName,
    redact: Callable[[str], str],
) -> list[dict[str, Any]]:
    """The runs as records of ``form``, every text redacted, each checked."""
    make = chat_record if form is RecordFormat.OPENAI_CHAT else sharegpt_record
    made = [_redacted(make(candidate, protocol), redact) for candidate in chosen]
    for number, record in enumerate(made, start=1):
        problem = check_record(record, form)
        if problem is not None:  # a bug of this module, never of the runs
            raise AssertionError(f"record {number}: {problem}")
    return made


def _redacted(value: Any, redact: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {key: _redacted(item, redact) for key, item in value.items()}
    if isinstance(value, list):
        return [_redacted(item, redact) for item in value]
    return value


def check_record(record: Any, form: RecordFormat) -> str | None:
    """What is wrong with a record of ``form``, or None."""
    if not isinstance(record, dict):
        return "not a JSON object"
    if form is RecordFormat.OPENAI_CHAT:
        return _check_chat(record.get("messages"))
    return _check_sharegpt(record.get("conversations"), record.get("system"))


def _check_chat(messages: Any) -> str | None:
    if not isinstance(messages, list) or len(messages) < 3:
        return "no messages (a system, a user and an assistant message at least)"
    if messages[0].get("role") != "system" or messages[1].get("role") != "user":
        return "the messages do not start with the system's and the user's"
    open_calls: set[str] = set()
    for number, message in enumerate(messages, start=1):
        if not isinstance(message, dict) or not isinstance(message.get("content"), str):
            return f"message {number} has no text content"
        role = message.get("role")
        if role == "assistant":
            calls = message.get("tool_calls", [])
            if not isinstance(calls, list):
                return f"message {number}: tool_calls is not a list"
            for call in calls:
                function = call.get("function") if isinstance(call, dict) else None
                if not isinstance(function, dict) or not isinstance(call.get("id"), str):
                    return f"message {number}: a call without an id or function"
                try:
                    json.loads(function.get("arguments", ""))
                except (TypeError, ValueError):
                    return f"message {number}: a call's arguments are not JSON"
                open_calls.add(call["id"])
        elif role == "tool":
            if message.get("tool_call_id") not in open_calls:
                return f"message {number} answers no call made before it"
            open_calls.discard(message["tool_call_id"])
        elif role not in ("system", "user"):
            return f"message {number} has the role {str(role)[:20]!r}"
    if messages[-1].get("role") != "assistant":
        return "the last message is not the assistant's"
    return None


_ASSISTANT = ("gpt", "function_call")


def _check_sharegpt(turns: Any, system: Any) -> str | None:
    if not isinstance(system, str):
        return "no system text"
    if not isinstance(turns, list) or len(turns) < 2:
        return "no conversations (a human and a gpt turn at least)"
    for number, turn in enumerate(turns, start=1):
        if not isinstance(turn, dict) or not isinstance(turn.get("value"), str):
            return f"turn {number} has no text value"
        speaker = turn.get("from")
        assistant = number % 2 == 0
        if assistant and speaker not in _ASSISTANT:
            return f"turn {number} should be gpt's or a function_call, not {speaker!r}"
        if not assistant and speaker not in ("human", "observation"):
            return f"turn {number} should be human's or an observation, not {speaker!r}"
        if speaker == "function_call":
            try:
                call = json.loads(turn["value"])
            except ValueError:
                return f"turn {number}: the call is not JSON"
            if not isinstance(call, dict) or not isinstance(call.get("name"), str):
                return f"turn {number}: the call has no name"
    if turns[-1].get("from") not in _ASSISTANT:
        return "the last turn is not the assistant's"
    return None


def split(made: list[dict[str, Any]], share: float) -> tuple[list[Any], list[Any]]:
    """``made`` split into training and validation records (``--split``: the training
    share), shuffled by a fixed seed; at least one of each when there are two records."""
    if not 0 < share < 1:
        raise UsageError(f"--split must be between 0 and 1 (the training share), not {share:g}")
    shuffled = list(made)
    random.Random(0).shuffle(shuffled)
    cut = round(len(shuffled) * share)
    if len(shuffled) >= 2:
        cut = min(max(cut, 1), len(shuffled) - 1)
    return shuffled[:cut], shuffled[cut:]


def read_records(text: str, form: RecordFormat) -> list[dict[str, Any]]:
    """A JSON Lines file of records read back and checked; ValueError says which line."""
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        record = json.loads(line)
        problem = check_record(record, form)
        if problem is not None:
            raise ValueError(f"line {number}: {problem}")
        out.append(record)
    return out
