"""A server's messages read as JSON-RPC whatever they hold: an answer that cannot be read
fails its request at once, saying why, instead of leaving it to wait out its time limit.

The SDK's reader (pydantic's JSON parser) refuses a message nested past its depth (about 200
levels), as it refuses one that is not JSON or not JSON-RPC, and the session drops what it
cannot read: the request it answered waits its whole time limit, and an ``initialize`` or a
tool listing refuses the whole server after it. Here an unreadable message that answers a
request (it has a top-level ``id`` and no ``method``) becomes an error answer to that request
(``PARSE_ERROR``, marked :data:`UNREADABLE`), and an unreadable tool listing keeps every tool
it can read, leaving out (and noting) those it cannot. The top level is found by
:func:`children`, a scan that never descends: one pass over the bytes, no recursion, whatever
the depth. Both transports use it: stdio's reader for each line, HTTP for each answer to a
request (a JSON body, or each event of a stream).
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any

import mcp_types
from mcp.shared.message import SessionMessage
from mcp_types import methods
from mcp_types.version import LATEST_HANDSHAKE_VERSION
from pydantic import ValidationError

UNREADABLE = {"react_cli": "unreadable"}
"""The ``data`` of an error answer made here for a message that could not be read."""
LISTING = "tools/list"
_ANSWERS = frozenset({"result", "error"})  # what an answer holds after its id
MAX_STEPS = 200_000
"""The most pieces (strings, brackets, commas) a scan looks at: about a tenth of a second."""
Asked = MutableMapping[int | str, str]
"""The requests sent and not yet answered: each id with its method."""

_NEXT = re.compile(rb'"|[{\[]|[}\]]|[,:]')  # what matters at the top level, one at a time
_DEEPER = re.compile(rb'"|[{\[]+|[}\]]+')  # below it: strings, and runs of brackets
_STRING_REST = re.compile(rb'[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)  # after its opening quote
_SPACE = b" \t\r\n"
Child = tuple[str | None, int, int]  # a member's key (None in an array) and its value's span


class MessageTooLarge(Exception):
    """An event of a stream grew past its limit without ending."""


@dataclass
class Heard:
    """What a connection learnt from its server's messages: the protocol version it
    answered ``initialize`` with (a listing is checked as the session will check it), and
    notes on what its listings held that could not be read."""

    version: str = LATEST_HANDSHAKE_VERSION
    notes: list[str] = field(default_factory=list)

    def lists(self, result: Any) -> bool:
        """Whether the session will take ``result`` as a tool listing."""
        try:
            methods.validate_server_result(LISTING, self.version, result)
        except (KeyError, ValueError, TypeError):
            return False
        return True


def read(raw: bytes, asked: Asked, heard: Heard) -> SessionMessage | Exception:
    """The message ``raw`` holds; an unreadable answer made an error answer to its request
    (a listing: the tools that can be read, each left out noted in ``heard``); else the
    reason it cannot be read, which the session hears of and ignores (nothing waits for a
    notification or a request)."""
    return _read(raw, asked, heard)[0]


def _read(raw: bytes, asked: Asked, heard: Heard) -> tuple[SessionMessage | Exception, bool]:
    """:func:`read`'s message, and whether it was made here (not what ``raw`` said)."""
    try:
        message = mcp_types.jsonrpc_message_adapter.validate_json(raw, by_name=False)
    except ValueError as exc:
        made = _mended(raw, exc, asked, heard)
        return (exc, False) if made is None else (made, True)
    if (
        isinstance(message, mcp_types.JSONRPCResponse | mcp_types.JSONRPCError)
        and message.id is not None
    ):
        method = asked.pop(message.id, None)
        if isinstance(message, mcp_types.JSONRPCResponse):
            if method == "initialize" and isinstance(message.result.get("protocolVersion"), str):
                heard.version = message.result["protocolVersion"]
            if method == LISTING and not heard.lists(message.result):
                return _listed(raw, message, heard)
    return SessionMessage(message), False


def _listed(
    raw: bytes, message: mcp_types.JSONRPCResponse, heard: Heard
) -> tuple[SessionMessage, bool]:
    """A listing that reads as JSON but holds a tool the session would refuse (refusing
    the whole listing with it): the tools it would take."""
    top, _ = _scan(raw, _first(raw, 0), _ANSWERS)
    members = _keyed(top)
    listing = _listing(raw, members["result"], heard) if "result" in members else None
    if listing is None:
        return SessionMessage(message), False
    return SessionMessage(message.model_copy(update={"result": listing})), True


def sent(message: SessionMessage, asked: Asked) -> None:
    """Remember a request being sent (its answer may need its method)."""
    if isinstance(message.message, mcp_types.JSONRPCRequest):
        asked[message.message.id] = message.message.method


