"""How messages reach an MCP server: newline-delimited JSON-RPC over a process's pipes, or the
SDK's streamable HTTP client; either way every message the server sends is bounded.

The stdio transport is react-cli's own (the SDK's session runs over it unchanged): the SDK's
reader joins each chunk to what it holds and splits it again, so a 10 MB answer takes seconds
(quadratic) and a line that never ends fills the memory. This reader keeps one buffer, looks
for the end of a line only in the bytes just read, and gives up on a message larger than
``max_message_bytes`` (the connection then ends, and the server's calls fail saying why). The
process starts in a session of its own (a Ctrl-C at the terminal does not reach it: react-cli
stops it) with its stderr read into the last few lines, never onto the user's terminal. It is
stopped as the MCP specification says, whatever cancels the connection: stdin closed, then
``SIGTERM`` to its process group after ``stop_wait_s``, ``SIGKILL`` after ``kill_wait_s``.
"""

from __future__ import annotations

import sys
from collections import deque
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field

import anyio
import anyio.abc
import httpx2
import mcp_types
from mcp.client._transport import TransportStreams
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.message import SessionMessage

from react_cli.infra.untrusted import plain, size_text

MAX_MESSAGE_BYTES = 64 << 20  # a result's text is written twice (content, structured)
STOP_WAIT_S = 1.0  # after stdin closes, before SIGTERM
KILL_WAIT_S = 1.0  # after SIGTERM, before SIGKILL
REAP_WAIT_S = 1.0  # after SIGKILL, for the event loop to see it
_POLL_S = 0.01
STDERR_KEPT = 4096  # bytes of a server's stderr kept for an error message


@dataclass
class Link:
    """What a connection learns of its transport: why it broke (a message too large, the
    process gone) and, for a process, its exit status and the end of its stderr."""

    broken: str | None = None
    returncode: int | None = None
    pid: int | None = None
    stderr: deque[bytes] = field(default_factory=lambda: deque(maxlen=64))

    def last_words(self) -> str:
        """The last line the process wrote to stderr, cleaned and cut (or nothing)."""
        tail = b"".join(self.stderr)[-STDERR_KEPT:].decode("utf-8", "replace")
        lines = [line.strip() for line in plain(tail).splitlines() if line.strip()]
        return lines[-1][:300] if lines else ""


def _message(line: bytes) -> SessionMessage | Exception:
    try:
        return SessionMessage(mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as exc:  # the session hears of it and goes on
        return exc


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
    process = await anyio.open_process(
        list(argv), env=dict(env), cwd=cwd, stderr=-1, start_new_session=True
    )
    link.pid = process.pid
    read_in, read_out = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_in, write_out = anyio.create_memory_object_stream[SessionMessage](0)

    async def reader() -> None:
        assert process.stdout is not None
        buffer = bytearray()
        with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            async with read_in:
                async for chunk in process.stdout:
                    seen = len(buffer)
                    buffer += chunk
                    start = 0
                    end = buffer.find(b"\n", seen)
                    while end >= 0:
                        line = bytes(buffer[start:end])
                        if line.strip():
                            await read_in.send(_message(line))
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
        assert process.stdin is not None
        try:
            async with write_out:
                async for message in write_out:
                    text = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send(text.encode("utf-8") + b"\n")
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            link.broken = link.broken or "it stopped reading its input"
            await read_in.aclose()

    async def errors() -> None:
        assert process.stderr is not None
        with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            async for chunk in process.stderr:
                link.stderr.append(chunk[-STDERR_KEPT:])

    async with anyio.create_task_group() as group:
        group.start_soon(reader)
        group.start_soon(writer)
        group.start_soon(errors)
        try:
            yield read_out, write_in
        finally:
            with anyio.CancelScope(shield=True):  # the process stops, whatever cancels us
                await _stop(process, stop_wait_s, kill_wait_s)
                link.returncode = process.returncode
                group.cancel_scope.cancel()
                for stream in (process.stdout, process.stderr):
                    with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                        await stream.aclose() if stream is not None else None
                _close_transport(process)


async def _stop(process: anyio.abc.Process, stop_wait_s: float, kill_wait_s: float) -> None:
    """Close its stdin, wait, then end its process group (``SIGTERM``, then ``SIGKILL``)."""
    with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        assert process.stdin is not None
        await process.stdin.aclose()
    if await _exited(process, stop_wait_s):
        return
    if sys.platform != "win32":
        from mcp.os.posix.utilities import terminate_posix_process_tree

        await terminate_posix_process_tree(process, kill_wait_s)
    else:  # pragma: no cover - no Windows here
        process.kill()
    await _exited(process, REAP_WAIT_S)


def _close_transport(process: anyio.abc.Process) -> None:
    """Close asyncio's transport of the process now: left to the garbage collector, it would
    complain on stderr once the bridge's loop is closed. Nothing public reaches it."""
    transport = getattr(getattr(process, "_process", None), "_transport", None)
    close = getattr(transport, "close", None)
    if callable(close):
        with suppress(PermissionError):  # 3.10-3.12 may signal a setuid child again
            close()


async def _exited(process: anyio.abc.Process, wait_s: float) -> bool:
    """Whether the process ended within ``wait_s`` (by its return code: ``wait()`` would
    also wait for its pipes, which a child it started may hold)."""
    with anyio.move_on_after(wait_s):
        while process.returncode is None:
            await anyio.sleep(_POLL_S)
    return process.returncode is not None


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
    transport = _Bounded(httpx2.AsyncHTTPTransport(), max_message_bytes, link)
    client = httpx2.AsyncClient(headers=dict(headers), timeout=timeout, transport=transport)
    async with (
        client,
        streamable_http_client(
            url, http_client=client, max_sse_event_size=max_message_bytes
        ) as streams,
    ):
        yield streams


class _Bounded(httpx2.AsyncBaseTransport):
    """A transport whose JSON answers stop at a size (server-sent events are bounded by the
    SDK, one event at a time)."""

    def __init__(self, inner: httpx2.AsyncBaseTransport, limit: int, link: Link) -> None:
        self.inner, self.limit, self.link = inner, limit, link

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self.inner.handle_async_request(request)
        stream = response.stream
        json = response.headers.get("content-type", "").startswith("application/json")
        if not json or not isinstance(stream, httpx2.AsyncByteStream):
            return response
        return httpx2.Response(
            response.status_code,
            headers=response.headers,
            stream=_BoundedStream(stream, self.limit, self.link),
            extensions=response.extensions,
            request=request,
        )

    async def aclose(self) -> None:
        await self.inner.aclose()


class _BoundedStream(httpx2.AsyncByteStream):
    def __init__(self, inner: httpx2.AsyncByteStream, limit: int, link: Link) -> None:
        self.inner, self.limit, self.link = inner, limit, link

    async def __aiter__(self) -> AsyncIterator[bytes]:
        size = 0
        async for chunk in self.inner:
            size += len(chunk)
            if size > self.limit:
                self.link.broken = f"it sent an answer larger than {size_text(self.limit)}"
                raise httpx2.ReadError(self.link.broken)
            yield chunk

    async def aclose(self) -> None:
        await self.inner.aclose()
