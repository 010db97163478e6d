"""An MCP server's tools as react-cli's: declarations made from its listing, calls answered by
it, both untrusted.

Every text of a server passes the run's redactor (names, descriptions, schemas, results,
errors). A listed name becomes a name the text protocol can read (letters, digits, ``_``,
``.``, ``-``; 64 at most); a description is cleaned, on one line and cut; an input schema must
be a JSON object of bounded size, else the tool is left out. A tool of one required string
argument is the paper's ``Name[argument]``; any other takes its arguments as a JSON object; one
its server does not mark read-only needs the user's consent (``tools.consent``). A result's
text blocks are its observation (other blocks named, structured content as JSON when there is
no text), under Wikipedia's rules; an error result, a refusal, a crash or a timeout is an
observation saying so, and the step records the error.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import mcp_types

from react_cli.infra.deadline import Deadline
from react_cli.infra.redaction import Redactor
from react_cli.infra.untrusted import plain
from react_cli.tools.base import UNAVAILABLE, ToolResult, ToolSpec
from react_cli.tools.mcp.bridge import McpCallError, McpConnection
from react_cli.tools.origin import ToolOrigin
from react_cli.tools.output import READ_FACTOR, ToolFailure, answer, redacted_head

MAX_NAME_CHARS = 64
MAX_DESCRIPTION_CHARS = 1000
MAX_SCHEMA_CHARS = 32_000
_NOT_NAME = re.compile(r"[^A-Za-z0-9_.-]")


def tool_name(listed: str) -> str | None:
    """A listed name as the model may write it (None when nothing of it is usable)."""
    name = _NOT_NAME.sub("_", listed)[:MAX_NAME_CHARS].strip("_.-")
    if not name:
        return None
    return name if name[0].isalpha() else ("t" + name)[:MAX_NAME_CHARS]


def declaration(
    tool: mcp_types.Tool, name: str, origin: ToolOrigin, redact: Redactor
) -> ToolSpec | None:
    """``tool`` as a declaration named ``name``, every secret the run knows masked in its
    description and schema; None for one whose schema is unusable."""
    raw = redacted_head(tool.description or "", MAX_DESCRIPTION_CHARS * READ_FACTOR, redact)
    said = " ".join(redact(plain(raw)).split())[:MAX_DESCRIPTION_CHARS]
    description = said or f"calls {name} on the MCP server {origin.server}."
    try:
        text = json.dumps(tool.input_schema, ensure_ascii=False)
        if len(text) > MAX_SCHEMA_CHARS:
            return None
        schema = redact.json(tool.input_schema)
    except (TypeError, ValueError, RecursionError):
        return None
    properties = schema.get("properties", {}) if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        return None
    if not all(isinstance(key, str) and isinstance(v, dict) for key, v in properties.items()):
        return None
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        return None
    consent = not read_only(tool)
    if len(properties) == 1 and list(properties) == (required or list(properties)):
        ((argument, prop),) = properties.items()
        if prop.get("type") == "string":
            return ToolSpec(name, argument, description, None, origin, consent)
    parameters: dict[str, Any] = {"type": "object", "properties": properties, "required": required}
    for key in ("$defs", "definitions"):  # what the properties' "$ref"s point to
        if isinstance(schema.get(key), dict):
            parameters[key] = schema[key]
    if schema.get("additionalProperties") is True:
        parameters["additionalProperties"] = True
    return ToolSpec(name, ", ".join(properties) or "{}", description, parameters, origin, consent)


def read_only(tool: mcp_types.Tool) -> bool:
    """Whether the server marks ``tool`` read-only (``annotations.readOnlyHint: true``); else
    it may change things (the MCP spec: an unmarked tool may be destructive), so each call
    needs the user's consent."""
    return getattr(tool.annotations, "read_only_hint", None) is True


@dataclass(frozen=True)
class McpTool:
    """A server's tool (``remote``: its name there), called through its connection; one
    serves every run (the server's own state is the server's)."""

    spec: ToolSpec
    remote: str
    connection: McpConnection
    timeout_s: float
    max_chars: int
    redactor: Redactor

    def call(self, argument: str, *, deadline: Deadline) -> ToolResult:
        return answer(
            self.spec, argument, deadline, self.timeout_s, self.max_chars, self._run, self.redactor
        )

    def _run(self, arguments: dict[str, Any], timeout_s: float) -> str:
        """The server's text for the call (an error result, a refusal or a stop: ToolFailure);
        ``answer`` masks every secret the run knows in it."""
        try:
            result = self.connection.call(self.remote, arguments, timeout_s)
        except McpCallError as exc:
            details = {UNAVAILABLE: True} if exc.stopped else None
            raise ToolFailure(str(exc), details) from None
        text = result_text(result)
        if result.is_error:
            raise ToolFailure(text or "the server said the call failed")
        return text


def result_text(result: mcp_types.CallToolResult) -> str:
    """A result as text: its text blocks; the others named; structured content (as JSON)
    when no block says anything."""
    parts = [_block(block) for block in result.content]
    text = "\n".join(part for part in parts if part)
    if not text.strip() and result.structured_content is not None:
        return json.dumps(result.structured_content, ensure_ascii=False)
    return text


def _block(block: Any) -> str:
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(getattr(block, "text", ""))
    if kind in ("image", "audio"):
        return f"[{kind} {getattr(block, 'mime_type', '')}]".replace(" ]", "]")
    if kind == "resource_link":
        return f"[resource {getattr(block, 'uri', '')}]"
    if kind == "resource":
        resource = getattr(block, "resource", None)
        said = getattr(resource, "text", None)
        return str(said) if isinstance(said, str) else f"[resource {getattr(resource, 'uri', '')}]"
    return ""


def needs(tool: mcp_types.Tool) -> str | None:
    """What a listed tool needs of its client that react-cli lacks, in words (None: nothing):
    a tool whose server says it runs only as an MCP task (``execution.taskSupport:
    "required"``) would fail every call react-cli makes, so it is never offered."""
    execution = getattr(tool, "execution", None)
    if getattr(execution, "task_support", None) == "required":
        return "MCP tasks (execution.taskSupport: required)"
    return None


def listed(
    tools: Iterable[mcp_types.Tool], redact: Redactor, note: Callable[[str], None]
) -> list[tuple[str, mcp_types.Tool]]:
    """A server's tools by the names the model may use (a secret in one masked first), each
    name once (first one kept), none that :func:`needs` what react-cli lacks; ``note`` hears
    of each one left out."""
    seen: set[str] = set()
    named: list[tuple[str, mcp_types.Tool]] = []
    for tool in tools:
        name = tool_name(redacted_head(tool.name, MAX_NAME_CHARS * READ_FACTOR, redact))
        shown = repr(plain(redact(tool.name[: MAX_NAME_CHARS * READ_FACTOR]))[:MAX_NAME_CHARS])
        lacking = needs(tool)
        if lacking is not None:
            note(f"its tool {shown} needs {lacking}, which react-cli does not support: left out")
        elif name is None:
            note(f"its tool {shown} has no name a model can write: left out")
        elif name.casefold() in seen:
            note(f"its tool {shown} has the name of another of its tools: left out")
        else:
            seen.add(name.casefold())
            named.append((name, tool))
    return named
