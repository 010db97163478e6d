"""``eval report DIR``: an eval folder as one self-contained HTML page.

Summary, run settings, the charts (SVG images as ``data:`` URIs), and a table of every question
that filters to wrong or unanswered rows and sorts by any column. Each question links to its
trajectory, embedded further down and shown by ``:target`` (no script needed to read it).
"""

from __future__ import annotations

from pathlib import Path

from react_cli.display.terminal import format_seconds
from react_cli.eval.summary import ScoreKind
from react_cli.eval.view import estimated, evidence_rows, figure_text, table_1, whose_figures
from react_cli.share.charts import Chart, charts, require_matplotlib
from react_cli.share.evaldir import EvalFolder, ShownRow, load_eval, metric_label
from react_cli.share.failures import failures_html, method_rows
from react_cli.share.html import facts, trace_body
from react_cli.share.page import Html, data_uri, el, join, page
from react_cli.share.text import brief
from react_cli.share.view import TraceView

_FILTERS = (("all", "All"), ("wrong", "Wrong"), ("noanswer", "No answer"))


def eval_report(directory: Path) -> str:
    """The report page of an eval folder; UsageError if matplotlib or the folder is missing."""
    require_matplotlib()
    folder = load_eval(directory)
    views = [row.view() for row in folder.rows]
    body = [
        _header(folder),
        *_methods(folder),
        *_failures(folder),
        _charts(charts(folder)),
        _questions(folder),
        *(
            _trajectory(n, row, view)
            for n, (row, view) in enumerate(zip(folder.rows, views, strict=True))
        ),
    ]
    return page(f"Eval report: {folder.label}", el("main", *body))


def _card(name: str, value: str) -> Html:
    return el("div", el("b", value), name, class_="card")


def _header(folder: EvalFolder) -> Html:
    summary, figures = folder.summary, folder.summary.figures
    whose = whose_figures(summary)  # an eval of several methods: its first method's figures
    scores = [
        _card(metric_label(name) + whose, figure_text(figures.score(name), "{:.4f}"))
        for name in folder.kind.metrics
    ]
    evidence = [_card(name, value) for name, value in evidence_rows(figures)]
    cards = [
        *scores,
        *(evidence if figures.evidence is not None else []),
        _card("questions", f"{figures.n:,}"),
        _card("failed", f"{figures.failed:,}"),
        _card("avg steps" + whose, figure_text(figures.avg_steps, "{:.2f}")),
        _card("avg tokens" + whose, estimated(figures, figure_text(figures.avg_tokens, "{:,.0f}"))),
        _card("total tokens" + whose, estimated(figures, f"{figures.total_tokens:,}")),
        _card("avg latency" + whose, figure_text(figures.avg_latency_s, format_seconds)),
        _card("wall time", format_seconds(summary.wall_s)),
    ]
    notes = [el("p", f"status: {summary.status.value}", class_="muted")]
    if folder.skipped:
        notes.append(
            el("p", f"{folder.skipped} unreadable line(s) of results.jsonl skipped", class_="error")
        )
    return join(
        [
            el("h1", "Eval report"),
            el("p", folder.label, class_="question"),
            el("div", *cards, class_="cards"),
            *notes,
            el("h2", "Run settings"),
            facts(list(folder.config_facts())),
        ]
    )


def _methods(folder: EvalFolder) -> list[Html]:
    """The methods as the paper's Table 1, as ``eval show`` prints them."""
    if not folder.summary.methods:
        return []
    title, headers, rows = table_1(folder.summary)
    head = el("tr", *(el("th", h, class_=None if h == "method" else "num") for h in headers))
    body = (
        el("tr", el("td", row[0]), *(el("td", cell, class_="num") for cell in row[1:]))
        for row in rows
    )
    table = el("table", el("caption", title), el("thead", head), el("tbody", *body))
    return [el("h2", "Methods"), el("div", table, class_="scroll")]


def _failures(folder: EvalFolder) -> list[Html]:
    """Why answers failed: each failure mode's count and share, a column per method."""
    return failures_html(method_rows(folder)) if folder.rows else []


