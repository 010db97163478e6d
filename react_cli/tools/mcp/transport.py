"""How messages reach an MCP server: newline-delimited JSON-RPC over a process's pipes, or the
SDK's streamable HTTP client; either way every message the server sends is bounded, and one
that cannot be read fails the request it answers at once (``messages``).

The stdio transport is react-cli's own (the SDK's session runs over it unchanged): the SDK's
reader joins each chunk to what it holds and splits it again, so a 10 MB answer takes seconds
(quadratic) and a line that never ends fills the memory. This reader keeps one buffer, looks
for the end of a line only in the bytes just read, and gives up on a message larger than
``max_message_bytes`` (the connection then ends, and the server's calls fail saying why). The
process (``process``) starts in a session of its own, dies with react-cli on Linux, has its
stderr read into the last few lines, never onto the user's terminal, and is stopped with its
whole process group whatever cancels the connection, within the time the close has left
(``Link.stop_by``).
"""

from __future__ import annotations

import functools
import json
import re
import ssl
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field

import anyio
import anyio.abc
import httpx2
from mcp.client._transport import TransportStreams
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.message import SessionMessage

from react_cli.infra.untrusted import plain, size_text
from react_cli.tools.mcp import messages, process

MAX_MESSAGE_BYTES = 64 << 20  # a result's text is written twice (content, structured)
STOP_WAIT_S = 1.0  # after stdin closes, before SIGTERM
KILL_WAIT_S = 1.0  # after SIGTERM, before SIGKILL
ENDED_WAIT_S = 0.2  # for the exit of a process whose pipes closed, before stopping it
STDERR_KEPT = 4096  # bytes of a server's stderr kept for an error message


@dataclass
class Link:
    """What a connection learns of its transport: why it broke (a message too large, the
    process gone), for a process its exit status and the end of its stderr; the requests
    waiting for an answer, what its messages told (``heard``: notes on what a listing left
    out); and when its close must be done by (``stop_by``, in ``time.monotonic()`` time;
    None: no hurry)."""

    broken: str | None = None
    returncode: int | None = None
    ended: bool = False  # the process exited before it was stopped
    pid: int | None = None
    stderr: deque[bytes] = field(default_factory=lambda: deque(maxlen=64))
    asked: dict[int | str, str] = field(default_factory=dict)
    heard: messages.Heard = field(default_factory=messages.Heard)
    stop_by: float | None = None

    def last_words(self, redact: Callable[[str], str] = str) -> str:
        """What the process's stderr says of why it failed, redacted (before it is cut: a
        server may print the token its environment gave it), cleaned and cut (or nothing):
        :func:`telling_line` of its last lines."""
        tail = b"".join(self.stderr)[-STDERR_KEPT:].decode("utf-8", "replace")
        lines = [line.strip() for line in redact(plain(redact(tail))).splitlines() if line.strip()]
        return telling_line(lines)[:300]

    def stop_left(self) -> float | None:
        """The seconds the close has left (None: no limit)."""
        return None if self.stop_by is None else self.stop_by - time.monotonic()


# What a launcher prints when the command it was asked to run cannot be had, most telling
# first: npm's (npx) and uv's (uvx) answers for a package their registry lacks, a missing
# command, file or module; each a literal or a bounded class, linear.
_REASONS = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        r"is not in (?:this|the npm) registry",
        r"\bE404\b|\b404 Not Found\b|was not found in the package registry",
        r"no (?:matching )?(?:version|distribution|solution) found",
        r"command not found|not found: |No such file or directory|ENOENT|cannot find",
        r"No module named|ModuleNotFoundError|could not find|unable to find",
        r"Permission denied|EACCES",
    )
)
_NOT_TELLING = re.compile(r"complete log of this run|npm (?:error|ERR!) *(?:404)? *$", re.I)


