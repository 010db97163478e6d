"""The users' tools a command adds to its toolboxes': Python files' (``--tools-from``),
installed packages' (the ``react_cli.tools`` entry points) and MCP servers' (``--mcp`` and
``[mcp]``).

Opened once per command by its session (``ask``, ``eval``, ``chat``, ``tools``, ``replay
--live-tools``), before the first run: a file that does not load, a server that does not start
or answer ``initialize`` is one ``UsageError`` then, with every server already started
stopped again.
Its tools serve every run of the command (an eval's workers share one stdio server per
entry); it is closed when the command ends, whatever ends it, and closing it stops every
server. Starting and stopping them are held to the run's time limit (``--timeout``), counted
from the opening: a server gets what is left of it to answer ``initialize`` (at most
``tool_timeout_s``), and to stop once the command is done (see ``McpBridge.close``). What a
listing left out (a tool that cannot be read or declared) is a warning.

Names: a Python tool must not take a name another tool has, a toolbox's included
(UsageError); an MCP tool whose name (or native function name) is taken gets its server's name
in front (``notes.search``).

Secrets: the users' tools' ``redactor`` is made from every secret the run knows
(``settings.secrets.known_secrets``); every text its tools send back passes it (results,
exceptions, listings, schemas, a server's name and its words when it fails to start), and no
server's environment holds a credential (``tools.mcp.environment``).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from react_cli.core.errors import UsageError
from react_cli.infra.deadline import NO_DEADLINE, Deadline
from react_cli.infra.redaction import Redactor
from react_cli.settings.mcp import SERVER_NAME, McpServer
from react_cli.settings.secrets import known_secrets
from react_cli.settings.settings import Settings
from react_cli.tools.base import FINISH, Tool, ToolSpec
from react_cli.tools.functions import Declared, file_tools, package_tools
from react_cli.tools.mcp.environment import server_environment
from react_cli.tools.origin import OriginKind, ToolOrigin
from react_cli.tools.output import redacted_head
from react_cli.tools.registry import Provider
from react_cli.tools.toolbox import Toolbox

if TYPE_CHECKING:
    from react_cli.tools.mcp.bridge import Handshake, McpBridge, McpConnection

MAX_SAID_CHARS = 100  # of a server's name or version


def _unheard(message: str) -> None:
    """Where warnings go that nobody asked to hear."""


@dataclass
class UserTools(Toolbox):
    """A command's users' tools (they keep no state of a run: one box serves every run) and
    the servers behind them."""

    shared: list[Tool] = field(default_factory=list)
    bridge: McpBridge | None = None
    redactor: Redactor = field(default_factory=Redactor)  # the run's: every tool text passes it
    deadline: Deadline = NO_DEADLINE  # the start's and the close's: the run's time limit

    def tools(self) -> list[Tool]:
        return list(self.shared)

    def provider(self) -> Provider:
        """The users' tools as one tool set of the command's runs."""
        return Provider(tuple(tool.spec for tool in self.shared), lambda: self)

    def close(self) -> None:
        """Stop every server (held through Ctrl-C, which is raised once they are)."""
        bridge, self.bridge = self.bridge, None
        if bridge is not None:
            left = self.deadline.left()
            bridge.close(left, "" if left is None else "what --timeout left")


def open_user_tools(
    settings: Settings,
    beside: Iterable[Provider] = (),
    environ: Mapping[str, str] = os.environ,
    warn: Callable[[str], None] = _unheard,
) -> UserTools:
    """The tools ``settings`` add to the tool sets ``beside`` (see the module docstring);
    UsageError for one that cannot be had, nothing left running. ``warn`` hears what the user
    should know: a tool a listing left out, a server started again, one whose end was cut
    short."""
    taken: dict[str, str] = {}  # folded name or function name -> where it came from
    for provider in beside:
        for spec in provider.specs:
            _take(taken, spec, provider.where or spec.name)
    _take(taken, FINISH, "the built-in Finish")
    toolbox = UserTools(deadline=Deadline.after(settings.run_timeout_s))
    python = [d for path in settings.tools_from for d in file_tools(path)] + package_tools()
    if not python and not settings.mcp:
        return toolbox
    secrets = known_secrets(settings, environ)
    toolbox.redactor = redactor = Redactor(secrets)
    for declared in python:
        clash = _clash(taken, declared.spec)
        if clash is not None:
            where = _where(declared)
            raise UsageError(
                f"{where}: the tool {declared.spec.name} has the name of {clash}: rename it "
                "with @tool(name=...)"
            )
        _take(taken, declared.spec, _where(declared))
        limit = settings.max_observation_chars
        toolbox.shared.append(declared.tool(settings.tool_timeout_s, limit, redactor))
    if settings.mcp:
        try:
            envs = [server_environment(server, environ, secrets) for server in settings.mcp]
            _connect(toolbox, settings, envs, taken, redactor, warn)
        except BaseException:
            toolbox.close()
            raise
    return toolbox


def _where(declared: Declared) -> str:
    origin = declared.spec.origin
    return origin.describe() if origin is not None else declared.spec.name


def _keys(spec: ToolSpec) -> set[str]:
    return {spec.name.casefold(), spec.function_name.casefold()}


def _clash(taken: Mapping[str, str], spec: ToolSpec) -> str | None:
    return next((taken[key] for key in _keys(spec) if key in taken), None)


def _take(taken: dict[str, str], spec: ToolSpec, where: str) -> None:
    for key in _keys(spec):
        taken[key] = where


def _connect(
    toolbox: UserTools,
    settings: Settings,
    envs: list[dict[str, str]],
    taken: dict[str, str],
    redactor: Redactor,
    warn: Callable[[str], None],
) -> None:
    """Start the servers (all at once), then take each one's tools."""
    from react_cli.tools.mcp import require_sdk

    require_sdk()
    from react_cli.tools.mcp.bridge import McpBridge
    from react_cli.tools.mcp.tools import McpTool, declaration, listed

    toolbox.bridge = bridge = McpBridge(warn)
    limit = _start_limit(settings, toolbox.deadline)
    outcomes = bridge.connect(settings.mcp, envs, settings.tool_timeout_s, limit[0])
    names: set[str] = set()
    for connection, outcome in outcomes:
        handshake = _handshake(connection, outcome, limit, redactor)
        server = _named(connection.server, _said(handshake.name, redactor), names)
        connection.shown = server
        tell = functools.partial(_noted, warn, f"MCP server {server}", redactor)
        for note in connection.link.heard.notes:  # what its listing held that could not be read
            tell(note)
        origin = ToolOrigin(
            OriginKind.MCP,
            server=server,
            command=None if connection.server.url else connection.server.reached(),
            url=connection.server.reached() if connection.server.url else None,
            server_name=_said(handshake.name, redactor) or None,
            server_version=_said(handshake.version, redactor) or None,
        )
        for name, listing in listed(handshake.tools, redactor, tell):
            spec = declaration(listing, name, origin, redactor)
            if spec is None:
                tell(f"its tool {name} has an input schema that cannot be used: left out")
                continue
            if _clash(taken, spec) is not None:
                spec = declaration(listing, f"{server}.{name}"[:64], origin, redactor)
                if spec is None or _clash(taken, spec) is not None:
                    raise UsageError(
                        f"MCP server {server}: its tool {name} clashes with another tool, "
                        "even named after the server"
                    )
            _take(taken, spec, origin.describe())
            tool = McpTool(
                spec,
                listing.name,
                connection,
                settings.tool_timeout_s,
                connection.server.max_result_chars or settings.max_observation_chars,
                redactor,
            )
            toolbox.shared.append(tool)


