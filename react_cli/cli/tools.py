"""``react-cli tools``: the tools a run would have, with where each comes from; ``tools call``
calls one of them, as ``wiki search`` calls Search."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from react_cli.cli.app import print_json
from react_cli.cli.help import Commands, Panel, examples
from react_cli.cli.run_options import NO_RUN_OPTIONS, RunOptions, with_options

if TYPE_CHECKING:
    from react_cli.tools.base import Tool, ToolSet, ToolSpec
    from react_cli.tools.consent import ToolRules

tools_app = Commands(
    short_help="List the tools a run would have: name, origin, description; or call one.",
    epilog=examples(
        "react-cli tools",
        "react-cli tools --tools-from examples/tools/calculator.py",
        "react-cli tools --mcp 'npx -y @modelcontextprotocol/server-everything'",
        "react-cli tools call --tools-from calculator.py Calculate '6 * 7'",
    ),
)


@tools_app.callback(invoke_without_command=True)
@with_options(RunOptions)
def tools(
    ctx: typer.Context,
    as_json: Annotated[
        bool,
        typer.Option("--json", help="Print them as a JSON list.", rich_help_panel=Panel.OUTPUT),
    ] = False,
    options: RunOptions = NO_RUN_OPTIONS,
) -> None:
    """List the tools 'ask' and 'eval' would give the model with these options and the config
    file ('tools call NAME ARGS_JSON' calls one): Wikipedia's Search and Lookup (unless
    --no-wiki), those of --tools-from files, of installed packages (entry point group
    react_cli.tools) and of MCP servers (--mcp and the config file's [mcp] table: each is
    started, asked for its tools, and stopped), and Finish.

    The third column says each tool's consent: 'no consent' (it runs freely), 'needs consent'
    (asked on a terminal, refused elsewhere), 'allowed (PATTERN)' by --allow-tool or [tools]
    allow, 'denied (PATTERN)' by --deny-tool or [tools] deny (no run has it).

    Exit codes: 0 listed; 2 a file that does not load, a server that does not start or answer,
    another usage error; 130 interrupted (Ctrl-C), 143 by SIGTERM, 129 by SIGHUP.
    """
    if ctx.invoked_subcommand is not None:
        return
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


@tools_app.command(
    "call",
    short_help="Call one tool and print its result, as the model would be shown it.",
    epilog=examples(
        "react-cli tools call --tools-from calculator.py Calculate '6 * 7'",
        'react-cli tools call --mcp \'python notes.py\' concat \'{"a": "x", "b": "y"}\'',
        "react-cli tools call Search 'Ed Wood'",
    ),
)
@with_options(RunOptions)
def tools_call(
    name: Annotated[
        str, typer.Argument(metavar="NAME", help="The tool, as 'react-cli tools' lists it.")
    ],
    arguments: Annotated[
        str,
        typer.Argument(
            metavar="ARGS_JSON",
            help="Its arguments as a JSON object (a tool of one text argument also takes the "
            "text itself).",
        ),
    ],
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="Print the result as JSON: observation, error, details, refused.",
            rich_help_panel=Panel.OUTPUT,
        ),
    ] = False,
    options: RunOptions = NO_RUN_OPTIONS,
) -> None:
    """Call one tool with ARGS_JSON and print its result, exactly as the model would be shown
    it (lines kept, cut at its limit with a note), with the same tools 'ask' would have:
    --tools-from files, installed packages, MCP servers (started, called, stopped), Search
    and Lookup (unless --no-wiki). A tool that needs consent asks on a terminal, as in a run.

    Exit codes: 0 the tool answered; 1 it failed or was refused (its observation on stderr);
    2 no such tool, arguments that do not fit it, a file that does not load, a server that
    does not start; 130 interrupted (Ctrl-C), 143 by SIGTERM, 129 by SIGHUP.
    """
    from react_cli.cli.consent import terminal_question
    from react_cli.cli.notices import told
    from react_cli.core.errors import NoAnswerError
    from react_cli.display.terminal import plain
    from react_cli.infra.deadline import Deadline
    from react_cli.session import Uses, open_session
    from react_cli.settings.resolve import resolve

    settings = resolve(options.flags())
    question = terminal_question(settings, None)
    with open_session(
        settings, uses=Uses.TOOLS, told=told(False, hint=False), question=question
    ) as opened:
        tool = _named_tool(opened.tools(), name)
        argument = _argument(tool.spec, arguments)
        result = tool.call(argument, deadline=Deadline.after(settings.run_timeout_s))
    failed = result.error is not None or result.refused is not None
    if as_json:
        print_json(
            {
                "tool": tool.spec.name,
                "observation": result.observation,
                "error": result.error,
                "details": result.details,
                "refused": None if result.refused is None else str(result.refused),
            },
            indent=2,
        )
    elif not failed:
        print(plain(result.observation))
    if failed:
        raise NoAnswerError(" ".join(plain(result.observation).split()))


def _named_tool(tools: ToolSet, name: str) -> Tool:
    """The tool ``name`` calls (its name or its function name, any case); UsageError naming
    the tools there are."""
    from react_cli.core.errors import UsageError
    from react_cli.core.wording import did_you_mean, quoted

    found = tools.get(name) or next(
        (t for t in tools if t.spec.function_name.casefold() == name.casefold()), None
    )
    if found is None:
        names = [t.spec.name for t in tools]
        listed = ", ".join(names) or "none"
        raise UsageError(
            f"no tool named {did_you_mean(name, names) if names else quoted(name)} "
            f"(tools: {listed}; Finish is no tool to call)"
        )
    return found


def _argument(spec: ToolSpec, given: str) -> str:
    """The argument a call of ``spec`` with ``given`` runs with: a JSON object's (checked
    against its schema), or, for a tool of one text argument, the text itself when it is no
    JSON object; UsageError saying how to call it."""
    from react_cli.core.errors import UsageError
    from react_cli.infra.untrusted import BadInput, parse_json
    from react_cli.tools.schema import ArgumentError

    try:
        value = parse_json(given)
    except BadInput:
        value = None
    if not isinstance(value, dict):
        if spec.parameters is None:
            return given
        raise UsageError(f"{spec.name} takes its arguments as a JSON object, not {given!r:.60}")
    try:
        return spec.argument_from(value)
    except ArgumentError as exc:
        raise UsageError(str(exc)) from None
