"""``react-cli tools``: the tools a run would have, with where each comes from."""

from __future__ import annotations

from typing import Annotated

import typer

from react_cli.cli.app import app, print_json
from react_cli.cli.options import NO_RUN_OPTIONS, RunOptions, with_options


@app.command(short_help="List the tools a run would have: name, origin, description.")
@with_options(RunOptions)
def tools(
    as_json: Annotated[bool, typer.Option("--json", help="Print them as a JSON list.")] = False,
    options: RunOptions = NO_RUN_OPTIONS,
) -> None:
    """List the tools 'ask' and 'eval' would give the model with these options and the config
    file: Wikipedia's Search and Lookup (unless --no-wiki), those of --tools-from files, of
    installed packages (entry point group react_cli.tools) and of MCP servers (--mcp and the
    config file's [mcp] table: each is started, asked for its tools, and stopped), and Finish.

    Exit codes: 0 listed; 2 a file that does not load, a server that does not start or answer,
    another usage error.
    """
    from react_cli.display.terminal import plain
    from react_cli.loop.text.protocol import written
    from react_cli.settings.resolve import resolve
    from react_cli.tools.toolbox import open_toolbox

    settings = resolve(options.flags())
    with open_toolbox(settings) as toolbox:
        specs = toolbox.specs()
    if as_json:
        print_json(
            [
                {
                    **spec.to_json(),
                    "function": spec.function_name,
                    "schema": spec.schema,
                    "origin": None if spec.origin is None else spec.origin.to_json(),
                }
                for spec in specs
            ],
            indent=2,
        )
        return
    rows = [
        (
            plain(written(spec)),
            plain(spec.origin.short() if spec.origin else "registered"),
            " ".join(plain(spec.description).split()),
        )
        for spec in specs
    ]
    width = max(len(name) for name, _, _ in rows)
    origin_width = max(len(origin) for _, origin, _ in rows)
    for name, origin, description in rows:
        print(f"{name:<{width}}  {origin:<{origin_width}}  {description}")
    servers = {s.origin.server: s.origin for s in specs if s.origin and s.origin.server}
    for server, reached in servers.items():  # how each server was reached, once
        print(f"\nMCP server {plain(server or '')}: {plain(reached.reached())}")
