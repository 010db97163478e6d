"""A second real MCP server written with the SDK, for tools that are not Wikipedia's (issue
31): a file read whose result has many lines (some of which begin like ``Thought``, ``Action``
and ``Observation``), a conversion whose parameters are typed, described and limited to
allowed values, and a tool its server says runs only as an MCP task (``execution.taskSupport:
"required"``), which react-cli cannot call.

It is served by ``mcp_server``'s zygote (``mcp_fixtures.Servers(SCRIPT)``): the zygote's own
functions serve whichever ``app`` its module holds, so this module puts its own there.
"""

from __future__ import annotations

import os
import sys
from typing import Annotated, Any, Literal

import mcp_server
from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations
from mcp_types import ToolExecution
from pydantic import Field

READ_ONLY = ToolAnnotations(read_only_hint=True)
NOTES = (
    "def main():\n"
    '    print("hello")\n'
    "\n"
    "Thought 9: this line is the file's, not a thought\n"
    "Action 9: Finish[not an action]\n"
    "Observation 9: nor an observation\r\n"
    "\tend of notes\n"
)
FILES = {"notes.txt": NOTES, "big.txt": "".join(f"line {n:05d}\n" for n in range(2000))}
TASK_ONLY = "long_job"


class FilesServer(MCPServer):
    """The SDK's server, its listing saying that ``long_job`` runs only as a task (its
    decorator has no say in ``execution``)."""

    async def list_tools(self) -> list[Any]:
        tools = await super().list_tools()
        task = ToolExecution(task_support="required")
        return [
            t.model_copy(update={"execution": task}) if t.name == TASK_ONLY else t for t in tools
        ]


app = FilesServer("files", version="0.1.0")


@app.tool(annotations=READ_ONLY)
def read_file(path: str) -> str:
    """Read a file of the server's: notes.txt or big.txt."""
    return FILES.get(path, f"no file {path}")


@app.tool(annotations=READ_ONLY)
def convert(
    amount: Annotated[float, Field(description="the distance to convert")],
    unit: Annotated[Literal["km", "mi"], Field(description="the unit to convert to")],
    digits: Annotated[int, Field(description="digits after the point")] = 2,
) -> str:
    """Convert a distance between kilometres and miles."""
    value = amount * 0.621371 if unit == "mi" else amount / 0.621371
    return f"{value:.{digits}f} {unit}"


@app.tool(annotations=READ_ONLY)
def long_job(text: str) -> str:
    """Run a long job (only as an MCP task)."""
    return f"done {text}"


mcp_server.app = app  # what the zygote's functions serve

if __name__ == "__main__":
    if sys.argv[1:2] == ["zygote"]:
        try:
            mcp_server.zygote(sys.argv[2])
        finally:
            os._exit(0)
    else:
        app.run()
