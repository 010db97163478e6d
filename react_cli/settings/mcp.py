"""MCP servers as settings: ``--mcp 'COMMAND ARGS…'``, ``--mcp URL``, ``--mcp NAME`` and the
config file's ``[mcp]`` table of named servers::

    [mcp.notes]
    command = "python ~/notes/server.py"      # or a list: ["python", "server.py"]
    env = { NOTES_DIR = "~/notes" }           # set in its environment
    pass_env = ["GITHUB_TOKEN"]               # secrets it may see after all
    # cwd = "~/notes"; enabled = false (on only with --mcp notes)

    [mcp.docs]
    url = "https://docs.example.com/mcp"
    headers = { Authorization = "Bearer …" }

Every enabled server of the table is on for every run; ``--mcp`` adds one (or turns on a named
one). What a server is given to reach it (``env`` values, ``headers``, a URL's user
information) is a secret: :meth:`McpServer.describe` never shows it, and a trace records only
that (``tools.origin``).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from react_cli.core.errors import UsageError
from react_cli.core.wording import did_you_mean, quoted
from react_cli.infra.redaction import MASK, redact_url, url_secrets
from react_cli.settings.urls import check_url

MCP_TABLE = "mcp"
SERVER_NAME = re.compile(r"[A-Za-z0-9_-]{1,40}")
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
_KEYS = ("command", "url", "env", "pass_env", "headers", "cwd", "enabled")
_SECRET_WORD = re.compile(r"token|key|secret|passw|auth|credential|cookie", re.IGNORECASE)


@dataclass(frozen=True)
class McpServer:
    """One MCP server a run starts (``command``: over stdio) or connects to (``url``:
    streamable HTTP); ``name`` None for one given by ``--mcp`` alone (its own name, from its
    answer to ``initialize``, is taken then)."""

    name: str | None
    command: tuple[str, ...] = ()
    url: str | None = None
    env: tuple[tuple[str, str], ...] = ()
    pass_env: tuple[str, ...] = ()
    headers: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None

    @property
    def transport(self) -> str:
        return "stdio" if self.command else "http"

    def secrets(self) -> list[str]:
        """What reaching it takes that nothing may show: ``env`` values, header values, the
        URL's user information and query."""
        found = [value for _, value in (*self.env, *self.headers)]
        return [*found, *url_secrets(self.url or "")]

    def reached(self) -> str:
        """How it is reached, fit for a trace: its command line (an argument that looks like
        a credential masked, URLs without user information or query) or its URL (likewise)."""
        if self.url is not None:
            return redact_url(self.url)
        return shlex.join(_shown_arguments(self.command))

    def describe(self) -> str:
        """``notes: python server.py`` (``react-cli config``, error messages)."""
        return f"{self.name}: {self.reached()}" if self.name else self.reached()


def _shown_arguments(argv: tuple[str, ...]) -> list[str]:
    shown: list[str] = []
    masked_next = False
    for arg in argv:
        if masked_next:
            shown.append(MASK)
            masked_next = False
            continue
        key, equals, _ = arg.partition("=")
        if "://" in arg:
            shown.append(redact_url(arg))
        elif equals and key.startswith("-") and _SECRET_WORD.search(key):
            shown.append(f"{key}={MASK}")
        else:
            shown.append(arg)
            masked_next = arg.startswith("-") and not equals and bool(_SECRET_WORD.search(arg))
    return shown


def mcp_servers(table: Any, given: Iterable[str], path: object) -> tuple[McpServer, ...]:
    """The servers a run uses: the enabled ones of the config file's ``[mcp]`` table (in its
    order), then each ``--mcp`` value's (a server's name in the table, a URL or a command
    line); UsageError naming the table entry or the value that is wrong."""
    named = _table(table, path)
    chosen = [server for server, enabled in named.values() if enabled]
    for value in given:
        text = value.strip()
        if text in named:
            server = named[text][0]
            if server not in chosen:
                chosen.append(server)
        elif text.lower().startswith(("http://", "https://")):
            check_url("--mcp", text)
            chosen.append(McpServer(None, url=text))
        else:
            chosen.append(McpServer(None, command=_command(text, "--mcp")))
    return tuple(chosen)


