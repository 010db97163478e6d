"""``react-cli prompts``: list and show the prompt templates."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from react_cli.cli.help import Commands, examples

DESCRIPTION_WIDTH = 70  # cut at a word boundary, never mid-word

prompts_app = Commands(
    help="List the prompt templates (no command) or print one ('show NAME').",
    short_help="List the prompt templates, or show one.",
    epilog=examples(
        "react-cli prompts",
        "react-cli prompts show hotpotqa-cot",
        "react-cli ask --prompt my-prompt.txt -m gpt-4o-mini 'Who directed Ed Wood?'",
    ),
)


@prompts_app.callback(invoke_without_command=True)
def prompts_list(ctx: typer.Context) -> None:
    """List the shipped prompt templates: name, method, task, protocol, first line ('prompts
    show NAME' prints one). A prompt file of your own says which method, task and protocol it
    is for in front matter: a first line '---', then 'method: cot', 'task: fever' (and
    'protocol: tools' for native tool calls), then '---'."""
    if ctx.invoked_subcommand is not None:
        return
    from react_cli.display.terminal import plain
    from react_cli.loop.prompts import load_prompt, shipped_names
    from react_cli.tools.wikipedia import cap  # the one word-boundary cut

    for name in shipped_names():
        template = load_prompt(name)
        first = template.text.strip().splitlines()[0] if template.text.strip() else ""
        described = cap(first, DESCRIPTION_WIDTH)
        print(
            f"{name}\t{template.method}\t{template.task}\t{template.protocol}\t{plain(described)}"
        )


@prompts_app.command(
    "show",
    epilog=examples("react-cli prompts show hotpotqa", "react-cli prompts show my-prompt.txt"),
)
def prompts_show(
    name: Annotated[str, typer.Argument(metavar="NAME", help="Prompt name or file.")],
) -> None:
    """Print a prompt template exactly as it is sent (with its {question} marker, without the
    front matter that says its method and task); a file of your own as plain text (without
    the control characters or escape sequences it may hold)."""
    from react_cli.display.terminal import plain
    from react_cli.loop.prompts import load_prompt, shipped_names

    text = load_prompt(name).text
    sys.stdout.write(text if name in shipped_names() else plain(text))
