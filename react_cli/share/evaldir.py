"""An eval folder read for showing and comparing: its summary and rows, cleaned, and traces.

The folder is read by the eval package's one reader (``eval.files``), as untrusted input; here
every text is cleaned for display. Only ``ShownRow.key`` keeps the recorded question text
exactly, because two evals are paired on it. A line of ``results.jsonl`` that is not a valid
row (cut short by a crash, edited, hostile) is skipped and counted, not fatal; of the rows of
one question the last counts (a resumed eval appends a question's row with methods added,
which replaces the earlier one: a valid row, neither shown nor counted as skipped). In an eval
of several methods, the rows are one method's results (its first method's unless another is
chosen).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from react_cli.core.errors import TraceError, UsageError
from react_cli.core.records import StopReason
from react_cli.core.wording import quoted
from react_cli.eval.failures import Diagnosis, FailureMode, RunFacts, Scored, diagnose, run_facts
from react_cli.eval.files import RESULTS, SUMMARY, read_rows, read_summary
from react_cli.eval.rows import MethodResult, Row
from react_cli.eval.summary import ScoreKind, Summary
from react_cli.methods.evidence import Evidence
from react_cli.share.text import one_line, shown
from react_cli.share.view import TraceView, load_view
from react_cli.traces.trace import Trace


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
    evidence: Evidence | None = None  # None: no gold evidence, or a method without Wikipedia
    failure: Diagnosis | None = None  # why it is right or wrong, its rule cleaned

    @classmethod
    def of(cls, row: Row, result: MethodResult, folder: Path, fever: bool) -> ShownRow:
        """The row of a question, showing one method's ``result`` (its failure mode as
        recorded, or derived from the row and its trace)."""
        trace = None if result.trace is None else inside(folder, result.trace)
        failure = result.failure or _diagnosed(row, result, trace, fever)
        return cls(
            key=row.key,
            index=row.index,
            question=shown(row.question),
            gold=shown(" / ".join(row.golds)),
            answer=None if result.answer is None else shown(result.answer),
            em=result.em,
            f1=result.f1,
            stop_reason=result.stop_reason,
            error=None if result.error is None else shown(result.error),
            steps=result.steps,
            tokens=result.tokens,
            latency_s=result.latency_s,
            calls=result.calls,
            trace=trace,
            evidence=result.evidence,
            failure=Diagnosis(failure.mode, shown(failure.rule)),
        )

    @property
    def mode(self) -> FailureMode:
        """The row's failure mode (endpoint failure for a row made without one)."""
        return FailureMode.ENDPOINT_FAILURE if self.failure is None else self.failure.mode

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
    "protocol",
    "method",
    "temperature",
    "max_steps",
    "max_tokens",
    "max_total_tokens",
    "timeout_s",
    "force_answer",
    "constrain",
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
    skipped: int  # lines of results.jsonl that are no valid row
    method: str | None = None  # the method the rows show, when one was chosen

    @property
    def kind(self) -> ScoreKind:
        return self.summary.figures.kind

    @property
    def label(self) -> str:
        """What the eval ran: model and prompt (and the protocol, unless the paper's text; a
        grammar, if one constrained it), and its methods unless ReAct's alone."""
        config = self.summary.config
        label = f"{config.model} · {config.prompt_name}"
        protocol = config.run.get("protocol")
        if isinstance(protocol, str) and protocol != "text":
            label += f" · {one_line(protocol)}"
        if config.run.get("constrain") is True:
            label += " · constrained"
        if self.method is not None:
            return f"{label} · {one_line(self.method)}"
        return label if config.methods == ("react",) else f"{label} · {', '.join(config.methods)}"

    def config_facts(self) -> Facts:
        """The eval's settings worth showing (no endpoint URL, no local paths)."""
        config, dataset = self.summary.config, self.summary.dataset
        recorded = {**config.run, "concurrency": config.concurrency}
        facts = [("dataset", f"{Path(dataset.path).name} ({dataset.format.value})")]
        for key in _CONFIG_SHOWN:
            value = recorded.get(key)
            if value is not None:
                shown = ("yes" if value else "no") if isinstance(value, bool) else str(value)
                facts.append((key.replace("_", " "), shown))
        wiki = str(recorded.get("wiki"))
        if wiki.startswith("zim:"):  # a local archive: its name, not where it lives
            facts = [(k, f"zim:{Path(wiki[4:]).name}" if k == "wiki" else v) for k, v in facts]
        name, sha = config.prompt_name, config.prompt_sha256
        facts.insert(2, ("prompt", f"{name} ({sha[:12]})" if sha is not None else name))
        return tuple(facts)


def load_eval(path: Path, method: str | None = None) -> EvalFolder:
    """Read an eval folder, its rows showing ``method``'s results (default: each row's own
    fields); UsageError when it is not one, its summary is malformed, or it never ran
    ``method``."""
    summary, latest, skipped = latest_rows(path)
    fever = summary.figures.kind is ScoreKind.ACCURACY
    rows: list[ShownRow] = []
    for row in latest:
        results = row.results()
        chosen = results.get(method) if method is not None else next(iter(results.values()))
        if chosen is not None:
            rows.append(ShownRow.of(row, chosen, path, fever))
    if method is not None and not rows and method not in summary.config.methods:
        ran = ", ".join(one_line(name) for name in summary.config.methods)
        raise UsageError(f"{path} holds no results of the method {quoted(method)} (it ran {ran})")
    ordered = tuple(sorted(rows, key=lambda row: row.key))
    return EvalFolder(path, _cleaned(summary), ordered, skipped, method)


def latest_rows(path: Path) -> tuple[Summary, list[Row], int]:
    """An eval folder's summary as recorded, the last valid row of each question (in the
    order the file has them) and the number of lines skipped; UsageError when it is not an
    eval folder or its summary is malformed."""
    if not path.is_dir():
        raise UsageError(f"{path}: no such eval folder")
    summary = read_summary(path / SUMMARY)
    if summary is None:
        raise UsageError(f"{path}: not an eval folder (no {SUMMARY})")
    read = read_rows(path / RESULTS, skip_bad=True)
    last = {row.key: row for row in read.rows}
    return summary, list(last.values()), read.skipped


def _cleaned(summary: Summary) -> Summary:
    """``summary`` with every text (keys too) cleaned to one line."""
    config = replace(
        summary.config,
        run=_cleaned_json(summary.config.run),
        methods=tuple(one_line(name) for name in summary.config.methods),
    )
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


def _diagnosed(row: Row, result: MethodResult, trace: Path | None, fever: bool) -> Diagnosis:
    """The failure mode of a result recorded before modes were: from the row, and from its
    trace where one can be read (without it, as if the run was shown nothing)."""
    facts = RunFacts()
    if trace is not None and not result.failed:
        try:
            run = Trace.read(trace).run
            facts = run_facts(run.steps, run.answer)
        except TraceError:
            pass
    scored = Scored(
        result.answer, row.golds, result.em, result.f1, result.stop_reason, result.evidence, fever
    )
    return diagnose(scored, facts)


def inside(folder: Path, name: str) -> Path | None:
    """``folder/name`` if it stays inside the folder (no absolute path, ``..`` or symlink out)."""
    try:
        target = (folder / name).resolve()
        return target if target.is_relative_to(folder.resolve()) else None
    except (OSError, ValueError):
        return None