def _command(text: str, where: str) -> tuple[str, ...]:
    try:
        argv = tuple(shlex.split(text))
    except ValueError as exc:
        raise UsageError(f"{where}: the command {quoted(text)} cannot be split: {exc}") from None
    if not argv:
        raise UsageError(f"{where}: an empty command (give 'COMMAND ARGS…' or a URL)")
    return argv


def _table(table: Any, path: object) -> dict[str, tuple[McpServer, bool]]:
    """The config file's servers by name, each with whether it is on for every run."""
    if table is None:
        return {}
    where = f"config file {path}: [{MCP_TABLE}]"
    if not isinstance(table, dict) or not all(isinstance(v, dict) for v in table.values()):
        raise UsageError(f"{where} holds one table per server: [{MCP_TABLE}.NAME]")
    return {name: _server(name, entry, f"{where} {quoted(name)}") for name, entry in table.items()}


def _server(name: str, entry: dict[str, Any], where: str) -> tuple[McpServer, bool]:
    if not SERVER_NAME.fullmatch(name):
        raise UsageError(f"{where}: a server's name is letters, digits, '_' and '-' (40 at most)")
    unknown = sorted(set(entry) - set(_KEYS))
    if unknown:
        said = ", ".join(did_you_mean(key, _KEYS) for key in unknown)
        raise UsageError(f"{where}: unknown key(s) {said}")
    command, url = entry.get("command"), entry.get("url")
    if (command is None) == (url is None):
        raise UsageError(f"{where}: give a command (stdio) or a url (streamable HTTP)")
    enabled = entry.get("enabled", True)
    if not isinstance(enabled, bool):
        raise UsageError(f"{where}: enabled is true or false")
    argv: tuple[str, ...] = ()
    if isinstance(command, str):
        argv = _command(command, where)
    elif command is not None:
        if (
            not isinstance(command, list)
            or not command
            or not all(isinstance(a, str) for a in command)
        ):
            raise UsageError(f"{where}: command is a string or a list of strings")
        argv = tuple(command)
    if url is not None:
        if not isinstance(url, str):
            raise UsageError(f"{where}: url is a string")
        check_url(where, url)
    cwd = entry.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise UsageError(f"{where}: cwd is a string")
    pass_env = entry.get("pass_env", [])
    if not isinstance(pass_env, list) or not all(
        isinstance(n, str) and ENV_NAME.fullmatch(n) for n in pass_env
    ):
        raise UsageError(f"{where}: pass_env is a list of environment variable names")
    server = McpServer(
        name,
        command=argv,
        url=url,
        env=_pairs(entry.get("env"), f"{where}: env", names=True),
        pass_env=tuple(pass_env),
        headers=_pairs(entry.get("headers"), f"{where}: headers", names=False),
        cwd=cwd,
    )
    if server.headers and server.url is None:
        raise UsageError(f"{where}: headers go with a url (a stdio server gets env)")
    return server, enabled


def _pairs(value: Any, where: str, *, names: bool) -> tuple[tuple[str, str], ...]:
    """A table of text values (``env``: its keys variable names; ``headers``: printable)."""
    if value is None:
        return ()
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise UsageError(f"{where} is a table of strings")
    for key, text in value.items():
        if names and not ENV_NAME.fullmatch(key):
            raise UsageError(f"{where}: {quoted(key)} is not an environment variable's name")
        if not names and not (key.isascii() and key.isprintable() and key and ":" not in key):
            raise UsageError(f"{where}: {quoted(key)} is not a header's name")
        if "\x00" in text or (not names and not text.isprintable()):
            raise UsageError(f"{where}: the value of {quoted(key)} holds control characters")
    return tuple(value.items())
