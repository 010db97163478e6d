"""Native tool calls as an endpoint sends them: assembled from a stream's deltas, read from a
message, and written back as the assistant message the chat goes on with.

Every byte here is the endpoint's, so every field is checked and bounded: at most
:data:`MAX_CALLS` calls a reply, names and ids cut at :data:`MAX_NAME_CHARS`, arguments at
the reader's text limit. A stream's deltas are assembled by ``index``: OpenAI sends a call's id
and name in its first delta and its arguments in fragments; llama-cpp-python repeats the index,
id and name in every delta, so an id or name is taken once, never concatenated. Arguments sent
as a JSON object instead of its text (some servers) become its text. The calls come out as
``ToolCall`` values whose ``name`` is the function's and ``argument`` the arguments' JSON text,
unread: the protocol reads them (``loop.tools``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from react_cli.core.records import ToolCall
from react_cli.infra.untrusted import dump_json

MAX_CALLS = 32
MAX_NAME_CHARS = 256


@dataclass
class _Partial:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)
    size: int = 0


class CallAssembler:
    """The calls of one streamed reply, from its ``delta.tool_calls`` entries; arguments beyond
    ``max_chars`` in all are dropped (the call then reads as malformed)."""

    def __init__(self, max_chars: int) -> None:
        self.max_chars = max_chars
        self._calls: dict[int, _Partial] = {}
        self._last: int | None = None
        self._size = 0

    def feed(self, deltas: Any) -> None:
        """One chunk's ``tool_calls`` (anything else is ignored)."""
        if not isinstance(deltas, list):
            return
        for delta in deltas:
            if isinstance(delta, dict):
                self._feed_one(delta)

    def _feed_one(self, delta: dict[str, Any]) -> None:
        function = delta.get("function")
        function = function if isinstance(function, dict) else {}
        call_id, name = _text(delta.get("id")), _text(function.get("name"))
        index = delta.get("index")
        if isinstance(index, bool) or not isinstance(index, int):
            index = self._index_of(call_id)
        partial = self._calls.get(index)
        if partial is None:
            if len(self._calls) >= MAX_CALLS:
                return
            partial = self._calls[index] = _Partial()
        self._last = index
        partial.id = partial.id or call_id
        partial.name = partial.name or name
        piece = _arguments_text(function.get("arguments"))
        room = self.max_chars - self._size
        if piece and room > 0:
            piece = piece[:room]
            partial.arguments.append(piece)
            self._size += len(piece)

    def _index_of(self, call_id: str) -> int:
        """A delta without an index: the call of its id, else the last call, else a new one."""
        for index, partial in self._calls.items():
            if call_id and partial.id == call_id:
                return index
        if self._last is not None and not call_id:
            return self._last
        return max(self._calls, default=-1) + 1

    def calls(self) -> tuple[ToolCall, ...]:
        return tuple(
            ToolCall(partial.name, "".join(partial.arguments), partial.id or None)
            for _, partial in sorted(self._calls.items())
        )


def calls_of(message: Any, max_chars: int) -> tuple[ToolCall, ...]:
    """The calls of a whole assistant message (a JSON answer's, or a recorded one)."""
    tool_calls = message.get("tool_calls") if isinstance(message, dict) else None
    assembler = CallAssembler(max_chars)
    if isinstance(tool_calls, list):
        assembler.feed([{**c, "index": i} for i, c in enumerate(tool_calls) if isinstance(c, dict)])
    return assembler.calls()


def assistant_message(content: str, calls: tuple[ToolCall, ...]) -> dict[str, Any]:
    """The assistant message the chat goes on with: its text (never null: some servers refuse
    it) and its calls."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [
            {
                "id": call.id or "",
                "type": "function",
                "function": {"name": call.name, "arguments": call.argument},
            }
            for call in calls
        ]
    return message


def _text(value: Any) -> str:
    return value[:MAX_NAME_CHARS] if isinstance(value, str) else ""


def _arguments_text(value: Any) -> str:
    """A delta's arguments as text: a fragment, or an object some servers send whole."""
    if isinstance(value, str):
        return value
    if isinstance(value, (dict, list)):
        try:
            return dump_json(value)
        except (ValueError, RecursionError):
            return ""
    return "" if value is None else json.dumps(value)
