"""The sync side of the async SDK: one event loop, on one thread, owning every MCP connection
of a command; the loop's threads (``ask``'s, an eval's workers) call tools through it.

Each connection lives in one task from start to end (anyio's cancel scopes must be left by the
task that entered them): it starts the transport, opens the SDK's ``ClientSession``, says
``initialize`` within the start limit, reads the tool listing, then waits to be told to stop.
A call is scheduled onto the loop and waited for from the calling thread, bounded by its own
limit (a Ctrl-C there cancels it). :meth:`McpBridge.close` tells every connection to stop (a
connection still starting is cancelled), waits for each task's own end (its process stopped,
as ``transport`` does it) and only then stops the loop and joins its thread: a
``concurrent.futures.Future.cancel()`` returns before the transport's shielded shutdown has
run, and stopping the loop then would leave the server running.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
import time
from collections.abc import Awaitable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from dataclasses import dataclass
from typing import Any, TypeVar

import anyio
import mcp_types
from mcp import ClientSession
from mcp.client._transport import TransportStreams
from mcp.shared.exceptions import MCPError

from react_cli import __version__
from react_cli.settings.mcp import McpServer
from react_cli.tools.mcp.transport import Link, http_streams, stdio_streams

T = TypeVar("T")
for _logger in ("mcp", "httpx2", "httpcore2"):  # the SDK's logs never reach the terminal
    logging.getLogger(_logger).addHandler(logging.NullHandler())
MAX_PAGES = 20  # of a tool listing
MAX_TOOLS = 200  # of one server
LOOP_SLACK_S = 5.0  # beyond a call's own limit, for the loop itself to answer
CLOSE_WAIT_S = 10.0  # the longest close waits for every connection (their stops run at once)
_CLIENT = mcp_types.Implementation(name="react-cli", version=__version__)


class McpCallError(Exception):
    """A call that got no result: the message says why, in words for the model."""


@dataclass(frozen=True)
class Handshake:
    """What a server said of itself when it started."""

    name: str
    version: str
    tools: tuple[mcp_types.Tool, ...]


class McpConnection:
    """One server's session, owned by its task on the bridge's loop."""

    def __init__(
        self, bridge: McpBridge, server: McpServer, env: Mapping[str, str], timeout_s: float
    ) -> None:
        self.bridge, self.server, self._env, self._timeout_s = bridge, server, env, timeout_s
        self.link = Link()
        self.handshake: Handshake | None = None
        self._session: ClientSession | None = None
        self._stop = asyncio.Event()
        self._done = threading.Event()  # set when the task has left every context
        self._ready: concurrent.futures.Future[Handshake] = concurrent.futures.Future()
        self._task = bridge.submit(self._own())

    def _transport(self) -> AbstractAsyncContextManager[TransportStreams]:
        server = self.server
        if server.url is not None:
            return http_streams(server.url, dict(server.headers), self._timeout_s, self.link)
        return stdio_streams(server.command, self._env, server.cwd, self.link)

    async def _own(self) -> None:
        try:
            async with AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(self._transport())
                session = await stack.enter_async_context(
                    ClientSession(read, write, client_info=_CLIENT)
                )
                with anyio.fail_after(self._timeout_s):
                    answer = await session.initialize()
                    tools = await _listing(session)
                info = answer.server_info
                self.handshake = Handshake(info.name, info.version, tools)
                self._session = session
                self._ready.set_result(self.handshake)
                await self._stop.wait()
        except BaseException as exc:
            if not self._ready.done():
                self._ready.set_exception(exc)
        finally:
            self._session = None
            self._done.set()

    def wait_ready(self, timeout_s: float) -> Handshake:
        """The handshake, once the server has answered; the reason it did not otherwise
        (TimeoutError, OSError when it could not start, what the SDK raised)."""
        return self._ready.result(timeout_s)

    def call(
        self, name: str, arguments: dict[str, Any], timeout_s: float
    ) -> mcp_types.CallToolResult:
        """The result of calling ``name``, waited for at most ``timeout_s``; McpCallError
        saying why there is none (the server stopped, did not answer in time, refused)."""
        session = self._session
        if session is None or self.link.broken is not None:
            raise McpCallError(self.stopped())

        async def call() -> mcp_types.CallToolResult:
            with anyio.fail_after(timeout_s):
                return await session.call_tool(name, arguments)

        try:
            return self.bridge.run(call(), timeout_s + LOOP_SLACK_S)
        except (TimeoutError, concurrent.futures.TimeoutError):
            raise McpCallError(f"no answer within {timeout_s:.3g} s") from None
        except MCPError as exc:
            if exc.code == mcp_types.CONNECTION_CLOSED or self.link.broken is not None:
                raise McpCallError(self.stopped()) from None
            raise McpCallError(f"the server refused the call: {exc.message}") from None
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
            raise McpCallError(self.stopped()) from None
        except Exception as exc:
            said = str(exc).split("\n")[0] or type(exc).__name__
            raise McpCallError(f"its answer could not be read ({said})") from None

    def stopped(self) -> str:
        """Why the server cannot answer any more, in words for the model."""
        return f"the MCP server stopped ({self.link.broken or 'the connection closed'})"

    def stop(self) -> None:
        """Tell the task to end: leave its session (a started one), or cancel it (still
        starting). Returns at once; :meth:`McpBridge.close` waits."""
        if self._ready.done() and not self._done.is_set():
            self.bridge.loop.call_soon_threadsafe(self._stop.set)
        else:
            self._task.cancel()

    @property
    def done(self) -> threading.Event:
        return self._done


async def _listing(session: ClientSession) -> tuple[mcp_types.Tool, ...]:
    """Every tool the server lists (its pages followed, a few at most)."""
    tools: list[mcp_types.Tool] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        params = None if cursor is None else mcp_types.PaginatedRequestParams(cursor=cursor)
        page = await session.list_tools(params=params)
        tools += page.tools
        cursor = page.next_cursor
        if cursor is None or len(tools) >= MAX_TOOLS:
            break
    return tuple(tools[:MAX_TOOLS])


class McpBridge:
    """The event loop of a command's MCP connections, on a thread of its own."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self.loop.run_forever, name="react-cli-mcp", daemon=True
        )
        self._thread.start()
        self.connections: list[McpConnection] = []
        self._closed = False

    def submit(self, coroutine: Awaitable[None]) -> concurrent.futures.Future[None]:
        async def task() -> None:
            await coroutine

        return asyncio.run_coroutine_threadsafe(task(), self.loop)

    def run(self, coroutine: Awaitable[T], timeout_s: float) -> T:
        """``coroutine``'s result, run on the loop and waited for here; a Ctrl-C (or the
        wait running out) cancels it."""

        async def task() -> T:
            return await coroutine

        future = asyncio.run_coroutine_threadsafe(task(), self.loop)
        try:
            return future.result(timeout_s)
        except BaseException:
            future.cancel()
            raise

    def connect(
        self, servers: Sequence[McpServer], envs: Sequence[Mapping[str, str]], timeout_s: float
    ) -> list[tuple[McpConnection, Handshake | BaseException]]:
        """Start every server at once and wait for each handshake (at most ``timeout_s``):
        each connection with its handshake, or the reason it has none."""
        started = [
            McpConnection(self, s, env, timeout_s) for s, env in zip(servers, envs, strict=True)
        ]
        self.connections += started
        until = time.monotonic() + timeout_s + LOOP_SLACK_S
        outcomes: list[tuple[McpConnection, Handshake | BaseException]] = []
        for connection in started:
            try:
                outcome: Handshake | BaseException = connection.wait_ready(
                    max(0.0, until - time.monotonic())
                )
            except (TimeoutError, concurrent.futures.TimeoutError):
                outcome = TimeoutError()
            except KeyboardInterrupt:
                raise
            except BaseException as exc:
                outcome = exc
            outcomes.append((connection, outcome))
        return outcomes

    def close(self) -> None:
        """Stop every connection and wait for each (its process stopped), then the loop and
        its thread; a Ctrl-C meanwhile is held until they are (then raised)."""
        if self._closed:
            return
        self._closed = True
        interrupted = False
        for connection in self.connections:
            connection.stop()
        until = time.monotonic() + CLOSE_WAIT_S
        for connection in self.connections:
            interrupted |= _wait_for(connection.done, until)
        finished = threading.Event()
        self.loop.call_soon_threadsafe(self._finish, finished)
        interrupted |= _wait_for(finished, time.monotonic() + LOOP_SLACK_S)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(LOOP_SLACK_S)
        if not self._thread.is_alive():
            self.loop.close()
        if interrupted:
            raise KeyboardInterrupt

    def _finish(self, finished: threading.Event) -> None:
        """On the loop: cancel what is left (calls whose callers gave up), then say so."""
        rest = [task for task in asyncio.all_tasks(self.loop) if not task.done()]
        for task in rest:
            task.cancel()
        if not rest:
            finished.set()
            return
        gathered = asyncio.gather(*rest, return_exceptions=True)
        gathered.add_done_callback(lambda _: finished.set())


def _wait_for(event: threading.Event, until: float) -> bool:
    """Wait for ``event`` until ``until`` (monotonic), even through Ctrl-C; whether one came."""
    interrupted = False
    while True:
        try:
            event.wait(max(0.0, until - time.monotonic()))
            return interrupted
        except KeyboardInterrupt:
            interrupted = True
