"""What ``react-cli eval`` shows on stderr: a progress bar with running scores, then a table.

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
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from react_cli.eval.rows import Row
from react_cli.eval.runner import EvalObserver
from react_cli.eval.summary import Figures, ScoreKind, Summary
from react_cli.records import Cost, RetryWait
from react_cli.render import format_seconds, plain
from react_cli.wording import cost_text


def score_text(figures: Figures) -> str:
    """``EM 0.420 F1 0.515`` or ``acc 0.610``, plus failures when there are any (it is shown
    once a question has finished)."""
    if figures.kind is ScoreKind.ACCURACY:
        text = f"acc {figures.em or 0:.3f}"
    else:
        text = f"EM {figures.em or 0:.3f} F1 {figures.f1 or 0:.3f}"
    return text + (f" · {figures.failed} failed" if figures.failed else "")


class ProgressView(EvalObserver):
    """A rich progress bar on the console (stderr); the summary table when done."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.progress = Progress(
            TextColumn("eval"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[scores]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
            transient=False,
        )
        self.task = self.progress.add_task("eval", total=None, scores="")

    def retry_waiting(self, wait: RetryWait) -> None:
        """A ``records.RetryObserver`` (called from worker threads): above the bar, dimmed."""
        self.console.print(Text(str(wait), style="dim"))

    def started(self, total: int, done: int, summary: Summary) -> None:
        scores = score_text(summary.figures) if summary.figures.n else ""
        self.progress.update(self.task, total=total, completed=done, scores=scores)
        self.progress.start()

    def result(self, row: Row, summary: Summary) -> None:
        self.progress.update(self.task, advance=1, scores=score_text(summary.figures))

    def finished(self, summary: Summary) -> None:
        self.progress.stop()
        self.console.print(summary_table(summary))


NONE = "—"  # no figure yet: no question has finished


def figure_text(value: float | None, form: str | Callable[[float], str]) -> str:
    """A figure of the summary as ``form`` writes it; a dash when there is none yet."""
    if value is None:
        return NONE
    return form(value) if callable(form) else form.format(value)


def _tokens(figures: Figures) -> str:
    average = figure_text(figures.avg_tokens, "{:,.0f}")
    if figures.tokens_estimated and average != NONE:
        return f"~{average} (estimated)"
    return average


def _line(text: str) -> str:
    """Recorded text (a path, a model name) on one line, as plain text."""
    return " ".join(plain(text).split())


def summary_table(summary: Summary) -> Table:
    """The final numbers of an eval, one per line."""
    table = Table(title="react-cli eval", show_header=False, title_justify="left")
    table.add_column("what", style="bold")
    table.add_column("value")
    figures, dataset, config = summary.figures, summary.dataset, summary.config
    rows = [
        ("dataset", f"{_line(dataset.path)} ({dataset.format.value})"),
        ("model", _line(config.model)),
        ("prompt", _line(config.prompt_name)),
        ("status", summary.status.value),
        ("questions", str(figures.n)),
    ]
    scores = ["accuracy"] if figures.kind is ScoreKind.ACCURACY else ["EM", "F1"]
    rows += [(name, figure_text(figures.score(name.lower()), "{:.4f}")) for name in scores]
    stops = ", ".join(f"{reason.value} {count}" for reason, count in figures.stop_reasons.items())
    total = figures.total_cost
    cost = Cost(total, figures.tokens_estimated) if total is not None else None
    rows += [
        ("failed", str(figures.failed)),
        ("avg steps", figure_text(figures.avg_steps, "{:.2f}")),
        ("avg tokens", _tokens(figures)),
        *([("cost", cost_text(cost).removeprefix("cost "))] if cost else []),
        ("avg latency", figure_text(figures.avg_latency_s, format_seconds)),
        ("stop reasons", stops or NONE),
        ("wall time", format_seconds(summary.wall_s)),
    ]
    for name, value in rows:
        table.add_row(name, Text(value))
    return table
