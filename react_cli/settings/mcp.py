"""MCP servers as settings: ``--mcp 'COMMAND ARGS…'``, ``--mcp URL``, ``--mcp NAME`` and the
config file's ``[mcp]`` table of named servers::

    [mcp.notes]
    command = "python ~/notes/server.py"      # or a list: ["python", "server.py"]
    env = { NOTES_DIR = "~/notes" }           # set in its environment
    pass_env = ["GITHUB_TOKEN"]               # secrets it may see after all
    max_result_chars = 20000                  # its results cut here (max_observation_chars)
    # cwd = "~/notes"; enabled = false (on only with --mcp notes)

    [mcp.docs]
    url = "https://docs.example.com/mcp"
    headers = { Authorization = "Bearer …" }

Every enabled server of the table is on for every run; ``--mcp`` adds one (or turns on a named
one). ``~`` is expanded where a shell would expand it: a word of ``command`` (either form) or
``cwd`` that starts with it, an ``env`` value at its start and after each ``:`` (as in an
assignment, ``PATH = "~/bin:/usr/bin"``); a relative ``cwd`` is taken from where react-cli
started. What a server is given to reach it (``env`` values, ``headers``, a URL's user
information and query, what looks like a credential on its command line: :func:`masked_command`)
is a secret: :meth:`McpServer.describe` never shows it, a trace and an eval's summary record
only that (``tools.origin``), and :meth:`McpServer.secrets` tells the run's redactor.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from react_cli.core.errors import UsageError
from react_cli.core.wording import did_you_mean, quoted
from react_cli.infra.credentials import (
    credential_secrets,
    masked_credential,
    redact_url,
    secret_name,
    url_secrets,
)
from react_cli.infra.redaction import MASK
from react_cli.settings.urls import check_url

MCP_TABLE = "mcp"
SERVER_NAME = re.compile(r"[A-Za-z0-9_-]{1,40}")
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
_KEYS = ("command", "url", "env", "pass_env", "headers", "cwd", "enabled", "max_result_chars")
MIN_RESULT_CHARS, MAX_RESULT_CHARS = 50, 1_000_000  # max_observation_chars's bounds


@dataclass(frozen=True, repr=False)
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
    max_result_chars: int | None = None  # its tools' results cut here, not max_observation_chars

    @property
    def transport(self) -> str:
        return "stdio" if self.command else "http"

    def secrets(self) -> list[str]:
        """What reaching it takes that nothing may show: ``env`` values, header values (and
        the credentials of ``Bearer X``), the URL's user information and query, what its
        command line holds that looks like a credential (:func:`masked_command`)."""
        found = [value for _, value in self.env]
        for _, value in self.headers:
            found += {value, *credential_secrets(value)}
        return [*found, *url_secrets(self.url or ""), *masked_command(self.command)[1]]

    def reached(self) -> str:
        """How it is reached, fit for a trace: its command line (an argument that looks like
        a credential masked, URLs without user information or query) or its URL (likewise)."""
        if self.url is not None:
            return redact_url(self.url)
        return shlex.join(masked_command(self.command)[0])

    def describe(self) -> str:
        """``notes: python server.py`` (``react-cli config``, error messages)."""
        return f"{self.name}: {self.reached()}" if self.name else self.reached()

    def __repr__(self) -> str:  # a debug traceback or log shows no credential either
        return f"McpServer({self.describe()!r})"


_HEADER_OPTIONS = frozenset({"-H", "--header", "--headers", "--http-header"})
_HEADER = re.compile(r"([A-Za-z0-9_-]+)(\s*:\s*)(.*)", re.DOTALL)
_KEY = re.compile(r"-{0,2}[A-Za-z0-9_.-]+")


def masked_command(argv: Iterable[str]) -> tuple[list[str], list[str]]:
    """A command line fit to store and show, and the secrets it holds: the value of an option
    named like a credential (``--token X``, ``--api-key=X``, and ``key=value`` forms of those:
    ``GITHUB_TOKEN=X``), a header's value (``--header 'Authorization: Bearer X'``, ``-H``, or a
    credential header written alone), and of a URL its user information and query (dropped);
    names are :func:`~react_cli.infra.credentials.secret_name`'s."""
    shown: list[str] = []
    secrets: list[str] = []
    expect: str | None = None  # what the option before says this argument is
    for arg in argv:
        if expect is not None and not arg.startswith("--"):
            shown.append(_masked_value(arg, secrets, header=expect == "header"))
            expect = None
            continue
        shown.append(_masked_argument(arg, secrets))
        if arg in _HEADER_OPTIONS:
            expect = "header"
        elif arg.startswith("-") and "=" not in arg and secret_name(arg):
            expect = "secret"
        else:
            expect = None
    return shown, secrets


