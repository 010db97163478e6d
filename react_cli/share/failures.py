"""Failure modes as ``eval show``, ``eval report`` and ``eval compare`` show them: a table of
counts and shares per eval, method or matrix cell, and the questions whose mode changed
between two.

The modes themselves are the eval's (``eval.failures``); each row carries its own
(``ShownRow.failure``), recorded or derived when the folder is read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rich.table import Table
from rich.text import Text

from react_cli.eval.failures import FailureMode, mode_counts
from react_cli.share.evaldir import EvalFolder, ShownRow, load_eval
from react_cli.share.page import Html, el
from react_cli.share.text import brief


def method_rows(folder: EvalFolder) -> list[tuple[str, tuple[ShownRow, ...]]]:
    """Each method's rows of an eval of several (the folder's own rows, named by their
    method, when it ran one or a method was chosen)."""
    methods = folder.summary.config.methods
    if folder.method is not None or len(methods) < 2:
        return [(folder.method or methods[0], folder.rows)]
    return [(name, load_eval(folder.path, name).rows) for name in methods]


def counts_of(rows: Sequence[ShownRow]) -> dict[FailureMode, int]:
    """How many rows of each mode (modes of none left out), in the enum's order."""
    return mode_counts(row.mode for row in rows)


def counts_json(rows: Sequence[ShownRow]) -> dict[str, dict[str, float]]:
    """``{"search_failure": {"count": 3, "share": 0.25}, …}`` for ``--json``."""
    total = len(rows) or 1
    return {
        mode.value: {"count": count, "share": round(count / total, 6)}
        for mode, count in counts_of(rows).items()
    }


def failure_table(sides: Sequence[tuple[str, Sequence[ShownRow]]]) -> Table:
    """One column of counts and shares per side (an eval, or A and B of a comparison)."""
    table = Table(title="failure modes", title_justify="left", show_edge=False, box=None)
    headers, rows = shares_rows(sides)
    for n, header in enumerate(headers):
        table.add_column(header, justify="right" if n else "left", overflow="fold")
    for row in rows:
        table.add_row(*row)
    return table


def shares_rows(
    sides: Sequence[tuple[str, Sequence[ShownRow]]],
) -> tuple[list[str], list[list[str]]]:
    """The failure-mode table as text cells: its headers and rows (the report's HTML)."""
    counted = [(counts_of(rows), len(rows)) for _, rows in sides]
    present = [mode for mode in FailureMode if any(counts.get(mode) for counts, _ in counted)]
    rows = [
        [mode.label, *(_cell(counts.get(mode, 0), total) for counts, total in counted)]
        for mode in present
    ]
    return ["mode", *(name for name, _ in sides)], rows


def failures_html(sides: Sequence[tuple[str, Sequence[ShownRow]]]) -> list[Html]:
    """The report's "Failure modes" section: a column of counts and shares per side (nothing
    when no side has a row)."""
    headers, rows = shares_rows(sides)
    if not rows:
        return []
    head = el("tr", *(el("th", h, class_="num" if n else None) for n, h in enumerate(headers)))
    body = (
        el("tr", el("td", row[0]), *(el("td", cell, class_="num") for cell in row[1:]))
        for row in rows
    )
    table = el("table", el("thead", head), el("tbody", *body))
    return [el("h2", "Failure modes"), el("div", table, class_="scroll")]


def _cell(count: int, total: int) -> str:
    return f"{count} ({count / total:.0%})" if total else "0"


@dataclass(frozen=True)
class ModeChange:
    """A question whose failure mode differs between A and B."""

    index: int
    question: str
    a: FailureMode
    b: FailureMode

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "question": self.question, "a": self.a, "b": self.b}


def mode_changes(pairs: Sequence[tuple[ShownRow, ShownRow]]) -> tuple[ModeChange, ...]:
    """The paired questions whose mode changed, in A's order."""
    return tuple(
        ModeChange(x.index, x.question, x.mode, y.mode) for x, y in pairs if x.mode is not y.mode
    )


def changes_table(changes: Sequence[ModeChange]) -> Table | Text:
    """``eval compare --list modes``: every question whose mode changed."""
    if not changes:
        return Text("no question changed its failure mode")
    table = Table(title=f"failure modes changed ({len(changes)})", title_justify="left")
    for header in ("#", "question", "A", "B"):
        table.add_column(header, overflow="fold")
    for change in changes:
        table.add_row(
            str(change.index), Text(brief(change.question)), change.a.label, change.b.label
        )
    return table
