"""An eval folder as Inspect AI eval logs (``eval export DIR --format inspect``): one per method.

Inspect AI's viewer (``inspect view``) shows a log's samples with their transcripts and scores.
The log is Inspect's JSON format (version 2), written here with the one JSON writer
(``infra.untrusted.dump_json``); Inspect AI is never imported. The task is named after the
dataset, the method and (for a method that runs the loop) its protocol, and its arguments say
which method, protocol, prompt and tools ran. Each sample is one question: its input and
target, the trajectory as chat messages (``share.inspect_messages``) and as the transcript's
events (``share.inspect_events``), the answer as the output, the row's scores (``em`` and
``f1``, or ``accuracy``), usage and time, and react-cli's stop reason in its metadata. The
results are the figures of ``summary.json``.

The folder is read as untrusted input (``share.evaldir``, ``traces.trace``): every text is
cleaned of control characters and clipped (``share.text.shown``), never escaped (JSON needs no
markup), a trace outside the folder is not read, URLs lose their credentials and query
strings, a list (steps, samples) stops at ``inspect_messages.MAX_ITEMS``, and every timestamp
is checked before Inspect's reader, which refuses a log with one malformed, can meet it. The
log marks its content untrusted (``viewer.trust_content``: false), so the viewer renders none
of it as Markdown, HTML or links: it shows the text as plain text, invisible characters made
visible.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from react_cli import __version__
from react_cli.core.errors import UsageError
from react_cli.core.records import Usage
from react_cli.eval.rows import MethodResult, Row
from react_cli.eval.summary import EvalStatus, ScoreKind, Summary
from react_cli.infra.credentials import redact_url
from react_cli.infra.untrusted import dump_json
from react_cli.share.evaldir import latest_rows
from react_cli.share.export import write_output
from react_cli.share.inspect_events import SampleEvents
from react_cli.share.inspect_messages import model_usage, trajectory
from react_cli.share.inspect_task import method_prompts, task_args, task_protocol
from react_cli.share.text import one_line, shown
from react_cli.traces.trace import slug

LOG_VERSION = 2
MAX_ID_CHARS = 200
_STATUS = {
    EvalStatus.FINISHED: "success",
    EvalStatus.RUNNING: "started",
    EvalStatus.INTERRUPTED: "cancelled",
    EvalStatus.STOPPED: "error",
    EvalStatus.FAILED: "error",
}
_PLAN_PARAMS = (
    "max_steps",
    "max_total_tokens",
    "max_parse_errors",
    "max_repeats",
    "max_tool_errors",
    "timeout_s",
    "force_answer",
    "samples",
    "sample_temperature",
    "hybrid_max_steps",
)
_GENERATE = ("temperature", "max_tokens")
_FACTS = ("api", "stream", "variant", "task")
Json = dict[str, Any]


@dataclass(frozen=True)
class InspectLog:
    """One method's log: the file name Inspect's viewer lists (it lists a ``.json`` log only
    when its name starts with a time) and the document."""

    name: str
    document: Json


def inspect_logs(directory: Path) -> list[InspectLog]:
    """The eval folder's logs, one per method in the order the eval ran them; UsageError
    when it is not an eval folder."""
    summary, rows, skipped = latest_rows(directory)
    rows.sort(key=lambda row: row.key)
    methods = list(dict.fromkeys([*summary.config.methods, *_methods_of(rows)]))
    return [_log(directory, summary, rows, skipped, method) for method in methods]


def export_inspect(directory: Path, output: Path) -> list[Path]:
    """Write the eval folder's logs: one to ``output``, or, for an eval of several methods
    (or when ``output`` is a folder), each in the folder ``output`` under the name Inspect's
    viewer lists; the paths written. UsageError when the folder is no eval or a log cannot be
    written."""
    logs = inspect_logs(directory)
    if len(logs) == 1 and not output.is_dir():
        write_output(output, dump_json(logs[0].document))
        return [output]
    if output.exists() and not output.is_dir():
        raise UsageError(
            f"{directory} holds {len(logs)} methods, one log each: -o names a folder, "
            f"and {output} is a file"
        )
    try:
        output.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot make the folder {output}: {exc.strerror or exc}") from None
    for log in logs:
        write_output(output / log.name, dump_json(log.document))
    return [output / log.name for log in logs]


def _methods_of(rows: list[Row]) -> list[str]:
    return [name for row in rows for name in row.results()]


def _log(
    directory: Path, summary: Summary, rows: list[Row], skipped: int, method: str
) -> InspectLog:
    config, dataset = summary.config, summary.dataset
    name = one_line(method, 60)
    stem = one_line(Path(dataset.path).stem, 60) or "dataset"
    protocol = task_protocol(config, method)
    task = "-".join([stem, name, *([protocol] if protocol else [])])
    created = _moment(summary.created) or datetime.now(timezone.utc)
    run_id = _id("run", summary.created, dataset.path)
    task_id = _id("task", run_id, method)
    model = f"openai/{one_line(config.model, 100)}"
    results = [(row, row.results()[method]) for row in rows if method in row.results()]
    run = config.run
    made = _Made(directory, summary.figures.kind, model, task_id, created, _picked(run, _GENERATE))
    samples = _samples(made, name, results)
    document: Json = {
        "version": LOG_VERSION,
        "status": _STATUS[summary.status],
        "eval": {
            "eval_id": _id("eval", task_id),
            "run_id": run_id,
            "created": created.isoformat(),
            "task": task,
            "task_id": task_id,
            "task_version": 0,
            "task_args": task_args(config, name, protocol, made.tools),
            "dataset": {
                "name": stem,
                "location": one_line(Path(dataset.path).name),
                "samples": len(samples),
                "sample_ids": [sample["id"] for sample in samples],
                "shuffled": dataset.selection.shuffle_seed is not None
                or dataset.selection.paper_subset,
            },
            "model": model,
            "model_generate_config": _picked(run, _GENERATE),
            **_base_url(run.get("base_url")),
            "config": {"epochs": 1},
            "packages": {"react-cli": __version__},
            "metadata": {"react_cli": _eval_facts(summary, name, skipped)},
            "viewer": {"trust_content": False},  # the viewer shows it all as plain text
            "scorers": [
                {
                    "name": metric,
                    "options": {},
                    "metrics": [{"name": "inspect_ai/mean", "options": {}}],
                    "metadata": {},
                }
                for metric in summary.figures.kind.metrics
            ],
        },
        "plan": {
            "name": "plan",
            "steps": [{"solver": name, "params": _picked(run, _PLAN_PARAMS)}],
            "config": _picked(run, _GENERATE),
        },
        "results": _results(summary, method, len(samples)),
        "stats": {
            **_times(summary),
            "model_usage": {model: model_usage(sum((_row_usage(r) for _, r in results), Usage()))},
        },
        "samples": samples,
    }
    stamp = created.astimezone(timezone.utc).strftime("%Y-%m-%dT%H-%M-%S+00-00")
    return InspectLog(f"{stamp}_{slug(task, 80)}_{task_id}.json", document)


def _id(*parts: str) -> str:
    """A stable id (the same export twice gives the same ids): 22 hex digits, like Inspect's."""
    return hashlib.sha256("\0".join(parts).encode("utf-8", "replace")).hexdigest()[:22]


