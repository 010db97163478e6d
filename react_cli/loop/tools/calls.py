"""Reading a reply's native tool calls: which tool each calls, with which argument, or why
it is not a call the run can make; and calls a model wrote into its text instead.

Everything here reads what the model sent, so it is hostile: arguments are parsed by the one
gate for outside JSON (``infra.untrusted``: depth and numbers bounded) after a size check,
names are matched, never evaluated, and every pattern is linear. A call the run cannot make
(an unknown name, arguments that are not a JSON object or do not fit the tool's schema) is
read as an error the model is told in the call's ``role: tool`` answer.

Calls written into the text are taken as calls when the reply has none: a Hermes-style
``<tool_call>{"name": …, "arguments": …}</tool_call>`` block (an unclosed last one runs to the
end), or a bare ``{"name": …, "arguments": …}`` object (``parameters`` too, as Llama 3 writes).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from react_cli.core.records import ToolCall
from react_cli.infra.untrusted import BadInput, parse_json
from react_cli.llm.toolcalls import MAX_CALLS
from react_cli.loop.text.cutter import strip_think
from react_cli.tools.base import FINISH, ToolSpec
from react_cli.tools.schema import MAX_SHOWN_NAME, ArgumentError, example

MAX_ARGUMENT_CHARS = 16_000  # a call's arguments: far more than any argument of ours needs
MAX_ACTION_CHARS = 200  # an invalid call, as the step's action shows it
MAX_CONTENT_CANDIDATES = 8  # bare JSON objects tried in one reply's text
_OPEN, _CLOSE = "<tool_call>", "</tool_call>"
_BARE_CALL = re.compile(r'\{[ \t\r\n]*"name"[ \t\r\n]*:')
_PREFIX = "functions."  # some models name the namespace the template put the tools in


@dataclass(frozen=True)
class ReadCall:
    """One call of a reply as the run takes it: ``call`` (None when the run cannot make it,
    ``error`` then says why, to the model), the action as the step records it (the paper's
    ``Search[X]``, or what the model wrote), and the id its answer carries."""

    call: ToolCall | None
    action: str
    id: str
    error: str | None = None


def tool_list(specs: Sequence[ToolSpec]) -> str:
    """The tools as a prompt's ``{tools}`` names them: ``search(entity), lookup(keyword), ...``."""
    return ", ".join(f"{spec.function_name}({', '.join(_names(spec))})" for spec in specs)


def _names(spec: ToolSpec) -> list[str]:
    properties = spec.schema.get("properties")
    return [str(name) for name in properties] if isinstance(properties, dict) else []


def calls_in_text(text: str) -> tuple[list[ToolCall], str]:
    """Calls written into a reply's text, and the text without them (its thought)."""
    if _OPEN in text:
        return _tagged_calls(text)
    calls: list[ToolCall] = []
    kept, end, tried = [], 0, 0
    for match in _BARE_CALL.finditer(text):
        if match.start() < end:
            continue
        if tried >= MAX_CONTENT_CANDIDATES:  # each try may read to the end: a few at most
            break
        tried += 1
        found = _object_at(text, match.start())
        call = None if found is None else _call_of(found[0])
        if call is None or found is None:
            continue
        calls.append(call)
        kept.append(text[end : match.start()])
        end = found[1]
    kept.append(text[end:])
    return calls, "".join(kept) if calls else text


def _tagged_calls(text: str) -> tuple[list[ToolCall], str]:
    calls: list[ToolCall] = []
    kept, pos = [], 0
    while len(calls) < MAX_CALLS:
        start = text.find(_OPEN, pos)
        if start < 0:
            break
        kept.append(text[pos:start])
        body_start = start + len(_OPEN)
        close = text.find(_CLOSE, body_start)
        body_end = len(text) if close < 0 else close
        body = text[body_start:body_end].strip()
        value = _parsed(body)
        call = _call_of(value) if value is not None else None
        calls.append(call or ToolCall("", body))  # unreadable: an error for the model
        pos = len(text) if close < 0 else close + len(_CLOSE)
    kept.append(text[pos:])
    return calls, "".join(kept)


def _object_at(text: str, start: int) -> tuple[Any, int] | None:
    """The JSON object that starts at ``start`` and where it ends (bounded: see the module)."""
    try:
        _, end = json.JSONDecoder().raw_decode(text, start)
    except (ValueError, RecursionError):
        return None
    value = _parsed(text[start:end])
    return None if value is None else (value, end)


def _parsed(text: str) -> Any:
    if len(text) > MAX_ARGUMENT_CHARS:
        return None
    try:
        return parse_json(text)
    except BadInput:
        return None