def telling_line(lines: list[str]) -> str:
    """The line of a failed process's stderr that says why (npm's ``'@x/y@*' is not in this
    registry.``, not the ``A complete log of this run …`` it ends with), else its last line
    that says anything ("" for none). Of the lines one reason finds, the last: a Python
    traceback quotes the ``raise ModuleNotFoundError(…)`` before the line that says what."""
    for pattern in _REASONS:
        found = [line for line in lines if pattern.search(line)]
        if found:
            return found[-1]
    said = [line for line in lines if not _NOT_TELLING.search(line)]
    return said[-1] if said else (lines[-1] if lines else "")


@asynccontextmanager
async def stdio_streams(
    argv: tuple[str, ...],
    env: Mapping[str, str],
    cwd: str | None,
    link: Link,
    *,
    max_message_bytes: int = MAX_MESSAGE_BYTES,
    stop_wait_s: float = STOP_WAIT_S,
    kill_wait_s: float = KILL_WAIT_S,
) -> AsyncIterator[TransportStreams]:
    """The streams of a session with the server ``argv`` starts (OSError when it cannot be
    started); the process is stopped when the block ends, however it ends."""
    server = await process.start(argv, env, cwd)
    link.pid = server.pid
    read_in, read_out = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_in, write_out = anyio.create_memory_object_stream[SessionMessage](0)

    async def reader() -> None:
        assert server.stdout is not None
        buffer = bytearray()
        with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            async with read_in:
                async for chunk in server.stdout:
                    seen = len(buffer)
                    buffer += chunk
                    start = 0
                    end = buffer.find(b"\n", seen)
                    while end >= 0:
                        line = bytes(buffer[start:end])
                        if line.strip():
                            await read_in.send(messages.read(line, link.asked, link.heard))
                        start = end + 1
                        end = buffer.find(b"\n", start)
                    del buffer[:start]
                    if len(buffer) > max_message_bytes:
                        link.broken = (
                            f"it sent a message larger than {size_text(max_message_bytes)}"
                        )
                        return
        if link.broken is None:
            link.broken = "it closed its output"

    async def writer() -> None:
        assert server.stdin is not None
        try:
            async with write_out:
                async for message in write_out:
                    messages.sent(message, link.asked)
                    text = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await server.stdin.send(text.encode("utf-8") + b"\n")
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            link.broken = link.broken or "it stopped reading its input"
            await read_in.aclose()

    async def errors() -> None:
        assert server.stderr is not None
        with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            async for chunk in server.stderr:
                link.stderr.append(chunk[-STDERR_KEPT:])

    async with anyio.create_task_group() as group:
        group.start_soon(reader)
        group.start_soon(writer)
        group.start_soon(errors)
        try:
            yield read_out, write_in
        finally:
            with anyio.CancelScope(shield=True):  # the process stops, whatever cancels us
                if link.broken is not None:  # its pipes closed: most likely it exited
                    await process.exited(server, ENDED_WAIT_S)
                link.ended = server.returncode is not None
                await process.stop(server, stop_wait_s, kill_wait_s, link.stop_left())
                link.returncode = server.returncode
                group.cancel_scope.cancel()
                for stream in (server.stdout, server.stderr):
                    with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                        await stream.aclose() if stream is not None else None
                _close_transport(server)


def _close_transport(process: anyio.abc.Process) -> None:
    """Close asyncio's transport of the process now: left to the garbage collector, it would
    complain on stderr once the bridge's loop is closed. Nothing public reaches it."""
    transport = getattr(getattr(process, "_process", None), "_transport", None)
    close = getattr(transport, "close", None)
    if callable(close):
        with suppress(PermissionError):  # 3.10-3.12 may signal a setuid child again
            close()


@asynccontextmanager
async def http_streams(
    url: str,
    headers: Mapping[str, str],
    timeout_s: float,
    link: Link,
    *,
    max_message_bytes: int = MAX_MESSAGE_BYTES,
) -> AsyncIterator[TransportStreams]:
    """The streams of a session with the streamable-HTTP server at ``url``: the SDK's client,
    each answer (a JSON body, or one server-sent event) at most ``max_message_bytes``."""
    timeout = httpx2.Timeout(timeout_s, read=max(timeout_s, 300.0))
    inner = httpx2.AsyncHTTPTransport(verify=_verifying_context())
    transport = _Bounded(inner, max_message_bytes, link)
    client = httpx2.AsyncClient(headers=dict(headers), timeout=timeout, transport=transport)
    async with (
        client,
        streamable_http_client(
            url, http_client=client, max_sse_event_size=max_message_bytes
        ) as streams,
    ):
        yield streams