def _said(text: str, redactor: Redactor) -> str:
    """What a server said of itself (its name, its version), on one line, cut, redacted."""
    return " ".join(redacted_head(text, MAX_SAID_CHARS * 4, redactor).split())[:MAX_SAID_CHARS]


def _noted(warn: Callable[[str], None], server: str, redactor: Redactor, note: str) -> None:
    """A note on what a server's listing held, as a warning naming the server."""
    warn(f"{server}: {redactor(note)}")


def _start_limit(settings: Settings, deadline: Deadline) -> tuple[float, str]:
    """How long a server has to start, and that time as an error says it: ``tool_timeout_s``,
    or what is left of ``--timeout`` when that is less."""
    left = deadline.left()
    if left is not None and left < settings.tool_timeout_s:
        left = max(0.0, left)
        return left, f"{left:.2g} s (what --timeout left)"
    return settings.tool_timeout_s, f"{settings.tool_timeout_s:g} s (tool_timeout_s)"


def _handshake(
    connection: McpConnection,
    outcome: Handshake | BaseException,
    limit: tuple[float, str],
    redactor: Redactor,
) -> Handshake:
    """The server's handshake, or the UsageError saying why there is none (what the server
    wrote in it redacted: it may print the token its ``env`` gave it)."""
    from mcp.shared.exceptions import MCPError

    from react_cli.tools.mcp.bridge import Handshake

    if isinstance(outcome, Handshake):
        return outcome
    outcome = _leaf(outcome)
    server = connection.server
    named = f"MCP server {server.describe()}"
    if isinstance(outcome, TimeoutError):
        said = f"did not answer initialize within {limit[1]}"
    elif isinstance(outcome, OSError) and connection.link.pid is None and server.command:
        said = f"cannot be started: {redactor(str(outcome.strerror or outcome))}"
    elif isinstance(outcome, MCPError) and _exit(connection) is None:  # it answered, badly
        said = f"failed to start: {_reason(outcome, redactor)}"
    elif server.url is not None and connection.link.pid is None:
        said = f"did not answer: {_reason(outcome, redactor)}"
    else:
        said = _exit(connection) or f"failed to start: {_reason(outcome, redactor)}"
    words = connection.link.last_words(redactor)
    raise UsageError(f"{named} {said}" + (f"; it said: {words}" if words else ""))


