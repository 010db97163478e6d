"""What ``react-cli eval`` shows on stderr: a progress bar with running scores, then a table
(and, for several methods, the paper's Table 1 with its PaLM-540B figures alongside).

Dataset text never appears here, only numbers and our own words (and, in the table, the
dataset's path, model and prompt names, on one line as plain text).
"""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.progress import Task as ProgressTask
from rich.table import Column, Table
from rich.text import Text

from react_cli.core.method import PAPER_FIGURES, Method, Task
from react_cli.core.records import Cost, RetryWait
from react_cli.core.wording import cost_text
from react_cli.display.terminal import format_seconds, plain
from react_cli.eval.datasets import Format
from react_cli.eval.events import EvalObserver
from react_cli.eval.rows import Row
from react_cli.eval.summary import Figures, ScoreKind, Summary


def score_text(summary: Summary) -> str:
    """``EM 0.420 F1 0.515`` or ``acc 0.610`` (``(Standard) EM ...``: whose, in an eval of
    several methods), plus failures when there are any (it is shown once a question has
    finished)."""
    figures = summary.figures
    if figures.kind is ScoreKind.ACCURACY:
        text = f"acc {figures.em or 0:.3f}"
    else:
        text = f"EM {figures.em or 0:.3f} F1 {figures.f1 or 0:.3f}"
    whose = whose_figures(summary).strip()
    failed = f" · {figures.failed} failed" if figures.failed else ""
    return f"{whose} {text}{failed}" if whose else text + failed


LEVELS_MIN_WIDTH = 80
"""Narrower terminals leave the levels out of the bar: the count and scores come first."""


class _Said(ProgressColumn):
    """A column saying what ``text()`` says now, at every refresh (the levels in use change
    between questions), on terminals wide enough for it (never on a second line)."""

    def __init__(self, text: Callable[[], str], console: Console) -> None:
        super().__init__(table_column=Column(no_wrap=True))
        self._text, self._console = text, console

    def render(self, task: ProgressTask) -> Text:
        shown = self._text() if self._console.width >= LEVELS_MIN_WIDTH else ""
        return Text(shown, style="dim", no_wrap=True)


def progress_columns(label: ProgressColumn) -> list[ProgressColumn]:
    """An eval's progress line: ``label``, the bar, questions done, scores, time and ETA (a
    matrix's display has one a cell)."""
    return [
        label,
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[scores]}"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
    ]


class ProgressView(EvalObserver):
    """A rich progress bar on the console (stderr), with the requests each endpoint gets at
    once (``levels``) when given; the summary table when done."""

    def __init__(self, console: Console, levels: Callable[[], str] | None = None) -> None:
        self.console = console
        columns = progress_columns(TextColumn("eval"))
        if levels is not None:
            columns.append(_Said(levels, console))
        self.progress = Progress(*columns, console=console, transient=False)
        self.task = self.progress.add_task("eval", total=None, scores="")

    def retry_waiting(self, wait: RetryWait) -> None:
        """A ``records.RetryObserver`` (called from worker threads): above the bar, dimmed."""
        self.console.print(Text(plain(str(wait)), style="dim"))

    def note(self, message: str) -> None:
        """What a client learnt of the endpoint (it cuts streams), once, above the bar: no
        failure, dimmed."""
        self.console.print(Text(f"note: {' '.join(plain(message).split())}", style="dim"))

    def started(self, total: int, done: int, summary: Summary) -> None:
        scores = score_text(summary) if summary.figures.n else ""
        self.progress.update(self.task, total=total, completed=done, scores=scores)
        self.progress.start()

    def result(self, row: Row, summary: Summary) -> None:
        self.progress.update(self.task, advance=1, scores=score_text(summary))

    def finished(self, summary: Summary) -> None:
        self.progress.stop()
        self.console.print(summary_table(summary))
        if summary.methods:
            self.console.print(methods_table(summary))


NONE = "—"  # no figure yet: no question has finished


def figure_text(value: float | None, form: str | Callable[[float], str]) -> str:
    """A figure of the summary as ``form`` writes it; a dash when there is none yet."""
    if value is None:
        return NONE
    return form(value) if callable(form) else form.format(value)


def _tokens(figures: Figures) -> str:
    return estimated(figures, figure_text(figures.avg_tokens, "{:,.0f}"))


def estimated(figures: Figures, tokens: str) -> str:
    """A token figure as shown: ``~1,234 (estimated)`` when some of it is an estimate."""
    if figures.tokens_estimated and tokens != NONE:
        return f"~{tokens} (estimated)"
    return tokens


def _line(text: str) -> str:
    """Recorded text (a path, a model name) on one line, as plain text."""
    return " ".join(plain(text).split())


def whose_figures(summary: Summary) -> str:
    """``" (Standard)"``: whose the summary's figures are in an eval with a methods table,
    where they are its first method's (every row's own fields are; each method's own are in
    the table); ``""`` in a ReAct eval, where they are the eval's."""
    if not summary.methods:
        return ""
    first = summary.config.methods[0]
    known = {str(method): method for method in Method}
    return f" ({known[first].label if first in known else _line(first)})"


def _protocol_row(protocol: object) -> list[tuple[str, str]]:
    """The protocol's row, for an eval that did not speak the paper's text."""
    return (
        [("protocol", _line(protocol))] if isinstance(protocol, str) and protocol != "text" else []
    )