@functools.cache
def _verifying_context() -> ssl.SSLContext:
    """httpx2's default TLS context (the system's certificates, ``SSL_CERT_FILE`` read), made
    once a process: loading the certificates takes about 35 ms of CPU, which every connection
    (an eval's server started again, each command of a chat) paid again; a context serves
    any number of connections."""
    return httpx2.create_ssl_context()


class _Bounded(httpx2.AsyncBaseTransport):
    """A transport whose answers to requests are bounded and read as ``messages`` reads them:
    a JSON body at most ``limit`` bytes, a stream's events each (the SDK bounds the events of
    the stream a server opens of its own)."""

    def __init__(self, inner: httpx2.AsyncBaseTransport, limit: int, link: Link) -> None:
        self.inner, self.limit, self.link = inner, limit, link

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self.inner.handle_async_request(request)
        stream = response.stream
        kind = response.headers.get("content-type", "").lower()
        if not isinstance(stream, httpx2.AsyncByteStream):
            return response
        asked = _asked(request)
        if kind.startswith("application/json"):
            bounded: httpx2.AsyncByteStream = _BoundedBody(stream, self.limit, self.link, asked)
        elif kind.startswith("text/event-stream") and asked:
            bounded = _MendedEvents(stream, self.limit, self.link, asked)
        else:
            return response
        headers = [(k, v) for k, v in response.headers.multi_items() if k != "content-length"]
        return httpx2.Response(
            response.status_code,
            headers=headers,
            stream=bounded,
            extensions=response.extensions,
            request=request,
        )

    async def aclose(self) -> None:
        await self.inner.aclose()


def _asked(request: httpx2.Request) -> dict[int | str, str]:
    """The JSON-RPC request a POST carries (its id and method), which its answer answers."""
    if request.method != "POST":
        return {}
    try:
        sent = json.loads(request.content)
    except (ValueError, httpx2.RequestNotRead):
        return {}
    if not isinstance(sent, dict) or not isinstance(sent.get("method"), str):
        return {}
    request_id = sent.get("id")
    return {request_id: sent["method"]} if isinstance(request_id, int | str) else {}


class _BoundedBody(httpx2.AsyncByteStream):
    """A JSON body read whole, at most ``limit`` bytes, mended when it cannot be read."""

    def __init__(
        self, inner: httpx2.AsyncByteStream, limit: int, link: Link, asked: dict[int | str, str]
    ) -> None:
        self.inner, self.limit, self.link, self.asked = inner, limit, link, asked

    async def __aiter__(self) -> AsyncIterator[bytes]:
        body = bytearray()
        async for chunk in self.inner:
            body += chunk
            if len(body) > self.limit:
                self.link.broken = f"it sent an answer larger than {size_text(self.limit)}"
                raise httpx2.ReadError(self.link.broken)
        raw = bytes(body)
        yield messages.mended_body(raw, self.asked, self.link.heard) if self.asked else raw

    async def aclose(self) -> None:
        await self.inner.aclose()


class _MendedEvents(httpx2.AsyncByteStream):
    """The event stream answering a request, each event at most ``limit`` bytes and its
    message mended when it cannot be read."""

    def __init__(
        self, inner: httpx2.AsyncByteStream, limit: int, link: Link, asked: dict[int | str, str]
    ) -> None:
        self.inner, self.limit, self.link, self.asked = inner, limit, link, asked

    def _mend(self, raw: bytes) -> bytes:
        return messages.mended_body(raw, self.asked, self.link.heard)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in messages.mended_events(aiter(self.inner), self._mend, self.limit):
                yield chunk
        except messages.MessageTooLarge:
            self.link.broken = f"it sent a message larger than {size_text(self.limit)}"
            raise httpx2.ReadError(self.link.broken) from None

    async def aclose(self) -> None:
        await self.inner.aclose()