def _exit(connection: McpConnection) -> str | None:
    code = connection.link.returncode
    if code is None or not connection.link.ended or connection.server.url is not None:
        return None
    return f"exited (status {code}) before answering initialize"


def _leaf(exc: BaseException) -> BaseException:
    """The first exception an exception group holds (anyio's task groups wrap them), or
    ``exc`` itself."""
    while True:
        inner = getattr(exc, "exceptions", None)  # 3.10: anyio's backport of the groups
        if not inner:
            return exc
        exc = inner[0]


def _reason(exc: BaseException, redactor: Redactor) -> str:
    """One line for an exception the SDK or a transport raised (redacted: it may quote the
    server)."""
    said = " ".join(redacted_head(str(exc), 1200, redactor).split())[:300]
    return said or type(exc).__name__


def _named(server: McpServer, given: str, names: set[str]) -> str:
    """react-cli's name for a server: its config entry's, else the one it ``given`` (redacted),
    else its command's or host's; made unique with ``-2``, ``-3``..."""
    base = server.name or _clean(given) or _fallback(server)
    name, number = base, 1
    while name.casefold() in names:
        number += 1
        name = f"{base}-{number}"
    names.add(name.casefold())
    return name


def _clean(text: str) -> str:
    kept = "".join(c if c.isascii() and (c.isalnum() or c in "_-") else "-" for c in text)
    kept = kept.strip("-")[:40]
    return kept if SERVER_NAME.fullmatch(kept) else ""


def _fallback(server: McpServer) -> str:
    from urllib.parse import urlsplit

    if server.url is not None:
        return _clean(urlsplit(server.url).hostname or "") or "mcp"
    return _clean(os.path.basename(server.command[0])) or "mcp"