def _charts(figures: list[Chart]) -> Html:
    if not figures:
        return join([el("h2", "Charts"), el("p", "No finished questions yet.", class_="muted")])
    items = [  # the image draws its title; the caption says what it shows, in words
        el(
            "figure",
            el("img", src=data_uri("image/svg+xml", chart.svg), alt=f"Chart: {chart.title}"),
            el("figcaption", chart.description, class_="muted"),
        )
        for chart in figures
    ]
    return join([el("h2", "Charts"), el("div", *items, class_="charts")])


def _columns(kind: ScoreKind, evidence: bool) -> list[tuple[str, bool]]:
    """(header, numeric) of the question table (an evidence column where rows have scores)."""
    scores = [
        (metric_label(name) if name != "accuracy" else "right", True) for name in kind.metrics
    ]
    return [
        ("#", True),
        ("question", False),
        ("gold", False),
        ("answer", False),
        *scores,
        ("steps", True),
        ("stop reason", False),
        ("failure mode", False),
        ("tokens", True),
        ("latency", True),
        *([("evidence", True)] if evidence else []),
    ]


def _cell(text: str, key: float | None = None, *, class_: str | None = None) -> Html:
    """A table cell, sorted by ``key`` (a numeric column) or by its text."""
    shown = brief(text)
    if key is None:
        return el("td", shown, data_key=shown, class_=class_)
    return el("td", shown, data_key=str(key), class_="num")


def _evidence(row: ShownRow) -> Html:
    """A row's page and sentence recall, sorted by its page recall (— without them, first)."""
    evidence = row.evidence
    if evidence is None:
        return _cell("—", -1.0)
    text = f"pages {evidence.page_recall:.2f}"
    if evidence.sentence_recall is not None:
        text += f" · sentences {evidence.sentence_recall:.2f}"
    return _cell(text, evidence.page_recall)


def _row(n: int, row: ShownRow, kind: ScoreKind, evidence: bool) -> Html:
    scores = [_cell(f"{row.em:.0f}", row.em)]
    if kind is ScoreKind.EM_F1:
        scores.append(_cell(f"{row.f1:.2f}", row.f1))
    link = el("a", brief(row.question), href=f"#q{n}")
    cells = [
        _cell(str(row.index), row.index),
        el("td", link, data_key=brief(row.question)),
        _cell(row.gold),
        _cell(row.answer if row.answer is not None else "—", class_=None if row.correct else "bad"),
        *scores,
        _cell(str(row.steps), row.steps),
        _cell(row.outcome),
        _cell(row.mode.label),
        _cell(f"{row.tokens:,}", row.tokens),
        _cell(format_seconds(row.latency_s), row.latency_s),
        *([_evidence(row)] if evidence else []),
    ]
    return el(
        "tr",
        *cells,
        data_wrong="1" if not row.correct else None,
        data_noanswer="1" if row.answer is None else None,
    )


def _questions(folder: EvalFolder) -> Html:
    buttons = [
        el(
            "button",
            label,
            type="button",
            data_filter=name,
            aria_pressed=str(name == "all").lower(),
        )
        for name, label in _FILTERS
    ]
    count = el("span", f"{len(folder.rows)} of {len(folder.rows)} questions", id="shown")
    evidence = any(row.evidence is not None for row in folder.rows)
    headers = [
        el("th", el("button", name, type="button"), class_="num" if numeric else None)
        for name, numeric in _columns(folder.kind, evidence)
    ]
    rows = [_row(n, row, folder.kind, evidence) for n, row in enumerate(folder.rows)]
    table = el("table", el("thead", el("tr", *headers)), el("tbody", *rows), id="questions")
    return join(
        [
            el("h2", "Questions", id="questions-section"),
            el("p", *buttons, " ", count, class_="filters"),
            el("div", table, class_="scroll"),
        ]
    )


def _trajectory(n: int, row: ShownRow, view: TraceView | str) -> Html:
    back = el("p", el("a", "↑ back to the questions", href="#questions-section"))
    title = el("h2", f"Question {row.index}")
    body = (
        trace_body(view, level=3) if isinstance(view, TraceView) else el("p", view, class_="error")
    )
    return el("section", back, title, body, id=f"q{n}", class_="trajectory")
