"""An eval folder as ``react-cli eval`` writes it, read as untrusted input: summary, rows, traces.

Everything shown later comes from here already cleaned; only ``EvalRow.key`` keeps the recorded
question text exactly, because two runs are paired on it. A line of ``results.jsonl`` that is
not a valid row (cut short by a crash, edited, hostile) is skipped and counted, not fatal.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from react_cli.errors import TraceError, UsageError
from react_cli.evaluate import RESULTS, SUMMARY
from react_cli.share.text import one_line, shown
from react_cli.share.view import TraceView, load_view
from react_cli.trajectory import seconds


class ScoreKind(str, Enum):
    """How an eval scores answers: HotpotQA-style EM and F1, or FEVER label accuracy."""

    EM_F1 = "em_f1"
    ACCURACY = "accuracy"

    @property
    def metrics(self) -> tuple[str, ...]:
        """The summary's score fields, in the order they are shown."""
        return ("em", "f1") if self is ScoreKind.EM_F1 else ("accuracy",)


def metric_label(metric: str) -> str:
    """How a score field is written for people: EM, F1, accuracy."""
    return metric if metric == "accuracy" else metric.upper()


@dataclass(frozen=True)
class EvalRow:
    """One finished question of an eval."""

    key: tuple[int, str]  # dataset index and question exactly as recorded: pairs two runs
    index: int
    question: str
    gold: str
    answer: str | None
    em: float  # FEVER: 1.0 when the label is right (F1 the same)
    f1: float
    stop_reason: str
    error: str | None
    steps: int
    tokens: int
    latency_s: float
    calls: int | None  # as recorded; None = not recorded (count them from the trace)
    trace: Path | None  # inside the folder; None when absent or pointing elsewhere

    @property
    def correct(self) -> bool:
        return self.em >= 1.0

    @property
    def outcome(self) -> str:
        """The stop reason, with the error of a question that failed."""
        return f"{self.stop_reason}: {self.error}" if self.error else self.stop_reason

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
    """A whole eval folder; ``summary`` is cleaned and has every field the summary table reads."""

    path: Path
    summary: dict[str, Any]
    kind: ScoreKind
    rows: tuple[EvalRow, ...]  # in dataset order
    skipped: int  # lines of results.jsonl that are no valid row, or repeat a question
    methods: tuple[tuple[str, Facts], ...]  # the per-method table of multi-method evals

    @property
    def label(self) -> str:
        """What the run was: model and prompt, and the method when recorded."""
        config = self.summary["config"]
        method = config.get("method")
        label = f"{config['model']} · {config['prompt']['name']}"
        return f"{label} · {method}" if isinstance(method, str) else label

    def config_facts(self) -> Facts:
        """The run's settings worth showing (no endpoint URL, no local paths)."""
        config, dataset = self.summary["config"], self.summary["dataset"]
        facts = [("dataset", f"{Path(dataset['path']).name} ({dataset['format']})")]
        for key in _CONFIG_SHOWN:
            if config.get(key) is not None:
                facts.append((key.replace("_", " "), str(config[key])))
        wiki = str(config.get("wiki"))
        if wiki.startswith("zim:"):  # a local archive: its name, not where it lives
            facts = [(k, f"zim:{Path(wiki[4:]).name}" if k == "wiki" else v) for k, v in facts]
        prompt = config["prompt"]
        name, sha = str(prompt["name"]), prompt.get("sha256")
        facts.insert(2, ("prompt", f"{name} ({sha[:12]})" if isinstance(sha, str) else name))
        return tuple(facts)


def load_eval(path: Path) -> EvalFolder:
    """Read an eval folder; UsageError when it is not one or its summary is malformed."""
    if not path.is_dir():
        raise UsageError(f"{path}: no such eval folder")
    try:
        summary = json.loads((path / SUMMARY).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"{path}: not an eval folder (no {SUMMARY})") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"{path / SUMMARY}: unreadable ({exc})") from None
    problem = _summary_problem(summary)
    if problem:
        raise UsageError(f"{path / SUMMARY}: not a react-cli eval summary ({problem})")
    summary = _cleaned(summary)
    kind = ScoreKind.ACCURACY if "accuracy" in summary else ScoreKind.EM_F1
    rows, skipped = _rows(path)
    return EvalFolder(path, summary, kind, rows, skipped, _methods(summary.get("methods")))


def _number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)


