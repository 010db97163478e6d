"""A matrix eval read for showing: every cell's figures in one table (the best of each column
marked), and every pair of cells tested on the questions they share, Holm-corrected.

Each cell is read as the eval folder it is (``evaldir.load_eval``, untrusted); the matrix's
``matrix.json`` only says which cells there are. Every pair of cells is tested twice: an exact
McNemar test on EM (FEVER: accuracy) and a paired bootstrap on F1 (FEVER: accuracy), each over
the questions both answered; each family of tests (all pairs of one test) is corrected by
Holm's step-down method, so "significant" holds for the whole table at α, not pair by pair.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from statistics import fmean
from typing import Any

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from react_cli.display.terminal import format_seconds, shell_word
from react_cli.eval.files import SUMMARY
from react_cli.eval.matrix.record import Cell, MatrixRecord, read_matrix
from react_cli.eval.summary import ScoreKind
from react_cli.share.evaldir import EvalFolder, ShownRow, load_eval, metric_label
from react_cli.share.failures import counts_json, failure_table
from react_cli.share.stats import BOOTSTRAP_RESAMPLES, bootstrap_p, holm, mcnemar_exact
from react_cli.share.text import one_line

ALPHA = 0.05
DEFAULT_SEED = 0
NONE = "—"


@dataclass(frozen=True)
class ShownCell:
    """A cell as shown: its number (1, 2, …: how tables and ``DIR@N`` name it), what it
    crosses, and its eval folder (None: the cell has not started)."""

    number: int
    cell: Cell
    folder: EvalFolder | None
    calls: float | None  # model calls per question, where known

    @property
    def label(self) -> str:
        return one_line(self.cell.label)


@dataclass(frozen=True)
class Column:
    """A column of the matrix table: its header, its ``--json`` key, a cell's value (None:
    none), how it is written, and whether more (``1``) or less (``-1``) is better (0: no best
    marked)."""

    header: str
    key: str
    value: Callable[[ShownCell], float | None]
    form: Callable[[float], str]
    better: int = 0


@dataclass(frozen=True)
class PairTest:
    """One pair of cells tested on the questions both answered: B − A's mean difference, the
    p-value and its Holm-adjusted value within its family."""

    a: int  # cell numbers
    b: int
    n: int
    difference: float
    p: float
    p_holm: float

    @property
    def better(self) -> int | None:
        """The cell that scores significantly higher (adjusted p < α), or None."""
        if self.p_holm >= ALPHA or self.difference == 0:
            return None
        return self.b if self.difference > 0 else self.a

    def to_json(self) -> dict[str, Any]:
        return {
            "a": self.a,
            "b": self.b,
            "n": self.n,
            "difference": self.difference,
            "p": self.p,
            "p_holm": self.p_holm,
            "significant": self.better is not None,
            "better": self.better,
        }


@dataclass(frozen=True)
class MatrixShown:
    """A whole matrix as shown."""

    path: Path
    record: MatrixRecord
    kind: ScoreKind
    cells: tuple[ShownCell, ...]
    columns: tuple[Column, ...]
    exact: tuple[PairTest, ...]  # McNemar on EM (FEVER: accuracy)
    bootstrap: tuple[PairTest, ...]  # paired bootstrap on F1 (FEVER: accuracy)
    seed: int
    tested: bool = True  # False: the pairs were left untested (the end of ``eval``)

    def failure_sides(self) -> list[tuple[str, tuple[ShownRow, ...]]]:
        """Each started cell's rows, named as the table numbers it: the failure-mode table's
        columns (counts per mode do not fit one column of the cells' table)."""
        return [(f"#{c.number}", c.folder.rows) for c in self.cells if c.folder is not None]

    def best(self, column: Column) -> set[int]:
        """The numbers of the cells with the best value of ``column`` (ties all)."""
        values = {c.number: column.value(c) for c in self.cells}
        known = {n: v for n, v in values.items() if v is not None}
        if not column.better or len(set(known.values())) < 2:
            return set()  # no column or all alike: nothing to point out
        top = max(known.values()) if column.better > 0 else min(known.values())
        return {n for n, v in known.items() if v == top}


def load_matrix(path: Path, *, seed: int = DEFAULT_SEED, tested: bool = True) -> MatrixShown:
    """The matrix in ``path``, its cells read and (``tested``) every pair tested; UsageError
    when it is no matrix. The bootstrap is most of the time (10,000 resamples of every pair's
    questions), so the end of ``eval`` leaves it to ``eval show``."""
    record = read_matrix(path)
    cells = tuple(_shown(number, cell, path) for number, cell in enumerate(record.cells, 1))
    kinds = {c.folder.kind for c in cells if c.folder is not None}
    kind = kinds.pop() if len(kinds) == 1 else ScoreKind.EM_F1
    exact, boot = _tests(cells, kind, seed) if tested else ((), ())
    columns = _columns(cells, kind)
    return MatrixShown(path, record, kind, cells, columns, exact, boot, seed, tested)


def _shown(number: int, cell: Cell, matrix: Path) -> ShownCell:
    where = cell.folder(matrix)
    if not (where / SUMMARY).is_file():  # not started (or stopped before its summary)
        return ShownCell(number, cell, None, None)
    folder = load_eval(where)
    calls = [row.model_calls() for row in folder.rows]
    known = [float(c) for c in calls if c is not None]
    return ShownCell(number, cell, folder, fmean(known) if known else None)


def _figure(name: str) -> Callable[[ShownCell], float | None]:
    def value(cell: ShownCell) -> float | None:
        if cell.folder is None:
            return None
        figures = cell.folder.summary.figures
        if name == "page_recall":
            return None if figures.evidence is None else figures.evidence.page_recall
        found = getattr(figures, name)
        return None if found is None else float(found)

    return value


def _calls(cell: ShownCell) -> float | None:
    return cell.calls


def _columns(cells: tuple[ShownCell, ...], kind: ScoreKind) -> tuple[Column, ...]:
    """The table's columns: the scores, evidence recall (where a cell has it), failures,
    tokens, cost (where priced), latency and calls, each per question but the totals."""
    scores = [
        Column(metric_label(m), m, _figure("em" if m != "f1" else "f1"), "{:.4f}".format, 1)
        for m in kind.metrics
    ]
    columns = [
        *scores,
        Column("page recall", "page_recall", _figure("page_recall"), "{:.4f}".format, 1),
        Column("failed", "failed", _figure("failed"), "{:,.0f}".format, -1),
        Column("tokens / q", "avg_tokens", _figure("avg_tokens"), "{:,.0f}".format, -1),
        Column("cost", "total_cost", _figure("total_cost"), "{:,.4f}".format, -1),
        Column("latency / q", "avg_latency_s", _figure("avg_latency_s"), format_seconds, -1),
        Column("calls / q", "avg_calls", _calls, "{:,.2f}".format, -1),
    ]
    optional = {"page_recall", "total_cost"}
    return tuple(
        c
        for c in columns
        if c.key not in optional or any(c.value(cell) is not None for cell in cells)
    )


def _tests(
    cells: tuple[ShownCell, ...], kind: ScoreKind, seed: int
) -> tuple[tuple[PairTest, ...], tuple[PairTest, ...]]:
    """Every pair of started cells that share a question, tested both ways, each family
    Holm-corrected."""
    graded = kind.metrics[-1]
    raw: list[tuple[int, int, int, float, float, float, float]] = []
    started = [c for c in cells if c.folder is not None]
    for x, y in combinations(started, 2):
        assert x.folder is not None and y.folder is not None
        rows_y = {row.key: row for row in y.folder.rows}
        pairs = [(row, rows_y[row.key]) for row in x.folder.rows if row.key in rows_y]
        if not pairs:
            continue
        right_wrong = sum(a.correct and not b.correct for a, b in pairs)
        wrong_right = sum(b.correct and not a.correct for a, b in pairs)
        em = fmean(b.em - a.em for a, b in pairs)
        scores = [(b.f1 - a.f1) if graded == "f1" else (b.em - a.em) for a, b in pairs]
        p_exact = mcnemar_exact(right_wrong, wrong_right)
        p_boot = bootstrap_p(scores, seed=seed)
        raw.append((x.number, y.number, len(pairs), em, fmean(scores), p_exact, p_boot))
    exact_holm = holm([r[5] for r in raw])
    boot_holm = holm([r[6] for r in raw])
    exact = tuple(
        PairTest(a, b, n, em, p, adj)
        for (a, b, n, em, _, p, _), adj in zip(raw, exact_holm, strict=True)
    )
    boot = tuple(
        PairTest(a, b, n, diff, p, adj)
        for (a, b, n, _, diff, _, p), adj in zip(raw, boot_holm, strict=True)
    )
    return exact, boot


def _cell_text(cell: ShownCell, column: Column, best: set[int]) -> str:
    value = column.value(cell)
    if value is None:
        return NONE
    return column.form(value) + (" *" if cell.number in best else "")


def matrix_table(shown: MatrixShown) -> Table:
    """Every cell in one table, the best of each column marked ``*``."""
    folder = one_line(str(shown.path))
    table = Table(title=f"matrix {folder} ({shown.record.status.value})", title_justify="left")
    for header in ("#", "model", "method", "protocol", "n"):
        table.add_column(header, justify="right" if header in "#n" else "left", overflow="fold")
    for column in shown.columns:
        table.add_column(column.header, justify="right", overflow="fold")
    bests = [shown.best(column) for column in shown.columns]
    for cell in shown.cells:
        n = NONE if cell.folder is None else f"{cell.folder.summary.figures.n:,}"
        texts = [
            str(cell.number),
            one_line(cell.cell.model),
            str(cell.cell.method),
            str(cell.cell.protocol),
            n,
            *(
                _cell_text(cell, column, best)
                for column, best in zip(shown.columns, bests, strict=True)
            ),
        ]
        table.add_row(*(Text(text) for text in texts))
    return table


def significance_table(shown: MatrixShown, tests: tuple[PairTest, ...], title: str) -> Table:
    """Holm-adjusted p-values of every pair, row against column: ``▲`` the row's cell scores
    significantly higher, ``▼`` lower."""
    numbers = [cell.number for cell in shown.cells]
    by_pair = {(t.a, t.b): t for t in tests}
    table = Table(title=title, title_justify="left")
    table.add_column("", justify="right")
    for number in numbers:
        table.add_column(f"#{number}", justify="right")
    for row in numbers:
        texts = []
        for column in numbers:
            test = by_pair.get((row, column)) or by_pair.get((column, row))
            texts.append("—" if row == column else _entry(test, row))
        table.add_row(f"#{row}", *texts)
    return table


def _entry(test: PairTest | None, row: int) -> str:
    if test is None:
        return "n/a"
    mark = "" if test.better is None else (" ▲" if test.better == row else " ▼")
    return p_text(test.p_holm) + mark


def p_text(p: float) -> str:
    """A p-value as shown: three figures, or below the bootstrap's resolution."""
    return f"<{1 / BOOTSTRAP_RESAMPLES:g}" if p == 0 else f"{p:.3g}"


def matrix_view(shown: MatrixShown) -> list[RenderableType]:
    """The table, the two significance matrices and what they mean."""
    graded = metric_label(shown.kind.metrics[-1])
    first = metric_label(shown.kind.metrics[0])
    pairs = len(shown.exact)
    parts: list[RenderableType] = [matrix_table(shown)]
    if any(rows for _, rows in shown.failure_sides()):
        parts.append(failure_table(shown.failure_sides()))
    if pairs:
        parts += [
            significance_table(shown, shown.exact, f"{first}: exact McNemar, Holm over {pairs}"),
            significance_table(
                shown,
                shown.bootstrap,
                f"{graded}: paired bootstrap ({BOOTSTRAP_RESAMPLES:,} resamples, seed "
                f"{shown.seed}), Holm over {pairs}",
            ),
            Text(
                f"* best of its column; ▲/▼ the row's cell scores higher/lower than the "
                f"column's (Holm-adjusted p < {ALPHA}); cells paired on the questions both "
                "answered"
            ),
        ]
    if not shown.tested:
        shown_path = shell_word(str(shown.path))
        parts.append(
            Text(f"* best of its column; every pair tested: react-cli eval show {shown_path}")
        )
    skipped = sum(c.folder.skipped for c in shown.cells if c.folder is not None)
    if skipped:
        parts.append(Text(f"{skipped} line(s) of the cells' results.jsonl skipped"))
    return parts


def matrix_json(shown: MatrixShown) -> dict[str, Any]:
    """``eval show DIR --json`` of a matrix."""
    record = shown.record
    cells = []
    for cell in shown.cells:
        figures = {column.key: column.value(cell) for column in shown.columns}
        n = None if cell.folder is None else cell.folder.summary.figures.n
        status = None if cell.folder is None else cell.folder.summary.status.value
        shown_cell = {"number": cell.number, **cell.cell.to_json(), "status": status, "n": n}
        modes = None if cell.folder is None else counts_json(cell.folder.rows)
        cells.append({**shown_cell, **figures, "failure_modes": modes})
    test = {"alpha": ALPHA, "correction": "holm"}
    return {
        "path": str(shown.path),
        "kind": "matrix",
        "status": record.status.value,
        "dataset": record.dataset,
        "axes": record.axes.to_json(),
        "cells": cells,
        "best": {c.key: sorted(shown.best(c)) for c in shown.columns if c.better},
        "tests": None
        if not shown.tested
        else {
            "mcnemar_exact": {
                **test,
                "of": shown.kind.metrics[0],
                "pairs": [t.to_json() for t in shown.exact],
            },
            "paired_bootstrap": {
                **test,
                "of": shown.kind.metrics[-1],
                "resamples": BOOTSTRAP_RESAMPLES,
                "seed": shown.seed,
                "pairs": [t.to_json() for t in shown.bootstrap],
            },
        },
    }
