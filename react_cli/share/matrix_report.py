"""``eval report DIR`` of a matrix: its table and its significance matrices as one
self-contained HTML page (no chart, so no matplotlib); each cell's own report is ``eval report
DIR@N``."""

from __future__ import annotations

from react_cli.share.evaldir import metric_label
from react_cli.share.failures import failures_html
from react_cli.share.matrix_show import ALPHA, NONE, MatrixShown, PairTest, p_text
from react_cli.share.page import Html, el, page
from react_cli.share.stats import BOOTSTRAP_RESAMPLES
from react_cli.share.text import one_line


def matrix_report(shown: MatrixShown) -> str:
    """The report page of a matrix."""
    graded = metric_label(shown.kind.metrics[-1])
    first = metric_label(shown.kind.metrics[0])
    pairs = len(shown.exact)
    body = [
        el("h1", "Matrix report"),
        el("p", one_line(str(shown.path)), class_="question"),
        el("p", f"status: {shown.record.status.value}", class_="muted"),
        el("h2", "Cells"),
        el("div", _table(shown), class_="scroll"),
        el("p", "* best of its column", class_="muted"),
        *failures_html(shown.failure_sides()),
    ]
    if pairs:
        body += [
            el("h2", f"{first}: exact McNemar test, Holm over {pairs} pairs"),
            el("div", _significance(shown, shown.exact), class_="scroll"),
            el(
                "h2",
                f"{graded}: paired bootstrap ({BOOTSTRAP_RESAMPLES:,} resamples, seed "
                f"{shown.seed}), Holm over {pairs} pairs",
            ),
            el("div", _significance(shown, shown.bootstrap), class_="scroll"),
            el(
                "p",
                f"Holm-adjusted p-values, row against column; ▲/▼ the row's cell scores "
                f"higher/lower (p < {ALPHA}); cells paired on the questions both answered.",
                class_="muted",
            ),
        ]
    return page(f"Matrix report: {one_line(shown.path.name)}", el("main", *body))


def _table(shown: MatrixShown) -> Html:
    headers = ["#", "model", "method", "protocol", "n", *(c.header for c in shown.columns)]
    head = el(
        "tr",
        *(el("th", h, class_="num" if i in (0, 4) or i > 4 else "") for i, h in enumerate(headers)),
    )
    bests = [shown.best(column) for column in shown.columns]
    rows = []
    for cell in shown.cells:
        n = NONE if cell.folder is None else f"{cell.folder.summary.figures.n:,}"
        values = []
        for column, best in zip(shown.columns, bests, strict=True):
            value = column.value(cell)
            text = NONE if value is None else column.form(value)
            marked = cell.number in best
            classes = "num good" if marked else "num"
            values.append(el("td", text + (" *" if marked else ""), class_=classes))
        rows.append(
            el(
                "tr",
                el("td", str(cell.number), class_="num"),
                el("td", one_line(cell.cell.model)),
                el("td", str(cell.cell.method)),
                el("td", str(cell.cell.protocol)),
                el("td", n, class_="num"),
                *values,
            )
        )
    return el("table", el("thead", head), el("tbody", *rows))


def _significance(shown: MatrixShown, tests: tuple[PairTest, ...]) -> Html:
    numbers = [cell.number for cell in shown.cells]
    by_pair = {(t.a, t.b): t for t in tests}
    head = el("tr", el("th", ""), *(el("th", f"#{n}", class_="num") for n in numbers))
    rows = []
    for row in numbers:
        entries = []
        for column in numbers:
            test = by_pair.get((row, column)) or by_pair.get((column, row))
            if row == column or test is None:
                entries.append(el("td", "—" if row == column else "n/a", class_="num"))
                continue
            better = test.better
            mark = "" if better is None else (" ▲" if better == row else " ▼")
            tone = None if better is None else ("good" if better == row else "bad")
            classes = "num" if tone is None else f"num {tone}"
            entries.append(el("td", p_text(test.p_holm) + mark, class_=classes))
        rows.append(el("tr", el("th", f"#{row}"), *entries))
    return el("table", el("thead", head), el("tbody", *rows))
