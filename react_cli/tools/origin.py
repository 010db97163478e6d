"""Where a tool came from, as its trace records it: built in; a Python file (its path and the
hash of the text that ran); an installed package (its name and version); an MCP server (the
command or URL it was reached by, without credentials, and the name and version it gave).

Recorded with each tool's declaration (``config.tools[].origin``), shown by ``react-cli tools``,
and read by ``replay --live-tools`` to say which live tool a recorded one needs. A recorded
origin is only ever described, never acted on: a trace starts no server and imports no file;
a recorded command line or URL is read with its credentials masked (an older react-cli
recorded a ``--header`` whole).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from enum import Enum
from typing import Any

from react_cli.core import fields as recorded
from react_cli.infra.credentials import redact_url
from react_cli.settings.mcp import shown_command


class OriginKind(str, Enum):
    BUILT_IN = "builtin"
    FILE = "file"
    PACKAGE = "package"
    MCP = "mcp"


@dataclass(frozen=True)
class ToolOrigin:
    """One tool's origin; the fields its ``kind`` has (the others None). ``kind`` is text when a
    newer react-cli recorded one this one does not know."""

    kind: OriginKind | str
    path: str | None = None  # file: as given
    sha256: str | None = None  # file: of the bytes that ran
    package: str | None = None  # package: its distribution's name
    version: str | None = None  # package: its version
    entry_point: str | None = None  # package: the entry point's name
    server: str | None = None  # mcp: react-cli's name for it (the config table's, or derived)
    command: str | None = None  # mcp stdio: the command line, credentials removed
    url: str | None = None  # mcp HTTP: without credentials or query string
    server_name: str | None = None  # mcp: what its initialize answer calls it
    server_version: str | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "kind": str(self.kind.value if isinstance(self.kind, OriginKind) else self.kind)
        }
        for item in fields(self)[1:]:
            value = getattr(self, item.name)
            if value is not None:
                data[item.name] = value
        return data

    @classmethod
    def from_json(cls, data: Any) -> ToolOrigin:
        """A recorded origin; TypeError/ValueError naming what is wrong."""
        if not isinstance(data, dict):
            raise TypeError(f"a tool's origin is {type(data).__name__}, not an object")
        kind = recorded.needed(recorded.text(data.get("kind"), "origin kind"), "origin kind")
        known = {
            item.name: recorded.text(data.get(item.name), f"origin {item.name}")
            for item in fields(cls)[1:]
        }
        if known["command"] is not None:  # an older react-cli masked less of a command line
            known["command"] = shown_command(known["command"])
        if known["url"] is not None:
            known["url"] = redact_url(known["url"])
        try:
            return cls(OriginKind(kind), **known)
        except ValueError:
            return cls(kind, **known)

    def short(self) -> str:
        """Where it came from in a few words: ``file tools/calc.py``, ``MCP server notes``."""
        if self.kind is OriginKind.MCP:
            return f"MCP server {self.server}"
        return self.describe()

    def describe(self) -> str:
        """One line for people: ``file tools/calc.py``, ``package calc-tools 1.2``, ``MCP
        server notes (python notes.py; notes-server 0.3)``, ``built in``."""
        if self.kind is OriginKind.BUILT_IN:
            return "built in"
        if self.kind is OriginKind.FILE:
            return f"file {self.path}"
        if self.kind is OriginKind.PACKAGE:
            return " ".join(part for part in ("package", self.package, self.version) if part)
        if self.kind is OriginKind.MCP:
            facts = self.reached()
            return f"MCP server {self.server}" + (f" ({facts})" if facts else "")
        return str(self.kind)

    def reached(self) -> str:
        """An MCP server's command or URL and what it calls itself: ``python notes.py; notes
        0.3`` (empty for another kind)."""
        told = " ".join(part for part in (self.server_name, self.server_version) if part)
        return "; ".join(part for part in (self.command or self.url, told) if part)


BUILT_IN = ToolOrigin(OriginKind.BUILT_IN)