def shown_command(text: str) -> str:
    """A recorded command line (``McpServer.reached``) as it may be shown: what looks like a
    credential masked, in case a react-cli that masked less wrote it (unchanged when nothing
    in it needs masking; a line that cannot be split is shown as it is)."""
    try:
        argv = shlex.split(text)
    except ValueError:
        return text
    shown = masked_command(argv)[0]
    return text if shown == argv else shlex.join(shown)


def _masked_argument(arg: str, secrets: list[str], *, nested: bool = False) -> str:
    """One argument alone: ``key=value`` (its value masked for a credential's or a header
    option's key, else looked into once more), a URL, a credential header, or as it is."""
    key, equals, value = arg.partition("=")
    if equals and _KEY.fullmatch(key):
        if key in _HEADER_OPTIONS or secret_name(key):
            return f"{key}={_masked_value(value, secrets, header=key in _HEADER_OPTIONS)}"
        if not nested:  # --env=GITHUB_TOKEN=X
            return f"{key}={_masked_argument(value, secrets, nested=True)}"
    if "://" in arg:
        secrets += url_secrets(arg)
        return redact_url(arg)
    match = _HEADER.fullmatch(arg)
    if match is not None and secret_name(match[1]):
        return _masked_value(arg, secrets, header=True)
    return arg


def _masked_value(value: str, secrets: list[str], *, header: bool) -> str:
    """A credential's value masked (its secrets kept in ``secrets``): a header's (``Name:
    value``) keeps its name and its scheme (``Authorization: Bearer ***``)."""
    match = _HEADER.fullmatch(value) if header else None
    if match is None:
        secrets += credential_secrets(value)
        return MASK
    name, colon, said = match.groups()
    secrets += credential_secrets(said)
    return f"{name}{colon}{masked_credential(said)}"


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
    return tuple(map(_home, argv))


def _home(word: str) -> str:
    """``word`` with a leading ``~`` or ``~user`` expanded, as a shell expands a word."""
    return os.path.expanduser(word) if word.startswith("~") else word


def _assigned(value: str) -> str:
    """An ``env`` value as a shell expands an assignment: ``~`` at its start and after each
    ``:`` (``~/bin:~/.local/bin``)."""
    return ":".join(map(_home, value.split(":")))


def _folder(cwd: str) -> str:
    """``cwd`` expanded and absolute: a server started later, whatever the working directory
    is then, starts where the user meant."""
    return str(Path(_home(cwd)).absolute())


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
        argv = tuple(map(_home, command))
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
    env = _pairs(entry.get("env"), f"{where}: env", names=True)
    limit = entry.get("max_result_chars")
    if limit is not None and (
        isinstance(limit, bool)
        or not isinstance(limit, int)
        or not MIN_RESULT_CHARS <= limit <= MAX_RESULT_CHARS
    ):
        raise UsageError(
            f"{where}: max_result_chars is a whole number from {MIN_RESULT_CHARS} to "
            f"{MAX_RESULT_CHARS:,}"
        )
    server = McpServer(
        name,
        command=argv,
        url=url,
        env=tuple((key, _assigned(value)) for key, value in env),
        pass_env=tuple(pass_env),
        headers=_pairs(entry.get("headers"), f"{where}: headers", names=False),
        cwd=None if cwd is None else _folder(cwd),
        max_result_chars=limit,
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
