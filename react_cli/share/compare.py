"""``eval compare A B``: two evals paired question by question, with paired statistics.

Questions are paired by dataset index and question text, so two runs over the same selection
compare whatever produced them (another model, prompt or method; two methods of one eval of
several, too). B is compared to A: every difference is B − A, a flip "right → wrong" was right
in A and wrong in B.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from statistics import fmean
from typing import Any

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from react_cli.core.errors import UsageError
from react_cli.display.terminal import format_seconds, plain
from react_cli.eval.summary import ScoreKind
from react_cli.share.evaldir import EvalFolder, ShownRow, load_eval, metric_label
from react_cli.share.failures import ModeChange, counts_json, failure_table, mode_changes
from react_cli.share.stats import BOOTSTRAP_RESAMPLES, bootstrap_ci, mcnemar_exact
from react_cli.share.text import brief

DEFAULT_SEED = 0


class FlipDirection(str, Enum):
    """How a question's correctness changed from A to B."""

    RIGHT_TO_WRONG = "right_to_wrong"
    WRONG_TO_RIGHT = "wrong_to_right"

    @property
    def label(self) -> str:
        return "right → wrong" if self is FlipDirection.RIGHT_TO_WRONG else "wrong → right"


@dataclass(frozen=True)
class Flip:
    """A question one run got right and the other wrong."""

    index: int
    question: str
    gold: str
    answer_a: str | None
    answer_b: str | None
    direction: FlipDirection


@dataclass(frozen=True)
class Paired:
    """A per-question quantity of both runs: the means over the questions where both have it."""

    name: str
    a: float
    b: float
    n: int

    @property
    def difference(self) -> float:
        return self.b - self.a

    def to_json(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "difference": self.difference, "n": self.n}


@dataclass(frozen=True)
class Comparison:
    """Everything ``eval compare`` reports; ``to_json`` is its ``--json`` object."""

    a: EvalFolder
    b: EvalFolder
    kind: ScoreKind
    paired: int
    only_a: int
    only_b: int
    scores: tuple[Paired, ...]  # EM and F1, or accuracy
    costs: tuple[Paired, ...]  # tokens, model calls and seconds per question
    evidence: tuple[Paired, ...]  # evidence scores, over the questions both have them for
    both_right: int
    both_wrong: int
    flips: tuple[Flip, ...]
    mcnemar_p: float
    ci: tuple[float, float]  # bootstrap CI of the mean F1 (FEVER: accuracy) difference
    seed: int
    pairs: tuple[tuple[ShownRow, ShownRow], ...] = ()
    mode_changes: tuple[ModeChange, ...] = ()  # paired questions whose failure mode changed

    def count(self, direction: FlipDirection) -> int:
        return sum(flip.direction is direction for flip in self.flips)

    def to_json(self) -> dict[str, Any]:
        graded = self.scores[-1].name
        return {
            "a": _side_json(self.a),
            "b": _side_json(self.b),
            "paired": self.paired,
            "only_in_a": self.only_a,
            "only_in_b": self.only_b,
            "scores": {score.name: score.to_json() for score in self.scores},
            "per_question": {cost.name: cost.to_json() for cost in self.costs},
            "evidence": {score.name: score.to_json() for score in self.evidence} or None,
            "flips": {
                "both_right": self.both_right,
                "both_wrong": self.both_wrong,
                **{d.value: self.count(d) for d in FlipDirection},
                "mcnemar_exact_p": self.mcnemar_p,
            },
            "bootstrap": {
                "of": f"{graded} difference",
                "ci95": list(self.ci),
                "resamples": BOOTSTRAP_RESAMPLES,
                "seed": self.seed,
            },
            "failure_modes": {
                "a": counts_json([x for x, _ in self.pairs]),
                "b": counts_json([y for _, y in self.pairs]),
                "changed": [change.to_json() for change in self.mode_changes],
            },
            "flipped": [
                {
                    "index": flip.index,
                    "question": flip.question,
                    "gold": flip.gold,
                    "answer_a": flip.answer_a,
                    "answer_b": flip.answer_b,
                    "direction": flip.direction.value,
                }
                for flip in self.flips
            ],
        }


def _side_json(folder: EvalFolder) -> dict[str, Any]:
    return {"path": str(folder.path), "label": folder.label, "n": len(folder.rows)}


def compare_evals(
    a: Path,
    b: Path,
    *,
    seed: int = DEFAULT_SEED,
    method: str | None = None,
    method_b: str | None = None,
) -> Comparison:
    """Pair two eval folders and compare them, each by ``method`` (B by ``method_b`` if given)
    where it ran several; UsageError when they cannot be compared."""
    first, second = load_eval(a, method), load_eval(b, method_b or method)
    if first.kind is not second.kind:
        raise UsageError(
            f"{a} is scored by {first.kind.value} and {b} by {second.kind.value}: "
            "compare evals of the same task"
        )
    rows_b = {row.key: row for row in second.rows}
    pairs = [(row, rows_b[row.key]) for row in first.rows if row.key in rows_b]
    if not pairs:
        raise UsageError(
            f"{a} and {b} share no question (paired by dataset index and question text): "
            "compare evals of the same dataset and selection"
        )
    names = first.kind.metrics
    scores = tuple(
        _paired(name, [(_score(x, name), _score(y, name)) for x, y in pairs]) for name in names
    )
    flips = tuple(_flip(x, y) for x, y in pairs if x.correct != y.correct)
    discordant = [sum(flip.direction is d for flip in flips) for d in FlipDirection]
    graded = names[-1]
    differences = [_score(y, graded) - _score(x, graded) for x, y in pairs]
    return Comparison(
        a=first,
        b=second,
        kind=first.kind,
        paired=len(pairs),
        only_a=len(first.rows) - len(pairs),
        only_b=len(second.rows) - len(pairs),
        scores=scores,
        costs=_costs(pairs),
        evidence=_evidence(pairs),
        both_right=sum(x.correct and y.correct for x, y in pairs),
        both_wrong=sum(not x.correct and not y.correct for x, y in pairs),
        flips=flips,
        mcnemar_p=mcnemar_exact(*discordant),
        ci=bootstrap_ci(differences, seed=seed),
        seed=seed,
        pairs=tuple(pairs),
        mode_changes=mode_changes(pairs),
    )