def mended_body(raw: bytes, asked: Asked, heard: Heard) -> bytes:
    """An HTTP answer's JSON as the SDK should read it: ``raw`` itself when it reads (or
    answers no request), else the error answer (or the readable listing) made of it."""
    made, mended = _read(raw, asked, heard)
    if not mended or isinstance(made, Exception):
        return raw
    return made.message.model_dump_json(by_alias=True, exclude_unset=True).encode("utf-8")


async def mended_events(
    chunks: AsyncIterator[bytes], mend: Callable[[bytes], bytes], limit: int
) -> AsyncIterator[bytes]:
    """A server-sent event stream with each event's data passed through ``mend`` (an event
    whose data it leaves as it is goes on byte for byte). Lines end at ``\\n``, ``\\r\\n`` or
    ``\\r``; an event at a blank line; line ends are looked for only in the bytes just read;
    an event larger than ``limit`` is MessageTooLarge."""
    buffer, event, size, seen = bytearray(), [], 0, 0
    async for chunk in chunks:
        buffer += chunk
        start, end = 0, _line_end(buffer, seen)
        while end >= 0:
            event.append(bytes(buffer[start:end]))
            size += end - start
            if end - start <= 2 and not buffer[start:end].strip(b"\r\n"):  # the event is whole
                yield _mended_event(event, mend)
                event, size = [], 0
            start, end = end, _line_end(buffer, end)
        del buffer[:start]
        if size + len(buffer) > limit:
            raise MessageTooLarge
        seen = max(0, len(buffer) - 1)  # a \r kept at the end is looked at again
    if buffer:
        event.append(bytes(buffer))
    if event:
        yield _mended_event(event, mend)


def _line_end(data: bytearray, start: int) -> int:
    """Where the first line from ``start`` ends (after its ``\\n``, ``\\r\\n`` or ``\\r``): -1
    when none has yet, or when a ``\\r`` is last (a ``\\n`` may follow in the next chunk)."""
    newline = data.find(b"\n", start)
    cr = data.find(b"\r", start, newline if newline >= 0 else len(data))
    if cr < 0:
        return -1 if newline < 0 else newline + 1
    if cr + 1 == len(data):
        return -1
    return cr + 2 if data[cr + 1 : cr + 2] == b"\n" else cr + 1


def _mended_event(lines: list[bytes], mend: Callable[[bytes], bytes]) -> bytes:
    """An event (its lines, each with its line end) with its data mended: as it came when
    ``mend`` leaves the data as it is."""
    data = [line.rstrip(b"\r\n")[5:].removeprefix(b" ") for line in lines if line[:5] == b"data:"]
    if not data:
        return b"".join(lines)
    raw = data[0] if len(data) == 1 else b"\n".join(data)
    made = mend(raw)
    if made is raw:
        return b"".join(lines)
    kept = [line for line in lines if line[:5] != b"data:" and line.strip(b"\r\n")]
    return b"".join(kept) + b"data: " + made + b"\n\n"


def _mended(raw: bytes, error: ValueError, asked: Asked, heard: Heard) -> SessionMessage | None:
    """The answer to make of an unreadable message that answers a request (by its id, or
    the one request waiting when its id cannot be read); None for a message that is a
    request or a notification (it has a ``method``), or answers none that is known."""
    top, _ = _scan(raw, _first(raw, 0), _ANSWERS)
    members = _keyed(top)
    if "method" in members:
        return None
    request_id = _scalar(raw, members["id"]) if "id" in members else None
    if not isinstance(request_id, int | str) or isinstance(request_id, bool):
        if len(asked) != 1:
            return None
        request_id = next(iter(asked))
    if request_id not in asked:
        return None
    method = asked.pop(request_id)
    if method == LISTING and "result" in members:
        listing = _listing(raw, members["result"], heard)
        if listing is not None:
            return SessionMessage(
                mcp_types.JSONRPCResponse(jsonrpc="2.0", id=request_id, result=listing)
            )
    data = mcp_types.ErrorData(code=mcp_types.PARSE_ERROR, message=_why(error), data=UNREADABLE)
    return SessionMessage(mcp_types.JSONRPCError(jsonrpc="2.0", id=request_id, error=data))


def _why(error: ValueError) -> str:
    """Why a message could not be read, in words (never the server's text itself)."""
    found = error.errors() if isinstance(error, ValidationError) else []
    if found and found[0]["type"] == "json_invalid":
        if "recursion limit" in found[0]["msg"]:
            return "its answer is nested too deeply to read"
        return "its answer is not JSON"
    return "its answer is not a JSON-RPC message"


