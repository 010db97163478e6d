"""The sync side of the async SDK: one event loop, on one thread, owning every MCP connection
of a command; the loop's threads (``ask``'s, an eval's workers) call tools through it.

Each connection's session lives in one task from start to end (anyio's cancel scopes must be
left by the task that entered them): it starts the transport, opens the SDK's
``ClientSession``, says ``initialize`` within the start limit, reads the tool listing, then
waits to be told to stop. A call is scheduled onto the loop and waited for from the calling
thread, bounded by its own limit (a Ctrl-C there cancels it). A server that stopped (its
process died, its connection broke) is started again once, the user told; one that stops
again stays stopped, and its calls fail saying so (:attr:`McpCallError.stopped`).

:meth:`McpBridge.close` tells every connection to stop within the time it is given (a
connection still starting is cancelled, and so is one whose session's end outlasts it),
waits for each task's own end (its process stopped, as ``transport`` does it) and only then
stops the loop and joins its thread: a ``concurrent.futures.Future.cancel()`` returns before
the transport's shielded shutdown has run, and stopping the loop then would leave the server
running.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from dataclasses import dataclass
from typing import Any, TypeVar

import anyio
import mcp_types
from mcp import ClientSession
from mcp.client._transport import TransportStreams
from mcp.shared.exceptions import MCPError

from react_cli import __version__
from react_cli.infra.deadline import MIN_TIMEOUT_S
from react_cli.settings.mcp import McpServer
from react_cli.tools.mcp.messages import UNREADABLE
from react_cli.tools.mcp.transport import Link, http_streams, stdio_streams

T = TypeVar("T")
for _logger in ("mcp", "httpx2", "httpcore2"):  # the SDK's logs never reach the terminal
    logging.getLogger(_logger).addHandler(logging.NullHandler())
MAX_PAGES = 20  # of a tool listing
MAX_TOOLS = 200  # of one server
LOOP_SLACK_S = 5.0  # beyond a call's own limit, for the loop itself to answer
CLOSE_WAIT_S = 5.0  # the longest close waits for every connection (their stops run at once)
CLOSE_FLOOR_S = 0.5  # the least it gives them, however late it is
CLOSE_GRACE_S = 0.25  # beyond it, before a connection counts as late (its last wait ends it)
RESTARTS = 1  # of a server that stopped, per command
_CLIENT = mcp_types.Implementation(name="react-cli", version=__version__)


class McpCallError(Exception):
    """A call that got no result: the message says why, in words for the model; ``stopped``
    when the server had stopped (the call never ran)."""

    def __init__(self, message: str, *, stopped: bool = False) -> None:
        super().__init__(message)
        self.stopped = stopped


@dataclass(frozen=True)
class Handshake:
    """What a server said of itself when it started."""

    name: str
    version: str
    tools: tuple[mcp_types.Tool, ...]


class _Life:
    """One start of a server: its session, owned by its task on the bridge's loop, from its
    start until it is told to stop."""

    def __init__(self, connection: McpConnection, start_s: float) -> None:
        self.connection, self.start_s = connection, start_s
        self.link = Link()
        self.session: ClientSession | None = None
        self._stop = asyncio.Event()
        self.done = threading.Event()  # set when the task has left every context
        self.ready: concurrent.futures.Future[Handshake] = concurrent.futures.Future()
        self._task = connection.bridge.submit(self._own())

    def _transport(self) -> AbstractAsyncContextManager[TransportStreams]:
        server, link = self.connection.server, self.link
        if server.url is not None:
            return http_streams(server.url, dict(server.headers), self.connection.timeout_s, link)
        return stdio_streams(server.command, self.connection.env, server.cwd, link)

    async def _own(self) -> None:
        try:
            async with AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(self._transport())
                session = await stack.enter_async_context(
                    ClientSession(read, write, client_info=_CLIENT)
                )
                with anyio.fail_after(self.start_s):
                    answer = await session.initialize()
                    tools = await _listing(session)
                info = answer.server_info
                self.session = session
                self.ready.set_result(Handshake(info.name, info.version, tools))
                await self._stop.wait()
        except BaseException as exc:
            if not self.ready.done():
                self.ready.set_exception(exc)
        finally:
            self.session = None
            self.done.set()

    def usable(self) -> bool:
        return self.session is not None and self.link.broken is None

    def stop(self, by: float | None) -> None:
        """Tell the task to end (by ``by``, monotonic: the transport's own waits fit it):
        leave its session (a started one), or cancel it (still starting). Returns at once."""
        self.link.stop_by = by
        if self.ready.done() and not self.done.is_set():
            self.connection.bridge.loop.call_soon_threadsafe(self._stop.set)
        else:
            self._task.cancel()

    def cancel(self) -> None:
        """End the task now (its session's end took too long); a process still stops."""
        self._task.cancel()


class McpConnection:
    """One server, started once (``initialize`` within ``start_s``) and again once if it
    stops; its calls from any thread, each within its own limit (``timeout_s``: the
    tool's, which also bounds each HTTP request's connecting and sending)."""

    def __init__(
        self,
        bridge: McpBridge,
        server: McpServer,
        env: Mapping[str, str],
        limits: tuple[float, float],
        warn: Callable[[str], None],
    ) -> None:
        self.bridge, self.server, self.env = bridge, server, env
        self.timeout_s, start_s = limits
        self.warn = warn
        self.shown = server.describe()  # how messages name it (as the listing named it, later)
        self._lock = threading.Lock()
        self._restarts = 0
        self._life = _Life(self, start_s)
        self._lives = [self._life]  # a stopped one may still be stopping when the close comes

    @property
    def link(self) -> Link:
        """What the current start of the server learnt of its transport."""
        return self._life.link

    def done(self) -> bool:
        """Whether every start of the server has ended (its process stopped)."""
        return all(life.done.is_set() for life in self._lives)

    def wait_done(self, until: float) -> bool:
        """Wait (until ``until``, monotonic) for every start's end; whether a Ctrl-C came."""
        return any([_wait_for(life.done, until) for life in self._lives])

    def wait_ready(self, timeout_s: float) -> Handshake:
        """The handshake, once the server has answered; the reason it did not otherwise
        (TimeoutError, OSError when it could not start, what the SDK raised)."""
        return self._life.ready.result(timeout_s)

    def call(
        self, name: str, arguments: dict[str, Any], timeout_s: float
    ) -> mcp_types.CallToolResult:
        """The result of calling ``name``, waited for at most ``timeout_s``; McpCallError
        saying why there is none (the server stopped, did not answer in time, refused)."""
        life, asked = self._life, time.monotonic()
        if not life.usable():
            life = self._again(life, timeout_s)
            timeout_s = max(MIN_TIMEOUT_S, timeout_s - (time.monotonic() - asked))  # what is left
        session = life.session
        if session is None:
            raise McpCallError(_stopped(life.link), stopped=True)

        async def call() -> mcp_types.CallToolResult:
            with anyio.fail_after(timeout_s):
                return await session.call_tool(name, arguments)

        try:
            return self.bridge.run(call(), timeout_s + LOOP_SLACK_S)
        except (TimeoutError, concurrent.futures.TimeoutError):
            raise McpCallError(f"no answer within {timeout_s:.3g} s") from None
        except MCPError as exc:
            if exc.code == mcp_types.CONNECTION_CLOSED or life.link.broken is not None:
                raise McpCallError(_stopped(life.link), stopped=True) from None
            if exc.error.data == UNREADABLE:
                raise McpCallError(exc.message) from None
            raise McpCallError(f"the server refused the call: {exc.message}") from None
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
            raise McpCallError(_stopped(life.link), stopped=True) from None
        except Exception as exc:
            said = str(exc).split("\n")[0] or type(exc).__name__
            raise McpCallError(f"its answer could not be read ({said})") from None

    def _again(self, stopped: _Life, timeout_s: float) -> _Life:
        """The server started again in place of ``stopped`` (once a command: the user is
        told), or by another caller meanwhile; McpCallError when it stays stopped."""
        with self._lock:
            if self._life is not stopped:
                return self._life
            if self._restarts >= RESTARTS or self.bridge.closing or not stopped.ready.done():
                raise McpCallError(_stopped(stopped.link), stopped=True)
            self._restarts += 1
            why = _stopped(stopped.link).removeprefix("the MCP server stopped ")
            self._life = again = _Life(self, timeout_s)
            self._lives.append(again)
            stopped.stop(None)
            try:
                again.ready.result(max(timeout_s, 0.0) + LOOP_SLACK_S)
            except Exception:  # a Ctrl-C goes on as it came: the run's stop says so
                self.warn(f"MCP server {self.shown} stopped {why} and did not start again")
                raise McpCallError(_stopped(stopped.link), stopped=True) from None
            self.warn(
                f"MCP server {self.shown} stopped {why}; started again (once: if it stops "
                "again, the calls to it fail)"
            )
            return again

    def stop(self, by: float | None) -> None:
        """Tell the server's task to end by ``by`` (monotonic; None: no hurry); returns at
        once, :meth:`McpBridge.close` waits."""
        for life in self._lives:
            if not life.done.is_set():
                life.stop(by)

    def cancel(self) -> None:
        """End what is left of the server's tasks now (a process still stops)."""
        for life in self._lives:
            if not life.done.is_set():
                life.cancel()


def _stopped(link: Link) -> str:
    """Why the server cannot answer any more, in words for the model."""
    return f"the MCP server stopped ({link.broken or 'the connection closed'})"


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
    """The event loop of a command's MCP connections, on a thread of its own; ``warn`` hears
    what the user should know (a server started again, one whose end was cut short)."""

    def __init__(self, warn: Callable[[str], None]) -> None:
        self.warn = warn
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self.loop.run_forever, name="react-cli-mcp", daemon=True
        )
        self._thread.start()
        self.connections: list[McpConnection] = []
        self.closing = False

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
        self,
        servers: Sequence[McpServer],
        envs: Sequence[Mapping[str, str]],
        timeout_s: float,
        start_s: float,
    ) -> list[tuple[McpConnection, Handshake | BaseException]]:
        """Start every server at once and wait for each handshake (at most ``start_s``):
        each connection with its handshake, or the reason it has none; ``timeout_s``: the
        limit of each call (and of a start again)."""
        started = [
            McpConnection(self, s, env, (timeout_s, start_s), self.warn)
            for s, env in zip(servers, envs, strict=True)
        ]
        self.connections += started
        until = time.monotonic() + start_s + LOOP_SLACK_S
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

    def close(self, within_s: float | None = None, limit: str = "") -> None:
        """Stop every connection within ``within_s`` (None: :data:`CLOSE_WAIT_S`; never less
        than :data:`CLOSE_FLOOR_S`), named ``limit`` when a server's end is cut short; wait
        for each (its process stopped), then the loop and its thread. A Ctrl-C meanwhile is
        held until they are (then raised)."""
        if self.closing:
            return
        self.closing = True
        wait_s = CLOSE_WAIT_S if within_s is None else min(CLOSE_WAIT_S, within_s)
        wait_s = max(CLOSE_FLOOR_S, wait_s)
        until = time.monotonic() + wait_s
        for connection in self.connections:
            connection.stop(until)
        interrupted = False
        for connection in self.connections:
            interrupted |= connection.wait_done(until + CLOSE_GRACE_S)
        late = [connection for connection in self.connections if not connection.done()]
        for connection in late:  # a session whose end outlasts the close: cut short
            connection.cancel()
            self.warn(
                f"MCP server {connection.shown} did not end its session within "
                f"{wait_s:.2g} s{f' ({limit})' if limit else ''}: cut short"
            )
        for connection in late:
            interrupted |= connection.wait_done(time.monotonic() + LOOP_SLACK_S)
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
