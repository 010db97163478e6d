"""Help you can scan: every command's options in panels of one vocabulary, a group's commands
before its options, and examples at the end, as ``gh`` shows them.

The help is click's plain formatter (``rich_markup_mode=None``), so ``--help`` imports no
rich: typer's ``rich_help_panel`` only says which panel an option is in, and
:class:`PanelCommand` and :class:`PanelGroup` lay the panels out. An option goes in a panel
by naming it, ``typer.Option(..., rich_help_panel=Panel.LIMITS)``; the panels show in the
order :class:`Panel` lists them, whatever order a command declares its options in.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperCommand, TyperGroup

from react_cli.core.records import StrEnum

if TYPE_CHECKING:
    from typer._click import Command, Context, HelpFormatter, Parameter

Rows = list[tuple[str, str]]

HELP_OPTIONS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
COMMANDS_HEADING = "Commands"
EXAMPLES_HEADING = "Examples"
UNGROUPED = "Options"
"""The heading of options in no panel: none should be (the help tests check every command)."""
TYPERS_OWN = frozenset({"help", "install_completion", "show_completion"})
"""Options click and typer add themselves, in the General panel."""
OPTION_COLUMN = 24  # the widest first column; a longer option has its help on the next line


class Panel(StrEnum):
    """The panels options are grouped in, in the order a command's help shows them."""

    MODEL = "Model and endpoint"
    METHOD = "Method and prompt"
    DATASET = "Dataset"
    WIKIPEDIA = "Wikipedia"
    TOOLS = "Tools and MCP"
    LIMITS = "Limits and budgets"
    SPEED = "Speed and cache"
    CONVERSATION = "Conversation"
    REPLAY = "Replay and fork"
    OUTPUT = "Output and traces"
    DEBUGGING = "Debugging"
    GENERAL = "General"


def examples(*lines: str) -> str:
    """An epilog of examples: each line a command as typed (shown after ``$``), the rest of a
    command ending in ``\\`` (indented), or a ``# comment`` saying what the next one does."""
    shown = [line if line[:1] in ("#", " ") else f"$ {line}" for line in lines]
    return f"{EXAMPLES_HEADING}:\n" + "\n".join(f"  {line}" for line in shown)


def panel_of(param: Parameter) -> Panel | None:
    """The panel an option is shown in (None: it names none)."""
    named = getattr(param, "rich_help_panel", None)
    if named is not None:
        return Panel(named)
    return Panel.GENERAL if param.name in TYPERS_OWN else None


def param_sections(command: Command, ctx: Context) -> list[tuple[str, Rows]]:
    """A command's arguments, then its options panel by panel, each under its heading."""
    arguments: Rows = []
    panels: dict[str, Rows] = {}
    for param in command.get_params(ctx):
        record = param.get_help_record(ctx)
        if record is None:
            continue
        if param.param_type_name == "argument":
            arguments.append(record)
        else:
            panel = panel_of(param)
            panels.setdefault(UNGROUPED if panel is None else panel.value, []).append(record)
    order = [UNGROUPED, *(panel.value for panel in Panel)]
    sections = [("Arguments", arguments)] if arguments else []
    return sections + [(name, panels[name]) for name in order if name in panels]


def write_sections(sections: list[tuple[str, Rows]], out: HelpFormatter) -> None:
    """Definition lists under their headings, the second column aligned across all of them."""
    terms = [term for _, rows in sections for term, _ in rows]
    width = min(max(map(len, terms), default=0), OPTION_COLUMN)
    for heading, rows in sections:
        with out.section(heading):
            out.write_dl([(term.ljust(width), text) for term, text in rows], OPTION_COLUMN)


def format_epilog(epilog: str | None, out: HelpFormatter) -> None:
    """The epilog as written (its headings at the margin, its lines never re-wrapped): a
    command line wrapped by the formatter could no longer be pasted."""
    if epilog:
        for block in epilog.strip("\n").split("\n\n"):
            out.write_paragraph()
            out.write("".join(f"{line}\n" for line in block.splitlines()))


def command_rows(group: TyperGroup, ctx: Context, width: int) -> Rows:
    """A group's commands, each with its short help, in the order they were added."""
    rows = []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is not None and not command.hidden:
            rows.append((name, command.get_short_help_str(width - 6 - len(name))))
    return rows


class PanelCommand(TyperCommand):
    """A command whose help shows its options in panels and ends with its examples."""

    def format_options(self, ctx: Context, formatter: HelpFormatter) -> None:
        write_sections(param_sections(self, ctx), formatter)

    def format_epilog(self, ctx: Context, formatter: HelpFormatter) -> None:
        format_epilog(self.epilog, formatter)


class PanelGroup(TyperGroup):
    """A group whose help lists its commands first, then its own options in panels."""

    def format_options(self, ctx: Context, formatter: HelpFormatter) -> None:
        write_sections([(COMMANDS_HEADING, command_rows(self, ctx, formatter.width))], formatter)
        write_sections(param_sections(self, ctx), formatter)

    def format_epilog(self, ctx: Context, formatter: HelpFormatter) -> None:
        format_epilog(self.epilog, formatter)


class Commands(typer.Typer):
    """A typer application whose commands and groups show help by panels (plain text)."""

    def __init__(self, *, cls: type[TyperGroup] = PanelGroup, **settings: Any) -> None:
        super().__init__(cls=cls, rich_markup_mode=None, context_settings=HELP_OPTIONS, **settings)

    def command(  # type: ignore[override]  # the same parameters, PanelCommand by default
        self, name: str | None = None, *, cls: type[TyperCommand] = PanelCommand, **settings: Any
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        return super().command(name, cls=cls, **settings)
