"""A hostile MCP server written by hand (no SDK: no SDK writes what it sends): it answers
``initialize`` and its listing as any server does, and answers with JSON nested past every
reader's depth, or cut short.

``python -S mcp_raw.py [--deep-initialize] [--pid FILE] [--busy]`` serves it over stdio
(standard library only: it starts in 20 ms; ``--pid`` writes ``PID DEATHSIG`` into ``FILE``:
its process id and the signal its parent's death sends it; ``--busy`` never exits of its
own, its stdin closed or not); :func:`raw_http` serves it over streamable HTTP (a
``HostileServer`` in the test process), answering with a JSON body or an event stream, and,
with ``stall_close``, never answering the ``DELETE`` that ends a session.

Its tools: ``echo`` (answers), ``deep`` (an answer nested :data:`DEPTH` levels), ``garbled``
(an answer cut short: not JSON), and three the listing holds that cannot be read or used:
``nested`` (its schema :data:`DEPTH` levels deep), ``odd`` (its properties a list: no tool
to the SDK) and ``huge`` (a schema larger than react-cli declares).
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

from hostile_server import Answer, HostileServer, Received, head

DEPTH = 100_000
DEEP = "[" * DEPTH + "]" * DEPTH
TEXT = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
_TOOL = {"description": "A tool.", "inputSchema": TEXT, "annotations": {"readOnlyHint": True}}
# (read-only: react-cli calls them without asking for consent)
LISTED = (
    json.dumps({"name": "echo", **_TOOL}),
    '{"name": "nested", "inputSchema": {"type": "object", "properties": {"a": ' + DEEP + "}}}",
    json.dumps({"name": "deep", **_TOOL}),
    json.dumps({"name": "odd", "inputSchema": {"type": "object", "properties": []}}),
    json.dumps({"name": "garbled", **_TOOL}),
    json.dumps({"name": "huge", "inputSchema": {**TEXT, "description": "x" * 40_000}}),
)


def answer(message: dict[str, Any], deep_initialize: bool = False) -> str | None:
    """The line answering ``message`` (None for a notification)."""
    if "id" not in message:
        return None
    head = '{"jsonrpc": "2.0", "id": ' + json.dumps(message["id"]) + ', "result": '
    method = message.get("method")
    if method == "initialize":
        if deep_initialize:
            return head + '{"serverInfo": ' + DEEP + "}}"
        info = {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "raw", "version": "0.1"},
        }
        return head + json.dumps(info) + "}"
    if method == "tools/list":
        return head + '{"tools": [' + ", ".join(LISTED) + "]}}"
    if method == "tools/call":
        name = message["params"]["name"]
        text = str(message["params"].get("arguments", {}).get("text", ""))
        if name == "deep":
            return head + '{"content": [], "structuredContent": {"x": ' + DEEP + "}}}"
        if name == "garbled":
            return head + '{"content": [{"type": "text", "text": "cut sh'
        said = {"content": [{"type": "text", "text": f"echo: {text}"}]}
        return head + json.dumps(said) + "}"
    if method == "ping":
        return head + "{}}"
    return (
        '{"jsonrpc": "2.0", "id": '
        + json.dumps(message["id"])
        + ', "error": {"code": -32601, "message": "no such method"}}'
    )


def http_answer(
    method: str,
    body: bytes,
    *,
    events: bool,
    stall_close: bool = False,
    deep_initialize: bool = False,
) -> tuple[str, dict[str, str], bytes | None]:
    """The HTTP status, headers and body answering a request (body None: never answered)."""
    close = {"Connection": "close"}
    if method == "DELETE":
        return ("200 OK", {**close, "Content-Length": "0"}, None if stall_close else b"")
    if method != "POST":
        return ("405 Method Not Allowed", {**close, "Content-Length": "0"}, b"")
    line = answer(json.loads(body), deep_initialize)
    if line is None:
        return ("202 Accepted", {**close, "Content-Length": "0"}, b"")
    session = {"Mcp-Session-Id": "s1"} if stall_close else {}
    if events:
        data = f"event: message\r\ndata: {line}\r\n\r\n".encode()
        kind = "text/event-stream"
    else:
        data, kind = line.encode(), "application/json"
    headers = {**close, **session, "Content-Type": kind, "Content-Length": str(len(data))}
    return ("200 OK", headers, data)


def raw_http(events: bool, **hostile: bool) -> HostileServer:
    """The server over streamable HTTP (``hostile``: what :func:`http_answer` takes)."""

    def respond(received: Received) -> Answer:
        method = received.head.split(b" ", 1)[0].decode()
        status, headers, body = http_answer(method, received.body, events=events, **hostile)
        fields = {name.replace("-", "_"): value for name, value in headers.items()}
        if body is None:  # never answered: the server holds the connection
            return Answer(head(status, **fields), [b""], interval_s=3600)
        return Answer(head(status, **fields), [body])

    return HostileServer(respond=respond)


def main(options: list[str]) -> None:
    deep_initialize = "--deep-initialize" in options
    if "--pid" in options:  # where it says its pid and the signal its parent's death sends it
        path = options[options.index("--pid") + 1]
        with open(path + ".part", "w") as file:
            file.write(f"{os.getpid()} {death_signal()}")
        os.replace(path + ".part", path)
    for line in sys.stdin:
        if not line.strip():
            continue
        said = answer(json.loads(line), deep_initialize)
        if said is not None:
            sys.stdout.write(said + "\n")
            sys.stdout.flush()
    if "--busy" in options:  # busy for good: its stdin's end ignored
        time.sleep(3600)


def death_signal() -> int:
    """The signal this process gets when its parent dies (Linux's ``PR_GET_PDEATHSIG``)."""
    import ctypes

    found = ctypes.c_int(0)
    ctypes.CDLL(None).prctl(2, ctypes.byref(found))
    return found.value


if __name__ == "__main__":
    main(sys.argv[1:])