def _score(row: ShownRow, name: str) -> float:
    return row.f1 if name == "f1" else row.em  # accuracy is stored as em


def _flip(x: ShownRow, y: ShownRow) -> Flip:
    direction = FlipDirection.RIGHT_TO_WRONG if x.correct else FlipDirection.WRONG_TO_RIGHT
    return Flip(x.index, x.question, x.gold, x.answer, y.answer, direction)


def _paired(name: str, values: list[tuple[float, float]]) -> Paired:
    return Paired(name, fmean(a for a, _ in values), fmean(b for _, b in values), len(values))


def _costs(pairs: list[tuple[ShownRow, ShownRow]]) -> tuple[Paired, ...]:
    """Tokens, model calls and seconds per question (calls where both runs' are known)."""
    calls = [(x.model_calls(), y.model_calls()) for x, y in pairs]
    known = [(float(cx), float(cy)) for cx, cy in calls if cx is not None and cy is not None]
    costs = [
        _paired("tokens", [(x.tokens, y.tokens) for x, y in pairs]),
        *([_paired("calls", known)] if known else []),
        _paired("latency_s", [(x.latency_s, y.latency_s) for x, y in pairs]),
    ]
    return tuple(costs)


EVIDENCE_SCORES = ("page_recall", "page_precision", "sentence_recall")


def _evidence(pairs: list[tuple[ShownRow, ShownRow]]) -> tuple[Paired, ...]:
    """Each evidence score over the questions where both runs have it (none without)."""
    both = [(x.evidence, y.evidence) for x, y in pairs if x.evidence and y.evidence]
    paired = []
    for name in EVIDENCE_SCORES:
        values = [(getattr(a, name), getattr(b, name)) for a, b in both]
        known = [(a, b) for a, b in values if a is not None and b is not None]
        if known:
            paired.append(_paired(name, known))
    return tuple(paired)


def _signed(value: float, digits: int = 4) -> str:
    return f"{value:+.{digits}f}".replace("-", "−")


_COST_LABELS = {"tokens": "tokens / question", "calls": "calls / question"}


def _cost_cell(name: str, value: float, signed: bool = False) -> str:
    if name != "latency_s":
        return _signed(value, 2) if signed else f"{value:,.2f}"
    seconds = format_seconds(abs(value))
    return ("−" if value < 0 else "+") + seconds if signed else seconds


def comparison_view(comparison: Comparison) -> list[RenderableType]:
    """The comparison as terminal output: sides, the table of differences, flips and tests."""
    c = comparison
    sides = [
        Text(f"{name}: {plain(str(folder.path))} ({folder.label}, {len(folder.rows)} questions)")
        for name, folder in (("A", c.a), ("B", c.b))
    ]
    sides.append(
        Text(f"paired: {c.paired} questions (only in A: {c.only_a}, only in B: {c.only_b})")
    )
    table = Table(show_edge=False, box=None, pad_edge=False)
    for header in ("", "A", "B", "B − A"):
        table.add_column(header, justify="left" if not header else "right", overflow="fold")
    for score in c.scores:
        label = metric_label(score.name)
        table.add_row(label, f"{score.a:.4f}", f"{score.b:.4f}", _signed(score.difference))
    for score in c.evidence:
        label = score.name.replace("_", " ") + ("" if score.n == c.paired else f" (n={score.n})")
        table.add_row(label, f"{score.a:.4f}", f"{score.b:.4f}", _signed(score.difference))
    for cost in c.costs:
        table.add_row(
            _COST_LABELS.get(cost.name, "time / question"),
            _cost_cell(cost.name, cost.a),
            _cost_cell(cost.name, cost.b),
            _cost_cell(cost.name, cost.difference, signed=True),
        )
    graded = c.scores[-1]
    tests = [
        Text(
            "flips: "
            + ", ".join(f"{d.label} {c.count(d)}" for d in FlipDirection)
            + f" (both right {c.both_right}, both wrong {c.both_wrong}); "
            f"McNemar exact p = {c.mcnemar_p:.4g}"
        ),
        Text(
            f"{metric_label(graded.name)} difference "
            f"{_signed(graded.difference)}, 95 % CI [{_signed(c.ci[0])}, {_signed(c.ci[1])}] "
            f"(paired bootstrap, {BOOTSTRAP_RESAMPLES:,} resamples, seed {c.seed})"
        ),
    ]
    modes = failure_table([("A", [x for x, _ in c.pairs]), ("B", [y for _, y in c.pairs])])
    changed = Text(f"failure mode changed: {len(c.mode_changes)} of {c.paired} questions")
    return [*sides, table, *tests, modes, changed]


def flips_view(comparison: Comparison) -> Table:
    """``--list flips``: every question whose correctness changed, in dataset order."""
    table = Table(title="flipped questions", title_justify="left")
    for header in ("#", "flip", "question", "gold", "A answered", "B answered"):
        table.add_column(header, overflow="fold")
    for flip in comparison.flips:
        answers = (flip.answer_a, flip.answer_b)
        texts = (flip.question, flip.gold, *(a if a is not None else "—" for a in answers))
        table.add_row(str(flip.index), flip.direction.label, *(Text(brief(t)) for t in texts))
    return table