def summary_table(summary: Summary) -> Table:
    """The final numbers of an eval, one per line (the scores, steps, tokens, cost, latency
    and stop reasons labelled with their method's name where there are several)."""
    table = Table(title="react-cli eval", show_header=False, title_justify="left")
    table.add_column("what", style="bold", overflow="fold")
    table.add_column("value", overflow="fold")
    figures, dataset, config = summary.figures, summary.dataset, summary.config
    whose = whose_figures(summary)
    rows = [
        ("dataset", f"{_line(dataset.path)} ({dataset.format.value})"),
        ("model", _line(config.model)),
        ("prompt", _line(config.prompt_name)),
        *_protocol_row(config.run.get("protocol")),
        ("status", summary.status.value),
        ("questions", str(figures.n)),
    ]
    scores = ["accuracy"] if figures.kind is ScoreKind.ACCURACY else ["EM", "F1"]
    rows += [(name + whose, figure_text(figures.score(name.lower()), "{:.4f}")) for name in scores]
    rows.append(("evidence", evidence_text(figures)))
    stops = ", ".join(f"{reason.value} {count}" for reason, count in figures.stop_reasons.items())
    total = figures.total_cost
    cost = Cost(total, figures.tokens_estimated) if total is not None else None
    rows += [
        ("failed", str(figures.failed)),  # questions any method failed: the eval's own
        ("avg steps" + whose, figure_text(figures.avg_steps, "{:.2f}")),
        ("avg tokens" + whose, _tokens(figures)),
        *([("cached tokens", f"{figures.cached_tokens:,}")] if figures.cached_tokens else []),
        *_prompt_cache_row(figures),
        *([("refused tool calls", f"{figures.refused_calls:,}")] if figures.refused_calls else []),
        *([("cost" + whose, cost_text(cost).removeprefix("cost "))] if cost else []),
        ("avg latency" + whose, figure_text(figures.avg_latency_s, format_seconds)),
        ("stop reasons" + whose, stops or NONE),
        ("wall time", format_seconds(summary.wall_s)),
    ]
    for name, value in rows:
        table.add_row(name, Text(value))
    return table


def _prompt_cache_row(figures: Figures) -> list[tuple[str, str]]:
    """The server's prompt cache, where it reported one: its tokens and their share."""
    cached, share = figures.cached_prompt_tokens, figures.cached_share
    if cached is None:
        return []
    return [("prompt cache", f"{cached:,} tokens" + ("" if share is None else f" ({share:.0%})"))]


EVIDENCE = (
    ("page recall", "page_recall"),
    ("page precision", "page_precision"),
    ("sentence recall", "sentence_recall"),
)
"""The evidence scores as shown, and their fields."""


def evidence_rows(figures: Figures) -> list[tuple[str, str]]:
    """The mean evidence scores by name; dashes without."""
    values = figures.evidence.to_json() if figures.evidence is not None else {}
    return [(name, figure_text(values.get(key), "{:.4f}")) for name, key in EVIDENCE]


def evidence_text(figures: Figures) -> str:
    """The mean evidence scores on one line, with the questions they are over where that is
    not all of them (``—`` without gold evidence)."""
    evidence = figures.evidence
    if evidence is None:
        return NONE
    text = " · ".join(f"{name} {value}" for name, value in evidence_rows(figures))
    return text + (f" ({evidence.n:,} with gold evidence)" if evidence.n != figures.n else "")


def table_1(summary: Summary) -> tuple[str, list[str], list[list[str]]]:
    """The methods of an eval as the paper's Table 1: its rows in the paper's order, scores in
    percent beside the paper's PaLM-540B figures, and what each costs per question. Title,
    column headers and rows, all plain text (the terminal and the report page lay them out)."""
    task = Task.FEVER if summary.dataset.format is Format.FEVER else Task.HOTPOTQA
    kind = summary.figures.kind
    scores = [(m, "acc" if m == "accuracy" else m.upper()) for m in kind.metrics]
    graded = "acc" if kind is ScoreKind.ACCURACY else "EM"
    made = "" if summary.calls_made is None else f"; {summary.calls_made:,} calls made"
    title = f"methods (paper: ReAct, Table 1, PaLM-540B{made})"
    headers = ["method", "n", *(h for _, h in scores), f"paper {graded}", "calls / q", "tokens / q"]
    known = {str(method): method for method in Method}
    cells = dict(summary.methods)
    evidence = any(dict(values).get("page_recall") is not None for values in cells.values())
    if evidence:
        headers.append("page recall")
    names = [str(m) for m in Method if str(m) in cells] + [n for n in cells if n not in known]
    rows = []
    for name in names:
        values = dict(cells[name])
        method = known.get(name)
        paper = PAPER_FIGURES[task].get(method) if method else None
        rows.append(
            [
                method.label if method else _line(name),
                _cell(values.get("n"), "{:,.0f}"),
                *(_cell(values.get(metric), "{:.1%}") for metric, _ in scores),
                NONE if paper is None else f"{paper:.1f}%",
                _cell(values.get("avg_calls"), "{:,.1f}"),
                _cell(values.get("avg_tokens"), "{:,.0f}"),
                *([_cell(values.get("page_recall"), "{:.1%}")] if evidence else []),
            ]
        )
    return title, headers, rows


def methods_table(summary: Summary) -> Table:
    """``table_1`` for the terminal."""
    title, headers, rows = table_1(summary)
    table = Table(title=title, title_justify="left")
    for header in headers:
        table.add_column(header, justify="left" if header == "method" else "right", overflow="fold")
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))
    return table


def _cell(value: float | str | None, form: str) -> str:
    """A recorded figure as ``form`` writes it; recorded text as plain text; a dash for none."""
    if isinstance(value, str):
        return _line(value)
    return figure_text(value, form)