def _summary_problem(summary: Any) -> str | None:
    """What keeps ``summary`` from being shown, or None."""
    if not isinstance(summary, dict):
        return "not an object"
    dataset, config = summary.get("dataset"), summary.get("config")
    if not isinstance(dataset, dict) or not all(
        isinstance(dataset.get(key), str) for key in ("path", "format")
    ):
        return "dataset"
    if not isinstance(config, dict) or not isinstance(config.get("prompt"), dict):
        return "config"
    if config.get("model") is None or config["prompt"].get("name") is None:
        return "config"
    scores = ("accuracy",) if "accuracy" in summary else ("em", "f1")
    numbers: tuple[str, ...] = (
        *scores,
        "n",
        "total_tokens",
        "failed",
        "avg_steps",
        "avg_tokens",
        "avg_latency_s",
        "wall_s",
    )
    for key in numbers:
        if not _number(summary.get(key)):
            return key
    stops = summary.get("stop_reasons")
    if not isinstance(summary.get("status"), str):
        return "status"
    if not isinstance(stops, dict) or not all(_number(count) for count in stops.values()):
        return "stop_reasons"
    return None


def _cleaned(value: Any) -> Any:
    """JSON with every string (keys too) cleaned to one line."""
    if isinstance(value, str):
        return one_line(value)
    if isinstance(value, dict):
        return {one_line(str(key)): _cleaned(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_cleaned(item) for item in value]
    return value


def _rows(path: Path) -> tuple[tuple[EvalRow, ...], int]:
    try:
        lines = (path / RESULTS).read_text(encoding="utf-8", errors="replace").splitlines()
    except FileNotFoundError:
        return (), 0
    except OSError as exc:
        raise UsageError(f"{path / RESULTS}: unreadable ({exc.strerror or exc})") from None
    rows: dict[tuple[int, str], EvalRow] = {}
    skipped = 0
    for line in lines:
        if not line.strip():
            continue
        try:
            row = _row(json.loads(line), path)
        except (ValueError, TypeError, KeyError):  # JSONDecodeError is a ValueError
            skipped += 1
            continue
        if row.key in rows:
            skipped += 1
            continue
        rows[row.key] = row
    return tuple(sorted(rows.values(), key=lambda row: row.key)), skipped


def _row(data: Any, folder: Path) -> EvalRow:
    """A row of results.jsonl; TypeError/ValueError/KeyError when it is not a valid one."""
    if not isinstance(data, dict):
        raise TypeError("not an object")
    index, question = data["index"], data["question"]
    if isinstance(index, bool) or not isinstance(index, int) or not isinstance(question, str):
        raise TypeError("index or question")
    em, f1 = _fraction(data["em"]), _fraction(data["f1"])
    answer, error, trace = (_optional_str(data.get(key)) for key in ("answer", "error", "trace"))
    calls = data.get("calls")
    return EvalRow(
        key=(index, question),
        index=index,
        question=shown(question),
        gold=shown(_gold(data.get("gold"))),
        answer=None if answer is None else shown(answer),
        em=em,
        f1=f1,
        stop_reason=one_line(_optional_str(data["stop_reason"]) or "?"),
        error=None if error is None else shown(error),
        steps=_count(data.get("steps")),
        tokens=_count(data.get("tokens")),
        latency_s=seconds(data.get("latency_s"), "latency_s"),
        calls=None if calls is None else _count(calls),
        trace=None if trace is None else _inside(folder, trace),
    )


def _fraction(value: Any) -> float:
    if not _number(value) or not 0 <= value <= 1:
        raise ValueError(f"score {value!r}")
    return float(value)


def _count(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"count {value!r}")
    return value


def _optional_str(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    raise TypeError(f"{type(value).__name__}, not text")


def _gold(value: Any) -> str:
    golds = value if isinstance(value, list) else [value]
    if not golds or not all(isinstance(g, (str, int, float)) for g in golds):
        raise TypeError("gold")
    return " / ".join(str(g) for g in golds)


def _inside(folder: Path, name: str) -> Path | None:
    """``folder/name`` if it stays inside the folder (no absolute path, ``..`` or symlink out)."""
    try:
        target = (folder / name).resolve()
        return target if target.is_relative_to(folder.resolve()) else None
    except (OSError, ValueError):
        return None


def _methods(value: Any) -> tuple[tuple[str, Facts], ...]:
    """A ``methods`` table, ``{name: {field: value}}`` or ``[{"method": name, …}]``, as text."""
    if isinstance(value, list):
        value = {
            item.get("method", item.get("name")): item for item in value if isinstance(item, dict)
        }
    if not isinstance(value, dict):
        return ()
    table = []
    for name, fields in value.items():
        if isinstance(fields, dict):
            cells = tuple(
                (str(key), _shown_scalar(item))
                for key, item in fields.items()
                if key not in ("method", "name") and (_number(item) or isinstance(item, str))
            )
            table.append((one_line(str(name)), cells))
    return tuple(table)


def _shown_scalar(value: float | str) -> str:
    if isinstance(value, str):
        return value
    return f"{value:,}" if isinstance(value, int) else f"{value:.4f}"
