"""The eval report's charts, drawn by matplotlib as SVG (the optional ``report`` extra).

matplotlib is imported only here and only when a report is built, so the core install stays
light. Figures are made with the object API (no pyplot, no global backend), with math text
off (a stop reason like ``$x$`` stays text) and without dates in the SVG, so the same eval gives
the same bytes.
"""

from __future__ import annotations

import io
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING

from react_cli.core.errors import UsageError
from react_cli.core.records import StopReason
from react_cli.share.evaldir import EvalFolder, ShownRow, metric_label

if TYPE_CHECKING:
    from matplotlib.figure import Figure

INSTALL_HINT = "react-cli eval report needs matplotlib: pip install 'react-cli[report]'"
_GOOD, _BAD, _NONE, _OTHER = "#1a7f37", "#d4a72c", "#cf222e", "#0969da"
_LABEL_CHARS = 24


@dataclass(frozen=True)
class Chart:
    """One figure: its title, a text description (the image's alt text) and the SVG."""

    title: str
    description: str
    svg: str


def require_matplotlib() -> None:
    """UsageError naming the install command when the ``report`` extra is missing."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise UsageError(INSTALL_HINT) from None


def charts(folder: EvalFolder) -> list[Chart]:
    """Stop reasons, score by number of steps, latency per question (none without rows)."""
    require_matplotlib()
    import matplotlib

    if not folder.rows:
        return []
    style = matplotlib.rc_context(
        {
            "svg.fonttype": "none",  # text stays text: smaller, searchable
            "svg.hashsalt": "react-cli",
            "text.parse_math": False,
            "font.size": 10,
            "axes.spines.top": False,
            "axes.spines.right": False,
        }
    )
    with style:
        return [_stop_reasons(folder.rows), _by_steps(folder), _latency(folder.rows)]


def _figure(height: float = 3.0) -> Figure:
    from matplotlib.figure import Figure

    return Figure(figsize=(5.4, height), layout="constrained")


def _svg(figure: Figure) -> str:
    buffer = io.StringIO()
    metadata = dict.fromkeys(("Creator", "Date", "Format", "Type"))
    figure.savefig(buffer, format="svg", metadata=metadata)
    text = buffer.getvalue()
    return text[text.index("<svg") :]  # no XML prolog or DOCTYPE (and its URL)


def _short(label: str) -> str:
    return label if len(label) <= _LABEL_CHARS else label[: _LABEL_CHARS - 1] + "…"


def _stop_reasons(rows: tuple[ShownRow, ...]) -> Chart:
    counts = Counter(row.stop_reason for row in rows).most_common()
    figure = _figure(max(1.6, 0.9 + 0.35 * len(counts)))
    axes = figure.subplots()
    labels = [_short(reason.value) for reason, _ in counts][::-1]
    values = [count for _, count in counts][::-1]
    colours = [_GOOD if reason is StopReason.FINISH else _OTHER for reason, _ in counts][::-1]
    bars = axes.barh(range(len(values)), values, color=colours)
    axes.set_yticks(range(len(values)), labels)
    axes.bar_label(bars, padding=3)
    axes.set_xlabel("questions")
    axes.set_title("Why runs stopped")
    text = ", ".join(f"{reason.value} {count}" for reason, count in counts)
    return Chart("Stop reasons", f"Questions per stop reason: {text}.", _svg(figure))


def _by_steps(folder: EvalFolder) -> Chart:
    groups: defaultdict[int, list[ShownRow]] = defaultdict(list)
    for row in folder.rows:
        groups[row.steps].append(row)
    steps = sorted(groups)
    figure = _figure()
    axes = figure.subplots()
    metrics = folder.kind.metrics
    width = 0.8 / len(metrics)
    described = []
    for k, metric in enumerate(metrics):
        means = [
            sum(row.f1 if metric == "f1" else row.em for row in groups[s]) / len(groups[s])
            for s in steps
        ]
        offsets = [s + (k - (len(metrics) - 1) / 2) * width for s in steps]
        axes.bar(offsets, means, width, label=metric_label(metric))
        described.append(
            metric + " " + ", ".join(f"{s}: {m:.2f}" for s, m in zip(steps, means, strict=True))
        )
    axes.set_ylim(0, 1.15)
    axes.set_xticks(steps, [f"{s}\n(n={len(groups[s])})" for s in steps])
    axes.set_xlabel("steps taken")
    axes.set_ylabel("mean score")
    axes.set_title("Score by number of steps")
    axes.legend(loc="upper left", frameon=False, ncols=len(metrics))
    description = "Mean score by number of steps (steps: score): " + "; ".join(described) + "."
    return Chart("Score by number of steps", description, _svg(figure))


def _latency(rows: tuple[ShownRow, ...]) -> Chart:
    figure = _figure()
    axes = figure.subplots()
    kinds = (
        ("right", _GOOD, [r for r in rows if r.correct]),
        ("wrong", _BAD, [r for r in rows if not r.correct and r.answer is not None]),
        ("no answer", _NONE, [r for r in rows if r.answer is None]),
    )
    for label, colour, chosen in kinds:
        if chosen:
            xs, ys = [r.index for r in chosen], [r.latency_s for r in chosen]
            axes.scatter(xs, ys, s=14, color=colour, label=f"{label} ({len(chosen)})")
    axes.set_ylim(bottom=0)
    axes.set_xlabel("dataset index")
    axes.set_ylabel("seconds")
    axes.set_title("Latency per question")
    axes.legend(loc="best", fontsize=8)
    slowest = max(rows, key=lambda row: row.latency_s)
    description = (
        f"Latency of each of {len(rows)} questions; the slowest, question {slowest.index}, "
        f"took {slowest.latency_s:.2f} s."
    )
    return Chart("Latency per question", description, _svg(figure))
