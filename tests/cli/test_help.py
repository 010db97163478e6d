"""Help you can scan, on every command, found by walking the typer application (a command
added later is checked without being named here): each option in a panel of the vocabulary
(``cli.help.Panel``), none in no panel; a group's commands before its options; the panels in
the vocabulary's order; examples at the end that fit a terminal of 80 columns. Whether the
examples' flags exist and their questions are quoted is ``tests/test_docs.py``'s."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
import typer
from inproc import Runner, build_command

from react_cli.cli import app
from react_cli.cli.help import COMMANDS_HEADING, EXAMPLES_HEADING, UNGROUPED, Panel, panel_of

HEADING = re.compile(r"^(\S[^:\n]*):$", re.MULTILINE)
"""A section's heading: a line at the margin ending in a colon (help text is indented)."""


def walk(command: Any, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every command under ``command`` (itself first), by its words after ``react-cli``."""
    yield path, command
    for name, sub in getattr(command, "commands", {}).items():
        yield from walk(sub, (*path, name))


COMMANDS = dict(walk(build_command(app), ()))  # not the runs' own: the walk makes contexts


def test_the_walk_finds_every_command() -> None:
    """The walk reaches the nested commands (a walk that found none would check nothing)."""
    assert {("ask",), ("chat",), ("eval", "compare"), ("wiki", "build-zim"), ()} <= set(COMMANDS)
    assert len(COMMANDS) >= 20


def test_every_option_is_in_a_panel_of_the_vocabulary() -> None:
    ungrouped = [
        f"react-cli {' '.join(path)}: {'/'.join(param.opts)}"
        for path, command in COMMANDS.items()
        for param in command.get_params(typer.Context(command, **command.context_settings))
        if param.param_type_name == "option" and panel_of(param) is None
    ]
    assert sum(len(command.params) for command in COMMANDS.values()) > 100
    assert not ungrouped, "options in no panel (give each rich_help_panel=Panel.X):\n" + "\n".join(
        ungrouped
    )


def headings(text: str) -> list[str]:
    return HEADING.findall(text.split(f"\n{EXAMPLES_HEADING}:\n")[0]) + [EXAMPLES_HEADING] * (
        f"\n{EXAMPLES_HEADING}:\n" in text
    )


@pytest.mark.parametrize("path", sorted(COMMANDS), ids=lambda path: " ".join(path) or "root")
def test_help_shows_commands_then_panels_then_examples(cli: Runner, path: tuple[str, ...]) -> None:
    result = cli([*path, "-h"], COLUMNS="80")
    assert result.code == 0, result.stderr
    shown = headings(result.stdout)
    assert UNGROUPED not in shown, result.stdout
    assert shown[-1] == EXAMPLES_HEADING, f"react-cli {' '.join(path)} -h ends with no examples"
    panels = [name for name in shown if name in {panel.value for panel in Panel}]
    assert panels == sorted(panels, key=[panel.value for panel in Panel].index), shown
    assert panels[-1] == Panel.GENERAL.value  # -h at least
    if isinstance(COMMANDS[path], typer.core.TyperGroup):
        assert shown.index(COMMANDS_HEADING) < shown.index(panels[0]), shown
    lines = result.stdout.split(f"\n{EXAMPLES_HEADING}:\n")[1].splitlines()
    commands = [line for line in lines if line.startswith("  $ ")]
    takes = [param for param in COMMANDS[path].params if param.name != "version"]
    assert (2 if takes else 1) <= len(commands) <= 4, lines
    assert all(len(line) <= 80 for line in lines), [line for line in lines if len(line) > 80]
    used = re.compile(rf"\breact-cli {' '.join(part for part in path if part != 'run')}\b")
    assert any(used.search(line) for line in commands), f"no example runs react-cli {path}"


def test_panels_keep_one_column_and_fit_the_width(cli: Runner) -> None:
    """The options' help starts in one column across panels, and no line passes the width
    (80 columns; 100 at most on a wider terminal), but for an example or the environment."""
    for columns, widest in (("80", 78), ("200", 98)):
        text = cli(["eval", "-h"], COLUMNS=columns).stdout
        body = text.split(f"\n{EXAMPLES_HEADING}:\n")[0]
        assert max(map(len, body.splitlines())) <= widest
        rows = (re.match(r"(  -\S.*?\s{2,})\S", line) for line in body.splitlines())
        column = {len(row[1]) for row in rows if row}
        assert len(column) == 1, (columns, column)