def _call_of(value: Any) -> ToolCall | None:
    """``{"name": …, "arguments": …}`` (or ``parameters``) as a call, arguments as JSON text."""
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        return None
    arguments = value.get("arguments", value.get("parameters"))
    if arguments is None:
        return None
    text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return ToolCall(value["name"], text)


def read_call(wire: ToolCall, call_id: str, specs: Sequence[ToolSpec]) -> ReadCall:
    """A call as the endpoint sent it (``name`` the function's, ``argument`` its arguments'
    JSON text) read against the run's tools."""
    shown = _shown_action(wire)
    spec = _spec_named(wire.name, specs)
    if spec is None:
        name = wire.name if len(wire.name) <= MAX_SHOWN_NAME else wire.name[:MAX_SHOWN_NAME] + "…"
        said = (
            f"There is no tool named {json.dumps(name, ensure_ascii=False)}"
            if name
            else ('That is not a call: a call has a "name" and "arguments"')
        )
        return ReadCall(None, shown, call_id, f"Invalid call. {said}. {_valid(specs)}")
    try:
        arguments = _arguments(wire.argument, spec)
        argument = spec.argument_from(arguments)
        if spec.parameters is None:  # one text, on one line, as the text protocol reads it
            argument = " ".join(argument.split())
    except ArgumentError as exc:
        return ReadCall(None, shown, call_id, f"Invalid call: {exc}.")
    if not argument.strip() and spec.name != FINISH.name:
        how = f"call {spec.function_name} with {example(spec.schema)}"
        return ReadCall(
            None, shown, call_id, f"Invalid call: {spec.function_name} needs a value: {how}."
        )
    call = ToolCall(spec.name, argument, call_id, arguments)
    return ReadCall(call, str(call), call_id)


def _arguments(text: str, spec: ToolSpec) -> Any:
    """The arguments' JSON text parsed (empty: none); doubly encoded JSON text taken too."""
    how = f"call {spec.function_name} with {example(spec.schema)}"
    if len(text) > MAX_ARGUMENT_CHARS:
        raise ArgumentError(f"the arguments of {spec.function_name} are too long: {how}")
    if not text.strip():
        return {}
    try:
        value = parse_json(text)
        if isinstance(value, str) and value.lstrip().startswith("{"):
            value = parse_json(value)
    except BadInput as exc:
        raise ArgumentError(
            f"the arguments of {spec.function_name} are not JSON ({exc}): {how}"
        ) from None
    return value


def _spec_named(name: str, specs: Sequence[ToolSpec]) -> ToolSpec | None:
    wanted = name.strip().removeprefix(_PREFIX).casefold()
    for spec in specs:
        if wanted in (spec.function_name.casefold(), spec.name.casefold()):
            return spec
    return None


def _valid(specs: Sequence[ToolSpec]) -> str:
    names = [spec.function_name for spec in specs]
    listed = ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else names[0]
    return f"Call one of your tools: {listed}."


def no_call_hint(specs: Sequence[ToolSpec]) -> str:
    """The observation of a step whose replies called no tool."""
    return f"Invalid action: no tool was called. {_valid(specs)}"


def _shown_action(wire: ToolCall) -> str:
    """An invalid call as its step's action: ``name[arguments]`` on one line, clipped."""
    text = " ".join(f"{wire.name}[{wire.argument}]".split())
    return text if len(text) <= MAX_ACTION_CHARS else text[: MAX_ACTION_CHARS - 1] + "…"


def wire_call(call: ToolCall, specs: Sequence[ToolSpec], call_id: str) -> ToolCall:
    """A call the run made as the endpoint would send it: the function's name and its
    arguments' JSON text (a tool the set no longer holds: its name, its argument as text)."""
    spec = next((s for s in specs if s.name.casefold() == call.name.casefold()), None)
    if spec is None:
        name = ToolSpec(call.name, "argument", "").function_name  # named by the one rule
        return ToolCall(name, json.dumps({"argument": call.argument}, ensure_ascii=False), call_id)
    if spec.parameters is not None:  # its argument is the arguments' JSON text
        return ToolCall(spec.function_name, call.argument, call_id)
    arguments = json.dumps({spec.argument: call.argument}, ensure_ascii=False)
    return ToolCall(spec.function_name, arguments, call_id)


def thought_of(text: str) -> str:
    """A reply's text as its step's thought: reasoning blocks dropped, one line."""
    return " ".join(strip_think(text).split())


def kept_text(text: str) -> str:
    """A reply's text as the chat goes on with it: reasoning blocks dropped, ends stripped."""
    return strip_think(text).strip()
