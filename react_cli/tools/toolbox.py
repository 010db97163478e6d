"""The tools a command adds to Wikipedia's: Python files' (``--tools-from``), installed
packages' (the ``react_cli.tools`` entry points) and MCP servers' (``--mcp`` and ``[mcp]``).

Opened once per command (``ask``, ``eval``, ``tools``, ``replay --live-tools``), before the
first run: a file that does not load, a server that does not start or answer ``initialize``
is one ``UsageError`` then, with every server already started stopped again. Its tools serve
every run of the command (an eval's workers share one stdio server per entry); it is closed
when the command ends, whatever ends it, and closing it stops every server.

Names: a Python tool must not take a name another tool has (UsageError); an MCP tool whose
name (or native function name) is taken gets its server's name in front (``notes.search``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING

from react_cli.core.errors import UsageError
from react_cli.infra.redaction import url_secrets
from react_cli.settings.mcp import SERVER_NAME, McpServer
from react_cli.settings.settings import Settings
from react_cli.tools.base import FINISH, Tool, ToolSpec
from react_cli.tools.functions import Declared, file_tools, package_tools
from react_cli.tools.origin import OriginKind, ToolOrigin
from react_cli.tools.wikipedia import LOOKUP, SEARCH

if TYPE_CHECKING:
    from react_cli.tools.mcp.bridge import Handshake, McpBridge, McpConnection


@dataclass
class Toolbox:
    """A command's tools beyond Wikipedia's, and whether Wikipedia's are on."""

    wiki: bool = True
    tools: list[Tool] = field(default_factory=list)
    bridge: McpBridge | None = None

    def extra(self) -> list[Tool]:
        """The tools a run adds to Wikipedia's (they keep no state of a run: shared)."""
        return list(self.tools)

    def specs(self) -> tuple[ToolSpec, ...]:
        """Every tool a run has, Finish last (what ``react-cli tools`` lists)."""
        wiki = (SEARCH, LOOKUP) if self.wiki else ()
        return (*wiki, *(tool.spec for tool in self.tools), FINISH)

    def close(self) -> None:
        """Stop every server (held through Ctrl-C, which is raised once they are)."""
        bridge, self.bridge = self.bridge, None
        if bridge is not None:
            bridge.close()

    def __enter__(self) -> Toolbox:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()


def known_secrets(settings: Settings) -> list[str]:
    """The secrets a run knows: no tool's process or output may hold them."""
    found = [settings.api_key or "", *url_secrets(settings.base_url), *url_secrets(settings.wiki)]
    for server in settings.mcp:
        found += server.secrets()
    return [secret for secret in found if secret]


def open_toolbox(settings: Settings, environ: Mapping[str, str] = os.environ) -> Toolbox:
    """The tools ``settings`` add (see the module docstring); UsageError for one that cannot
    be had, nothing left running."""
    taken: dict[str, str] = {}  # folded name or function name -> where it came from
    for spec in (SEARCH, LOOKUP) if settings.wiki_tools else ():
        _take(taken, spec, "Wikipedia's tools (--no-wiki turns them off)")
    _take(taken, FINISH, "the built-in Finish")
    toolbox = Toolbox(settings.wiki_tools)
    python = [d for path in settings.tools_from for d in file_tools(path)] + package_tools()
    for declared in python:
        clash = _clash(taken, declared.spec)
        if clash is not None:
            where = _where(declared)
            raise UsageError(
                f"{where}: the tool {declared.spec.name} has the name of {clash}: rename it "
                "with @tool(name=...)"
            )
        _take(taken, declared.spec, _where(declared))
        toolbox.tools.append(declared.tool(settings.tool_timeout_s, settings.max_observation_chars))
    if settings.mcp:
        try:
            _connect(toolbox, settings, environ, taken)
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
    toolbox: Toolbox, settings: Settings, environ: Mapping[str, str], taken: dict[str, str]
) -> None:
    """Start the servers (all at once), then take each one's tools."""
    from react_cli.tools.mcp import require_sdk

    require_sdk()
    from react_cli.infra.redaction import Redactor
    from react_cli.tools.mcp.bridge import McpBridge
    from react_cli.tools.mcp.environment import server_environment
    from react_cli.tools.mcp.tools import McpTool, declaration, listed

    secrets = known_secrets(settings)
    envs = [server_environment(server, environ, secrets) for server in settings.mcp]
    toolbox.bridge = bridge = McpBridge()
    outcomes = bridge.connect(settings.mcp, envs, settings.tool_timeout_s)
    names: set[str] = set()
    redactor = Redactor(secrets)
    for connection, outcome in outcomes:
        handshake = _handshake(connection, outcome, settings.tool_timeout_s)
        server = _named(connection.server, handshake, names)
        origin = ToolOrigin(
            OriginKind.MCP,
            server=server,
            command=None if connection.server.url else connection.server.reached(),
            url=connection.server.reached() if connection.server.url else None,
            server_name=redactor(" ".join(handshake.name.split())[:100]) or None,
            server_version=redactor(" ".join(handshake.version.split())[:100]) or None,
        )
        for name, listing in listed(handshake.tools):
            spec = declaration(listing, name, origin)
            if spec is None:
                continue
            if _clash(taken, spec) is not None:
                spec = declaration(listing, f"{server}.{name}"[:64], origin)
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
                settings.max_observation_chars,
                redactor,
            )
            toolbox.tools.append(tool)


def _handshake(
    connection: McpConnection, outcome: Handshake | BaseException, timeout_s: float
) -> Handshake:
    """The server's handshake, or the UsageError saying why there is none."""
    from react_cli.tools.mcp.bridge import Handshake

    if isinstance(outcome, Handshake):
        return outcome
    outcome = _leaf(outcome)
    server = connection.server
    named = f"MCP server {server.describe()}"
    if isinstance(outcome, TimeoutError):
        said = f"did not answer initialize within {timeout_s:g} s (tool_timeout_s)"
    elif isinstance(outcome, OSError) and connection.link.pid is None and server.command:
        said = f"cannot be started: {outcome.strerror or outcome}"
    elif server.url is not None and connection.link.pid is None:
        said = f"did not answer: {_reason(outcome)}"
    else:
        said = _exit(connection) or f"failed to start: {_reason(outcome)}"
    words = connection.link.last_words()
    raise UsageError(f"{named} {said}" + (f"; it said: {words}" if words else ""))


def _exit(connection: McpConnection) -> str | None:
    code = connection.link.returncode
    if code is None or connection.server.url is not None:
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


def _reason(exc: BaseException) -> str:
    """One line for an exception the SDK or a transport raised."""
    said = " ".join(str(exc).split())[:300]
    return said or type(exc).__name__


def _named(server: McpServer, handshake: Handshake, names: set[str]) -> str:
    """react-cli's name for a server: its config entry's, else the one it gave, else its
    command's or host's; made unique with ``-2``, ``-3``..."""
    base = server.name or _clean(handshake.name) or _fallback(server)
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
