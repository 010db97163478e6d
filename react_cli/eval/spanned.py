"""What an eval tells its spans beyond the runs' events: each question's methods scored, and
the figures the eval ended with (``telemetry.base``: the eval's root span shows them, each
question's span its gold answers, prediction and scores)."""

from __future__ import annotations

from typing import Any

from react_cli.eval.datasets import Example, Format
from react_cli.eval.rows import Row
from react_cli.eval.summary import ScoreKind, Summary
from react_cli.telemetry.base import Scored


def scored(example: Example, row: Row, format: Format) -> list[Scored]:
    """The row's methods scored, in the row's order (the first is the question's output)."""
    kind = ScoreKind.ACCURACY if format is Format.FEVER else ScoreKind.EM_F1
    events = []
    for method, result in row.results().items():
        scores = {"em": result.em, "f1": result.f1, "accuracy": result.em}
        picked = {metric: scores[metric] for metric in kind.metrics}
        events.append(Scored(method, result.answer, tuple(example.golds), picked))
    return events


def method_figures(summary: Summary) -> dict[str, dict[str, Any]]:
    """The summary's figures of each method (of the one method: the summary's own)."""
    if summary.methods:
        return {name: dict(cells) for name, cells in summary.methods}
    method = summary.config.methods[0] if summary.config.methods else "react"
    return {method: summary.figures.to_json()}
