"""``react-cli tools``: the tools a run would have, with where each comes from."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from react_cli.cli.app import app, print_json
from react_cli.cli.help import Panel, examples
from react_cli.cli.run_options import NO_RUN_OPTIONS, RunOptions, with_options

if TYPE_CHECKING:
    from react_cli.tools.base import ToolSpec
    from react_cli.tools.consent import ToolRules


@app.command(
    short_help="List the tools a run would have: name, origin, description.",
    epilog=examples(
        "react-cli tools",
        "react-cli tools --tools-from examples/tools/calculator.py",
        "react-cli tools --mcp 'npx -y @modelcontextprotocol/server-everything'",
    ),
)
@with_options(RunOptions)
def tools(
    as_json: Annotated[
        bool,
        typer.Option("--json", help="Print them as a JSON list.", rich_help_panel=Panel.OUTPUT),
    ] = False,
    options: RunOptions = NO_RUN_OPTIONS,
) -> None:
    """List the tools 'ask' and 'eval' would give the model with these options and the config
    file: Wikipedia's Search and Lookup (unless --no-wiki), those of --tools-from files, of
    installed packages (entry point group react_cli.tools) and of MCP servers (--mcp and the
    config file's [mcp] table: each is started, asked for its tools, and stopped), and Finish.

    The third column says each tool's consent: 'no consent' (it runs freely), 'needs consent'
    (asked on a terminal, refused elsewhere), 'allowed (PATTERN)' by --allow-tool or [tools]
    allow, 'denied (PATTERN)' by --deny-tool or [tools] deny (no run has it).

    Exit codes: 0 listed; 2 a file that does not load, a server that does not start or answer,
    another usage error; 130 interrupted (Ctrl-C), 143 by SIGTERM, 129 by SIGHUP.
    """
    from react_cli.cli.notices import told
    from react_cli.display.terminal import plain
    from react_cli.loop.text.protocol import written
    from react_cli.session import Uses, open_session
    from react_cli.settings.resolve import resolve

    settings = resolve(options.flags())
    with open_session(settings, uses=Uses.USER_TOOLS, told=told(False, hint=False)) as opened:
        specs, rules = opened.tool_specs(), opened.consent.rules
    if as_json:
        listed = []
        for spec in specs:
            rule = rules.rule(spec)
            listed.append(
                {
                    **spec.to_json(),
                    "function": spec.function_name,
                    "schema": spec.schema,
                    "origin": None if spec.origin is None else spec.origin.to_json(),
                    "needs_consent": spec.needs_consent,
                    "rule": None if rule is None else str(rule.verdict),
                    "pattern": None if rule is None else rule.pattern,
                }
            )
        print_json(listed, indent=2)
        return
    rows = [
        (
            plain(written(spec)),
            plain(spec.origin.short() if spec.origin else "registered"),
            _consent(spec, rules),
            " ".join(plain(spec.description).split()),
        )
        for spec in specs
    ]
    widths = [max(len(row[column]) for row in rows) for column in range(3)]
    for *columns, description in rows:
        padded = [f"{text:<{width}}" for text, width in zip(columns, widths, strict=True)]
        print("  ".join([*padded, description]))
    servers = {s.origin.server: s.origin for s in specs if s.origin and s.origin.server}
    for server, reached in servers.items():  # how each server was reached, once
        print(f"\nMCP server {plain(server or '')}: {plain(reached.reached())}")


def _consent(spec: ToolSpec, rules: ToolRules) -> str:
    """A tool's consent, in a few words (see the command's help)."""
    from react_cli.display.terminal import plain
    from react_cli.tools.consent import Verdict

    rule = rules.rule(spec)
    if rule is not None and (rule.verdict is Verdict.DENY or spec.needs_consent):
        done = "denied" if rule.verdict is Verdict.DENY else "allowed"
        return f"{done} ({plain(rule.pattern)})"
    return "needs consent" if spec.needs_consent else "no consent"
