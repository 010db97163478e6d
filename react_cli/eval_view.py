"""What ``react-cli eval`` shows on stderr: a live progress bar with running scores and ETA,
then the summary as a table. Dataset text never appears here, only numbers and our own words.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

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

from react_cli.evaluate import EvalObserver
from react_cli.records import Cost, RetryWait
from react_cli.render import format_seconds, plain
from react_cli.wording import cost_text


def score_text(summary: dict[str, Any]) -> str:
    """``EM 0.420 F1 0.515`` or ``acc 0.610``, plus failures when there are any."""
    if "accuracy" in summary:
        text = f"acc {summary['accuracy']:.3f}"
    else:
        text = f"EM {summary['em']:.3f} F1 {summary['f1']:.3f}"
    return text + (f" · {summary['failed']} failed" if summary["failed"] else "")


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

    def started(self, total: int, done: int, summary: dict[str, Any]) -> None:
        scores = score_text(summary) if summary["n"] else ""
        self.progress.update(self.task, total=total, completed=done, scores=scores)
        self.progress.start()

    def result(self, row: dict[str, Any], summary: dict[str, Any]) -> None:
        self.progress.update(self.task, advance=1, scores=score_text(summary))

    def finished(self, summary: dict[str, Any]) -> None:
        self.progress.stop()
        self.console.print(summary_table(summary))


NONE = "—"  # no figure yet: no question has finished


def _number(value: float | None, form: str | Callable[[float], str]) -> str:
    if value is None:
        return NONE
    return form(value) if callable(form) else form.format(value)


def _tokens(summary: dict[str, Any]) -> str:
    average = _number(summary["avg_tokens"], "{:,.0f}")
    if summary.get("tokens_estimated") and average != NONE:
        return f"~{average} (estimated)"
    return average


def _cost(summary: dict[str, Any]) -> str:
    estimated = bool(summary.get("tokens_estimated"))
    return cost_text(Cost(summary["total_cost"], estimated)).removeprefix("cost ")


def summary_table(summary: dict[str, Any]) -> Table:
    """The final numbers of a run, one per line."""
    table = Table(title="react-cli eval", show_header=False, title_justify="left")
    table.add_column("what", style="bold")
    table.add_column("value")
    dataset, config = summary["dataset"], summary["config"]
    rows = [
        ("dataset", f"{plain(dataset['path'])} ({dataset['format']})"),
        ("model", plain(str(config["model"]))),
        ("prompt", plain(str(config["prompt"]["name"]))),
        ("status", summary["status"]),
        ("questions", str(summary["n"])),
    ]
    scores = ["accuracy"] if "accuracy" in summary else ["EM", "F1"]
    rows += [(name, _number(summary[name.lower()], "{:.4f}")) for name in scores]
    stops = ", ".join(f"{reason} {count}" for reason, count in summary["stop_reasons"].items())
    rows += [
        ("failed", str(summary["failed"])),
        ("avg steps", _number(summary["avg_steps"], "{:.2f}")),
        ("avg tokens", _tokens(summary)),
        *([("cost", _cost(summary))] if summary.get("total_cost") is not None else []),
        ("avg latency", _number(summary["avg_latency_s"], format_seconds)),
        ("stop reasons", stops or NONE),
        ("wall time", format_seconds(summary["wall_s"])),
    ]
    for name, value in rows:
        table.add_row(name, Text(value))
    return table
