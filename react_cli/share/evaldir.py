"""An eval folder read for showing and comparing: its summary and rows, cleaned, and traces.

The folder is read by the eval package's one reader (``eval.files``), as untrusted input; here
every text is cleaned for display. Only ``ShownRow.key`` keeps the recorded question text
exactly, because two evals are paired on it. A line of ``results.jsonl`` that is not a valid
row (cut short by a crash, edited, hostile), or that repeats a question, is skipped and
counted, not fatal.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from react_cli.errors import TraceError, UsageError
from react_cli.eval.files import RESULTS, SUMMARY, read_rows, read_summary
from react_cli.eval.rows import Row
from react_cli.eval.summary import ScoreKind, Summary
from react_cli.records import StopReason
from react_cli.share.text import one_line, shown
from react_cli.share.view import TraceView, load_view


def metric_label(metric: str) -> str:
    """How a score field is written for people: EM, F1, accuracy."""
    return metric if metric == "accuracy" else metric.upper()


@dataclass(frozen=True)
class ShownRow:
    """One finished question of an eval, its texts cleaned for display."""

    key: tuple[int, str]  # dataset index and question exactly as recorded: pairs two evals
    index: int
    question: str
    gold: str
    answer: str | None
    em: float  # FEVER: 1.0 when the label is right (F1 the same)
    f1: float
    stop_reason: StopReason
    error: str | None
    steps: int
    tokens: int
    latency_s: float
    calls: int | None  # as recorded; None = not recorded (count them from the trace)
    trace: Path | None  # inside the folder; None when absent or pointing elsewhere

    @classmethod
    def of(cls, row: Row, folder: Path) -> ShownRow:
        return cls(
            key=row.key,
            index=row.index,
            question=shown(row.question),
            gold=shown(" / ".join(row.golds)),
            answer=None if row.answer is None else shown(row.answer),
            em=row.em,
            f1=row.f1,
            stop_reason=row.stop_reason,
            error=None if row.error is None else shown(row.error),
            steps=row.steps,
            tokens=row.tokens,
            latency_s=row.latency_s,
            calls=row.calls,
            trace=None if row.trace is None else _inside(folder, row.trace),
        )

    @property
    def correct(self) -> bool:
        return self.em >= 1.0

    @property
    def outcome(self) -> str:
        """The stop reason, with the error of a question that failed."""
        reason = self.stop_reason.value
        return f"{reason}: {self.error}" if self.error else reason

    def view(self) -> TraceView | str:
        """The row's trajectory, or why it cannot be shown."""
        if self.trace is None:
            return "no trace available for this question"
        try:
            return load_view(self.trace)
        except TraceError as exc:
            return shown(str(exc))

    def model_calls(self) -> int | None:
        """Model calls for the question: recorded, else counted from its trace (None if lost)."""
        if self.calls is not None:
            return self.calls
        view = self.view()
        return view.calls if isinstance(view, TraceView) else None


Facts = tuple[tuple[str, str], ...]
_CONFIG_SHOWN = (
    "model",
    "api",
    "method",
    "temperature",
    "max_steps",
    "max_tokens",
    "max_total_tokens",
    "timeout_s",
    "force_answer",
    "wiki",
    "variant",
    "concurrency",
)


@dataclass(frozen=True)
class EvalFolder:
    """A whole eval folder; the texts of ``summary`` are cleaned to one line each."""

    path: Path
    summary: Summary
    rows: tuple[ShownRow, ...]  # in dataset order
    skipped: int  # lines of results.jsonl that are no valid row, or repeat a question

    @property
    def kind(self) -> ScoreKind:
        return self.summary.figures.kind

    @property
    def label(self) -> str:
        """What the eval ran: model and prompt, and its methods unless ReAct's alone."""
        config = self.summary.config
        label = f"{config.model} · {config.prompt_name}"
        return label if config.methods == ("react",) else f"{label} · {', '.join(config.methods)}"

    @property
    def methods(self) -> tuple[tuple[str, Facts], ...]:
        """The per-method table of an eval that ran several methods, as text."""
        return tuple(
            (name, tuple((key, _shown_scalar(value)) for key, value in cells))
            for name, cells in self.summary.methods
        )

    def config_facts(self) -> Facts:
        """The eval's settings worth showing (no endpoint URL, no local paths)."""
        config, dataset = self.summary.config, self.summary.dataset
        recorded = {**config.run, "concurrency": config.concurrency}
        facts = [("dataset", f"{Path(dataset.path).name} ({dataset.format.value})")]
        for key in _CONFIG_SHOWN:
            if recorded.get(key) is not None:
                facts.append((key.replace("_", " "), str(recorded[key])))
        wiki = str(recorded.get("wiki"))
        if wiki.startswith("zim:"):  # a local archive: its name, not where it lives
            facts = [(k, f"zim:{Path(wiki[4:]).name}" if k == "wiki" else v) for k, v in facts]
        name, sha = config.prompt_name, config.prompt_sha256
        facts.insert(2, ("prompt", f"{name} ({sha[:12]})" if sha is not None else name))
        return tuple(facts)


def load_eval(path: Path) -> EvalFolder:
    """Read an eval folder; UsageError when it is not one or its summary is malformed."""
    if not path.is_dir():
        raise UsageError(f"{path}: no such eval folder")
    summary = read_summary(path / SUMMARY)
    if summary is None:
        raise UsageError(f"{path}: not an eval folder (no {SUMMARY})")
    read = read_rows(path / RESULTS, skip_bad=True)
    rows: dict[tuple[int, str], ShownRow] = {}
    for row in read.rows:
        if row.key not in rows:
            rows[row.key] = ShownRow.of(row, path)
    skipped = read.skipped + len(read.rows) - len(rows)
    ordered = tuple(sorted(rows.values(), key=lambda row: row.key))
    return EvalFolder(path, _cleaned(summary), ordered, skipped)


def _cleaned(summary: Summary) -> Summary:
    """``summary`` with every text (keys too) cleaned to one line."""
    config = replace(summary.config, run=_cleaned_json(summary.config.run))
    methods = tuple(
        (one_line(name), tuple((one_line(key), _cleaned_json(value)) for key, value in cells))
        for name, cells in summary.methods
    )
    return replace(
        summary,
        dataset=replace(summary.dataset, path=one_line(summary.dataset.path)),
        config=config,
        created=one_line(summary.created),
        updated=one_line(summary.updated),
        methods=methods,
    )


def _cleaned_json(value: Any) -> Any:
    """JSON with every string (keys too) cleaned to one line."""
    if isinstance(value, str):
        return one_line(value)
    if isinstance(value, dict):
        return {one_line(str(key)): _cleaned_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_cleaned_json(item) for item in value]
    return value


def _inside(folder: Path, name: str) -> Path | None:
    """``folder/name`` if it stays inside the folder (no absolute path, ``..`` or symlink out)."""
    try:
        target = (folder / name).resolve()
        return target if target.is_relative_to(folder.resolve()) else None
    except (OSError, ValueError):
        return None


def _shown_scalar(value: float | str) -> str:
    if isinstance(value, str):
        return value
    return f"{value:,}" if isinstance(value, int) else f"{value:.4f}"
