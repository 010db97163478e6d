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
from react_cli.eval.failures import FailureMode
from react_cli.share.evaldir import EvalFolder, ShownRow, metric_label

if TYPE_CHECKING:
    from matplotlib.figure import Figure

INSTALL_HINT = "react-cli eval report needs matplotlib: pip install 'react-cli[report]'"
_GOOD, _BAD, _NONE, _OTHER = "#1a7f37", "#d4a72c", "#cf222e", "#0969da"
_LABEL_CHARS = 24
_MODE_COLOURS = {
    FailureMode.RIGHT: _GOOD,
    FailureMode.RIGHT_WITHOUT_EVIDENCE: "#7ee2a8",
    FailureMode.SEARCH_FAILURE: "#cf222e",
    FailureMode.REASONING_ERROR: "#d4a72c",
    FailureMode.UNSUPPORTED_ANSWER: "#bc4c00",
    FailureMode.REPETITIVE_LOOP: "#8250df",
    FailureMode.FORMAT_ERROR: "#0969da",
    FailureMode.LIMIT: "#57606a",
    FailureMode.AMBIGUOUS_LABEL: "#bf8700",
    FailureMode.ENDPOINT_FAILURE: "#24292f",
}


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
    """Stop reasons, score by number of steps, score by page recall (with evidence scores),
    latency per question (none without rows)."""
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
        drawn = [
            _stop_reasons(folder.rows),
            failure_chart(folder),
            _by_steps(folder),
            _by_page_recall(folder),
        ]
        return [chart for chart in [*drawn, _latency(folder.rows)] if chart is not None]


def _figure(height: float = 3.0) -> Figure:
    from matplotlib.figure import Figure

    return Figure(figsize=(5.4, height), layout="constrained")


def _svg(figure: Figure) -> str:
    """The figure as SVG, laid out once: ``savefig`` would also draw it once more with drawing
    turned off before drawing it (a third of the time, the same bytes)."""
    from matplotlib.backends.backend_svg import FigureCanvasSVG

    canvas = FigureCanvasSVG(figure)
    engine = figure.get_layout_engine()
    if engine is not None:
        engine.execute(figure)  # measured with an SVG renderer, as savefig does
        figure.set_layout_engine("none")
    buffer = io.StringIO()
    canvas.print_svg(buffer, metadata=dict.fromkeys(("Creator", "Date", "Format", "Type")))
    text = buffer.getvalue()
    return text[text.index("<svg") :]  # no XML prolog or DOCTYPE (and its URL)


def _short(label: str) -> str:
    return label if len(label) <= _LABEL_CHARS else label[: _LABEL_CHARS - 1] + "…"


def _stop_reasons(rows: tuple[ShownRow, ...]) -> Chart:
    """Questions per stop reason, a finish split into right and wrong answers: green is for
    right answers only, as in the latency chart."""
    counts = Counter(_stopped(row) for row in rows).most_common()
    figure = _figure(max(1.6, 0.9 + 0.35 * len(counts)))
    axes = figure.subplots()
    labels = [_short(label) for (label, _), _ in counts][::-1]
    values = [count for _, count in counts][::-1]
    colours = [colour for (_, colour), _ in counts][::-1]
    bars = axes.barh(range(len(values)), values, color=colours)
    axes.set_yticks(range(len(values)), labels)
    axes.bar_label(bars, padding=3)
    axes.set_xlabel("questions")
    title = "Why runs stopped"
    axes.set_title(title)
    text = ", ".join(f"{label} {count}" for (label, _), count in counts)
    return Chart(title, f"Questions per stop reason: {text}.", _svg(figure))


def _stopped(row: ShownRow) -> tuple[str, str]:
    """A row's bar in the stop-reason chart: its label and colour."""
    if row.stop_reason is not StopReason.FINISH:
        return row.stop_reason.value, _OTHER
    return ("finish, right", _GOOD) if row.correct else ("finish, wrong", _BAD)