def _moment(text: str) -> datetime | None:
    """A recorded ISO 8601 time (UTC when it names no zone); None for anything else."""
    try:
        moment = datetime.fromisoformat(text) if len(text) <= 64 else None
    except ValueError:
        return None
    if moment is not None and moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment


def _times(summary: Summary) -> Json:
    started, updated = _moment(summary.created), _moment(summary.updated)
    times = {"started_at": started, "completed_at": updated}
    return {key: moment.isoformat() for key, moment in times.items() if moment is not None}


def _picked(run: Json, keys: tuple[str, ...]) -> Json:
    """The recorded settings ``keys`` that are plain values (numbers, flags, one-line text)."""
    picked: Json = {}
    for key in keys:
        value = run.get(key)
        if isinstance(value, bool) or (isinstance(value, (int, float)) and abs(value) < 1e15):
            picked[key] = value
        elif isinstance(value, str):
            picked[key] = one_line(value)
    return picked


def _base_url(url: object) -> Json:
    return {"model_base_url": one_line(redact_url(url))} if isinstance(url, str) else {}


def _eval_facts(summary: Summary, method: str, skipped: int) -> Json:
    """What else react-cli records about the eval: its method and methods, prompt, wiki,
    status and the lines of ``results.jsonl`` that were no row."""
    config = summary.config
    wiki = config.run.get("wiki")
    if isinstance(wiki, str):
        wiki = f"zim:{Path(wiki[4:]).name}" if wiki.startswith("zim:") else redact_url(wiki)
    facts: Json = {
        "method": method,
        "methods": [one_line(name, 60) for name in config.methods],
        "prompt": method_prompts(config, method)[0],
        **_picked({**config.run, "wiki": wiki}, (*_FACTS, "wiki")),
        "concurrency": config.concurrency,
        "status": summary.status.value,
        "skipped_lines": skipped,
    }
    return facts


def _results(summary: Summary, method: str, count: int) -> Json:
    """The summary's figures of ``method``: its scores as Inspect metrics, the rest as
    metadata."""
    figures = summary.figures
    cells = dict(summary.methods).get(method)
    if cells is None:  # an eval of one method: the summary's own figures are its
        table = {key: value for key, value in figures.to_json().items() if key != "stop_reasons"}
    else:
        table = dict(cells)
    numbers = {
        key: value
        for key, value in table.items()
        if isinstance(value, (int, float)) and not isinstance(value, bool)
    }
    scores = [
        {
            "name": metric,
            "scorer": metric,
            "scored_samples": count,
            "unscored_samples": 0,
            "params": {},
            "metrics": (
                {"mean": {"name": "mean", "value": numbers[metric], "params": {}}}
                if metric in numbers
                else {}
            ),
        }
        for metric in figures.kind.metrics
    ]
    others = {key: value for key, value in numbers.items() if key not in figures.kind.metrics}
    return {
        "total_samples": count,
        "completed_samples": count,
        "scores": scores,
        "metadata": {"react_cli": others},
    }