def _listing(raw: bytes, span: tuple[int, int], heard: Heard) -> dict[str, Any] | None:
    """The result of a tool listing with the tools that can be read and the session takes
    (each left out noted), or None when the listing holds no list of tools."""
    result = _members(raw, _first(raw, span[0]))
    if result is None or "tools" not in result:
        return None
    tools = children(raw, _first(raw, result["tools"][0]))
    if tools is None:
        return None
    kept: list[mcp_types.Tool] = []
    for number, (_, start, end) in enumerate(tools, 1):
        try:
            tool = mcp_types.Tool.model_validate_json(raw[start:end])
        except ValueError:
            tool = None
        shape = None if tool is None else tool.model_dump(by_alias=True, exclude_none=True)
        if tool is not None and heard.lists({"tools": [shape]}):
            kept.append(tool)
        else:
            said = _tool_name(raw, start, number)
            heard.notes.append(f"its tool {said} could not be read: left out")
    cursor = _scalar(raw, result["nextCursor"]) if "nextCursor" in result else None
    listing = mcp_types.ListToolsResult(
        tools=kept, next_cursor=cursor if isinstance(cursor, str) else None
    )
    return listing.model_dump(by_alias=True, exclude_none=True)


def _tool_name(raw: bytes, start: int, number: int) -> str:
    """A tool's name as a note shows it (cleaned by whoever prints it), or its place."""
    members = _members(raw, _first(raw, start))
    name = _scalar(raw, members["name"]) if members and "name" in members else None
    return repr(name[:64]) if isinstance(name, str) else f"number {number}"


def _members(raw: bytes, start: int) -> dict[str, tuple[int, int]] | None:
    """The members of the whole object at ``start`` (None when it is no whole object)."""
    found = children(raw, start)
    if found is None or raw[start : start + 1] != b"{":
        return None
    return _keyed(found)


def _keyed(found: list[Child]) -> dict[str, tuple[int, int]]:
    """Members by key (the first of a repeated key kept; an array's children have none)."""
    members: dict[str, tuple[int, int]] = {}
    for key, first, end in found:
        if key is not None:
            members.setdefault(key, (first, end))
    return members


def _scalar(raw: bytes, span: tuple[int, int]) -> Any:
    """A value that is no container (a string, a number), or None."""
    text = raw[span[0] : span[1]].strip(_SPACE)
    if text[:1] in (b"{", b"[", b""):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _first(raw: bytes, start: int) -> int:
    """The position of the first byte from ``start`` that is not white space."""
    while start < len(raw) and raw[start] in _SPACE:
        start += 1
    return start


def children(raw: bytes, start: int) -> list[Child] | None:
    """The direct children of the object or array at ``start``: each one's key (None in an
    array) and its value's span, found without descending (the depth below is only
    counted); None when ``raw`` is not well-formed enough to tell."""
    found, whole = _scan(raw, start)
    return found if whole else None


def _scan(
    raw: bytes, start: int, stop_at: frozenset[str] = frozenset()
) -> tuple[list[Child], bool]:
    """:func:`children`, and whether the container ended: a text cut short (or not JSON)
    gives the children seen up to where it can no longer be followed. A member whose key is
    in ``stop_at`` ends the scan (its span runs to the end of ``raw``: what is inside it is
    read on its own). Below the top level only quotes and brackets are looked at, a run of
    brackets in one step, so ``[[[[…`` a million levels deep costs one pass in C; a text of
    more than :data:`MAX_STEPS` other pieces is given up on (as cut short)."""
    opening = raw[start : start + 1]
    if opening not in (b"{", b"["):
        return [], False
    is_object = opening == b"{"
    found: list[Child] = []
    depth, position, key, value_start = 1, start + 1, None, start + 1
    for _ in range(MAX_STEPS):
        match = (_NEXT if depth == 1 else _DEEPER).search(raw, position)
        if match is None:
            return found, False
        at, token = match.start(), match.group()
        if token == b'"':
            end = _STRING_REST.match(raw, at + 1)
            if end is None:
                return found, False
            if depth == 1 and is_object and key is None:
                key = _key(raw[at : end.end()])
            position = end.end()
            continue
        position = match.end()
        if token[:1] in (b"{", b"["):
            depth += len(token)
        elif token[:1] in (b"}", b"]"):
            if depth > len(token):  # still inside a child
                depth -= len(token)
                continue
            position = at + depth  # the last one closes the container itself
            if raw[value_start : position - 1].strip(_SPACE):
                found.append((key, value_start, position - 1))
            return found, True
        elif token == b":":
            value_start = position
            if key in stop_at:
                found.append((key, value_start, len(raw)))
                return found, False
        else:  # a comma between two children
            found.append((key, value_start, at))
            key, value_start = None, position
    return found, False


def _key(token: bytes) -> str:
    try:
        key = json.loads(token)
    except ValueError:
        return ""
    return key if isinstance(key, str) else ""