def failure_chart(folder: EvalFolder) -> Chart:
    """The share of each failure mode as one stacked bar per method the eval ran (its rows'
    own method alone when it ran one)."""
    from react_cli.share.failures import counts_of, method_rows

    sides = method_rows(folder)
    counted = [(name, counts_of(rows), len(rows)) for name, rows in sides]
    present = [mode for mode in FailureMode if any(c.get(mode) for _, c, _ in counted)]
    legend_rows = -(-len(present) // 3)
    figure = _figure(1.3 + 0.4 * len(sides) + 0.22 * legend_rows)
    axes, key = figure.subplots(2, 1, height_ratios=[0.6 + 0.4 * len(sides), 0.22 * legend_rows])
    described, lefts = [], [0.0] * len(counted)
    for mode in present:
        shares = [counts.get(mode, 0) / total for _, counts, total in counted]
        colour = _MODE_COLOURS[mode]
        axes.barh(range(len(counted)), shares, left=lefts, label=mode.label, color=colour)
        lefts = [left + share for left, share in zip(lefts, shares, strict=True)]
        described.append(mode.label + " " + ", ".join(f"{share:.0%}" for share in shares))
    axes.set_yticks(range(len(counted)), [_short(name) for name, _, _ in counted])
    axes.set_xlim(0, 1)
    axes.set_xlabel("share of questions")
    title = "Why answers failed"
    axes.set_title(title)
    key.axis("off")  # the legend's own row, below the bars
    handles, labels = axes.get_legend_handles_labels()
    key.legend(handles, labels, loc="center", ncols=3, fontsize=7, frameon=False)
    names = ", ".join(name for name, _, _ in counted)
    text = f"Share of each failure mode ({names}): " + "; ".join(described) + "."
    return Chart(title, text, _svg(figure))


def _by_steps(folder: EvalFolder) -> Chart:
    groups: defaultdict[float, list[ShownRow]] = defaultdict(list)
    for row in folder.rows:
        groups[row.steps].append(row)
    named = ("number of steps", "steps")
    return _score_by(folder, groups, "{:.0f}", "steps taken", "Score by number of steps", named)


def _by_page_recall(folder: EvalFolder) -> Chart | None:
    """Score by the share of gold pages found (to the nearest quarter): whether wrong answers
    come from pages never found or from pages misread. None without evidence scores."""
    groups: defaultdict[float, list[ShownRow]] = defaultdict(list)
    for row in folder.rows:
        if row.evidence is not None:
            groups[round(row.evidence.page_recall * 4) / 4].append(row)
    if not groups:
        return None
    graded = metric_label(folder.kind.metrics[0])
    title = f"{graded} by page recall"
    named = ("page recall", "page recall")
    return _score_by(folder, groups, "{:.2f}", "page recall (gold pages found)", title, named)


def _score_by(
    folder: EvalFolder,
    groups: dict[float, list[ShownRow]],
    form: str,
    xlabel: str,
    title: str,
    named: tuple[str, str],
) -> Chart:
    """The mean of each score over each group of rows, as bars side by side; ``named`` says
    what groups them, in the description: in full, and as each group's label."""
    keys = sorted(groups)
    figure = _figure()
    axes = figure.subplots()
    metrics = folder.kind.metrics
    width = 0.8 / len(metrics)
    positions = range(len(keys))
    described = []
    for k, metric in enumerate(metrics):
        means = [
            sum(row.f1 if metric == "f1" else row.em for row in groups[key]) / len(groups[key])
            for key in keys
        ]
        offsets = [p + (k - (len(metrics) - 1) / 2) * width for p in positions]
        axes.bar(offsets, means, width, label=metric_label(metric))
        values = zip(keys, means, strict=True)
        described.append(metric + " " + ", ".join(f"{form.format(g)}: {m:.2f}" for g, m in values))
    axes.set_ylim(0, 1.15)
    axes.set_xticks(positions, [f"{form.format(g)}\n(n={len(groups[g])})" for g in keys])
    axes.set_xlabel(xlabel)
    axes.set_ylabel("mean score")
    axes.set_title(title)
    axes.legend(loc="upper left", frameon=False, ncols=len(metrics))
    description = f"Mean score by {named[0]} ({named[1]}: score): " + "; ".join(described) + "."
    return Chart(title, description, _svg(figure))


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
    return Chart("Latency per question", description, _svg(figure))  # the axes' title