@dataclass
class _Made:
    """What every sample of a log is made with, and the tools its traces' model was told of
    (the first trace's that names any)."""

    directory: Path
    kind: ScoreKind
    model: str
    task_id: str
    created: datetime
    config: Json
    tools: list[str] = field(default_factory=list)


def _samples(made: _Made, method: str, results: list[tuple[Row, MethodResult]]) -> list[Json]:
    """The samples, each with the dataset's id of its question where every question has one
    of its own (cleaned, at most :data:`MAX_ID_CHARS`), else with its dataset index."""
    named = [found for row, _ in results if (found := _sample_id(row.id)) is not None]
    unique = len(named) == len(results) and len(set(named)) == len(named)
    ids = named if unique else [row.index for row, _ in results]
    return [
        _sample(made, method, row, result, sample_id)
        for (row, result), sample_id in zip(results, ids, strict=True)
    ]


def _sample_id(value: str | int | None) -> str | int | None:
    if isinstance(value, str):
        cleaned = one_line(value, MAX_ID_CHARS)
        return cleaned if cleaned and len(cleaned) <= MAX_ID_CHARS else None
    return value


def _sample(made: _Made, method: str, row: Row, result: MethodResult, sample_id: str | int) -> Json:
    """One question's sample: its messages, and its transcript's events (from the trace's
    start, or the eval's), their message pool the messages (``events_data``)."""
    model = made.model
    answer = "" if result.answer is None else shown(result.answer)
    golds = [shown(gold) for gold in row.golds]
    usage = model_usage(_row_usage(result))
    ran = trajectory(made.directory, row.question, result.trace)
    messages = ran.messages
    if not made.tools and ran.tools:
        made.tools = [one_line(spec.name, 100) for spec in ran.tools]
    started = (_moment(ran.created) if ran.created else None) or made.created
    scores = _scores(made.kind, result, answer, golds)
    sample: Json = {
        "id": sample_id,
        "epoch": 1,
        "input": shown(row.question),
        "target": golds[0] if len(golds) == 1 else golds,
        "messages": messages,
        "output": {
            "model": model,
            "choices": [
                {"message": {"role": "assistant", "content": answer}, "stop_reason": "stop"}
            ],
            "completion": answer,
            "usage": usage,
        },
        "scores": scores,
        "metadata": _sample_facts(row, result, ran.notes),
        "model_usage": {model: usage},
        "total_time": result.latency_s,
        "working_time": result.latency_s,
    }
    events = SampleEvents(_id("events", made.task_id, str(sample_id)), started, model, made.config)
    sample["events"] = events.run(sample, method, ran, scores)
    sample["events_data"] = {"messages": messages, "calls": []}
    if result.failed:
        message = shown(result.error or result.stop_reason.value)
        sample["error"] = {"message": message, "traceback": "", "traceback_ansi": ""}
    return sample


def _scores(kind: ScoreKind, result: MethodResult, answer: str, golds: list[str]) -> Json:
    explanation = "gold: " + " / ".join(golds)
    if kind is ScoreKind.ACCURACY:
        label = result.label.value if result.label is not None else None
        read = answer if label is None else shown(label)
        return {"accuracy": {"value": result.em, "answer": read, "explanation": explanation}}
    return {
        "em": {"value": result.em, "answer": answer, "explanation": explanation},
        "f1": {"value": result.f1, "answer": answer, "explanation": explanation},
    }


def _sample_facts(row: Row, result: MethodResult, notes: Json) -> Json:
    facts: Json = {
        "index": row.index,
        "stop_reason": result.stop_reason.value,
        "error": None if result.error is None else shown(result.error),
        "branch": None if result.branch is None else one_line(result.branch),
        "steps": result.steps,
        "calls": result.calls,
        "tokens": result.tokens,
        "tokens_estimated": result.usage is not None and result.usage.estimated,
        "cost": result.cost,
        "refused_calls": result.refused_calls,
        "label": None
        if result.label is None or result.label.value is None
        else one_line(result.label.value),
        "trace": None if result.trace is None else one_line(result.trace),
        **notes,
    }
    return {key: value for key, value in facts.items() if value is not None}


def _row_usage(result: MethodResult) -> Usage:
    """The result's usage (rows before usage was recorded: its tokens, as prompt tokens)."""
    return result.usage if result.usage is not None else Usage(result.tokens, 0)


_LISTED = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}")


def viewer_lists(path: Path) -> bool:
    """Whether ``inspect view`` lists the log at ``path`` (its name starts with a time)."""
    return _LISTED.match(path.name) is not None
