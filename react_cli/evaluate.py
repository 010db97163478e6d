"""Batch evaluation: run many questions at once, score them, and keep every result on disk.

The output folder holds ``traces/`` (one trace per question), ``results.jsonl`` (one row per
finished question, appended and flushed as it finishes) and ``summary.json`` (rewritten
atomically after every row), so a crash or Ctrl-C loses at most the questions in flight.

Questions run on ``concurrency`` worker threads, each with its own model client; they share one
Wikipedia backend (one connection pool) behind a semaphore that allows at most
``wiki_concurrency`` requests to the wiki host at a time. Each question gets its own stateful
``WikiSession`` (Lookup state is per question).
"""

from __future__ import annotations

import queue
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from react_cli import interrupts
from react_cli.config import Settings
from react_cli.datasets import Dataset, Example
from react_cli.deadline import Deadline
from react_cli.errors import LLMConfigError, ReactCliError, StoreError, UsageError
from react_cli.evalfiles import RowFile, lock_folder, read_rows, read_summary
from react_cli.prompts import PromptTemplate
from react_cli.records import Completion, Model, TextSink, Usage
from react_cli.scoring import best_scores, fever_label
from react_cli.trace import now_utc, slug, write_atomic, write_json_atomic
from react_cli.untrusted import dump_json
from react_cli.wiki.base import SearchResult, WikiBackend, WikiSession
from react_cli.wiring import run_config, run_question

SUMMARY_VERSION = 1
RESULTS = "results.jsonl"
SUMMARY = "summary.json"
TRACES = "traces"
HARD_FAILURES = frozenset({"llm_error", "error"})
"""Stop reasons of questions that failed rather than were answered badly; resume retries them."""
MAX_CONSECUTIVE_FAILURES = 5
_POLL_S = 0.2
T = TypeVar("T")


# Settings a run's summary records (its "config"), by the name ``config.Settings`` gives them.
_RECORDED_SETTINGS = {
    "model": "model",
    "base_url": "base_url",
    "api": "api",
    "temperature": "temperature",
    "max_steps": "max_steps",
    "max_tokens": "max_tokens",
    "max_total_tokens": "max_total_tokens",
    "max_parse_errors": "max_parse_errors",
    "max_repeats": "max_repeats",
    "max_tool_errors": "max_tool_errors",
    "stream": "stream",
    "timeout_s": "run_timeout_s",
    "force_answer": "force_answer",
    "wiki": "wiki",
    "variant": "variant",
}
SELECTION = ("offset", "limit", "shuffle_seed", "paper_subset")


def earlier_run(directory: Path) -> dict[str, Any]:
    """The summary of the run ``--resume DIR`` continues; UsageError if DIR holds none."""
    if not directory.is_dir():
        raise UsageError(f"--resume {directory}: no such folder")
    summary = read_summary(directory / SUMMARY)
    if summary is None:
        raise UsageError(f"--resume {directory}: no {SUMMARY} there, not an eval folder")
    if not isinstance(summary.get("dataset"), dict):
        raise UsageError(f"--resume {directory}: {SUMMARY} is not an eval summary")
    return summary


def recorded_settings(summary: dict[str, Any]) -> dict[str, Any]:
    """The settings an earlier run was made with, as ``config.resolve`` flags."""
    config = summary.get("config")
    config = config if isinstance(config, dict) else {}
    settings = {
        name: config[key] for key, name in _RECORDED_SETTINGS.items() if config.get(key) is not None
    }
    prompt = config.get("prompt")
    if isinstance(prompt, dict) and isinstance(prompt.get("name"), str):
        settings["prompt"] = prompt["name"]
    return settings


def resume_command(directory: Path) -> str:
    """The command that continues a run, as the user can paste it."""
    import shlex

    return f"react-cli eval --resume {shlex.quote(str(directory))}"


class EvalStopped(KeyboardInterrupt):
    """Raised in a worker's next model call once the run is stopping; the loop then ends the
    question as ``interrupted`` (and its row is not kept)."""


class PoliteBackend:
    """A ``WikiBackend`` that lets at most ``limit`` searches (hence requests) run at once."""

    def __init__(self, backend: WikiBackend, limit: int) -> None:
        self._backend = backend
        self._slots = threading.BoundedSemaphore(limit)

    def search(self, entity: str, *, deadline: Deadline) -> SearchResult:
        with self._slots:
            return self._backend.search(entity, deadline=deadline)


class StopAwareModel:
    """A ``Model`` that refuses new calls once ``stop`` is set."""

    def __init__(self, model: Model, stop: threading.Event) -> None:
        self._model = model
        self._stop = stop

    def complete(
        self, prompt: str, stop: list[str], *, deadline: Deadline, on_text: TextSink | None = None
    ) -> Completion:
        if self._stop.is_set():
            raise EvalStopped
        return self._model.complete(prompt, stop, deadline=deadline, on_text=on_text)


@dataclass
class Tally:
    """Running totals over the rows of ``results.jsonl``."""

    n: int = 0
    em: float = 0.0
    f1: float = 0.0
    steps: int = 0
    tokens: int = 0
    latency_s: float = 0.0
    failed: int = 0
    estimated: bool = False  # some row's tokens are estimates (the endpoint reported none)
    cost: float | None = None  # None until a row has one (prices are configured)
    stop_reasons: Counter[str] = field(default_factory=Counter)

    def add(self, row: dict[str, Any]) -> None:
        self.n += 1
        self.em += row["em"]
        self.f1 += row["f1"]
        self.steps += row["steps"]
        self.tokens += row["tokens"]
        self.latency_s += row["latency_s"]
        self.failed += row["stop_reason"] in HARD_FAILURES
        usage = row.get("usage")  # rows written before usage was recorded have none
        self.estimated |= isinstance(usage, dict) and usage.get("estimated") is True
        cost = row.get("cost")
        if isinstance(cost, (int, float)) and not isinstance(cost, bool):
            self.cost = (self.cost or 0.0) + cost
        self.stop_reasons[row["stop_reason"]] += 1

    def metrics(self, fever: bool) -> dict[str, Any]:
        """Scores as fractions from 0 to 1, averages per question, counts per stop reason;
        scores and averages are None (not 0) before any question has finished."""

        def mean(total: float, digits: int) -> float | None:
            return round(total / self.n, digits) if self.n else None

        scores = {"accuracy": self.em} if fever else {"em": self.em, "f1": self.f1}
        return {
            "n": self.n,
            **{key: mean(value, 6) for key, value in scores.items()},
            "failed": self.failed,
            "avg_steps": mean(self.steps, 4),
            "avg_tokens": mean(self.tokens, 2),
            "avg_latency_s": mean(self.latency_s, 4),
            "total_tokens": self.tokens,
            "tokens_estimated": self.estimated,
            "total_cost": None if self.cost is None else round(self.cost, 6),
            "stop_reasons": dict(sorted(self.stop_reasons.items())),
        }


def row_key(index: int, question: str) -> tuple[int, str]:
    """What identifies a question across runs: its index in the dataset and its text."""
    return index, question


def prepare_out_dir(directory: Path, resume: bool) -> None:
    """Create the folder; refuse one holding anything unless it is an earlier run resumed."""
    if resume:
        if not directory.is_dir():
            raise UsageError(f"--resume {directory}: no such folder")
        return
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"--out {directory} is a file, not a folder")
    if directory.is_dir() and any(directory.iterdir()):
        if (directory / RESULTS).exists() or (directory / SUMMARY).exists():
            raise UsageError(
                f"{directory} holds an earlier run: continue it with: {resume_command(directory)}"
            )
        raise UsageError(f"--out {directory} is not empty")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create {directory}: {exc.strerror or exc}") from None


class ResultsStore:
    """``results.jsonl`` and ``summary.json`` of one output folder; safe to use from threads.

    It holds the folder's lock from creation to :meth:`close`. The summary always counts the
    rows on disk: a row whose summary cannot be written is taken back, and once a write failed
    (StoreError) the store takes no more rows.
    """

    def __init__(
        self,
        directory: Path,
        header: dict[str, Any],
        fever: bool,
        dataset_keys: set[tuple[int, str]] | None = None,
    ) -> None:
        self.directory = directory
        self.fever = fever
        self.tally = Tally()
        self.done: set[tuple[int, str]] = set()
        self._header = header
        self._lock = threading.Lock()
        self._closed = False
        self._started = time.monotonic()
        self._created = now_utc().isoformat()
        self._folder_lock = lock_folder(directory)
        try:
            self.torn_line = self._open(dataset_keys)
        except BaseException:
            self._folder_lock.close()
            raise

    def _open(self, dataset_keys: set[tuple[int, str]] | None) -> bool:
        """Load and check earlier rows, rewrite them, start the summary; True if a torn last
        line was dropped."""
        self._results = self.directory / RESULTS
        rows, torn = read_rows(self._results)
        rows = [row for row in rows if row["stop_reason"] not in HARD_FAILURES]
        previous = read_summary(self.directory / SUMMARY)
        if previous is not None:
            self._check_same_run(previous)
            created = previous.get("created")
            self._created = created if isinstance(created, str) else self._created
        if dataset_keys is not None:
            self._check_same_dataset(rows, dataset_keys)
        # Rewritten without failed or torn rows, so failures are retried and appends are clean.
        text = "".join(dump_json(row) + "\n" for row in rows)
        _written(self._results, lambda: write_atomic(self._results, text))
        for row in rows:
            self.tally.add(row)
            self.done.add(row_key(row["index"], row["question"]))
        _written(self.directory / SUMMARY, lambda: self._write_summary("running"))
        self._rows = _written(self._results, lambda: RowFile(self._results))
        return torn

    def _check_same_run(self, previous: dict[str, Any]) -> None:
        """Resuming with another model, prompt or dataset format would mix two experiments."""
        old_config, new_config = _object(previous.get("config")), self._header["config"]
        checks = [
            ("model", old_config.get("model"), new_config["model"]),
            (
                "prompt",
                _object(old_config.get("prompt")).get("sha256"),
                new_config["prompt"]["sha256"],
            ),
            (
                "dataset format",
                _object(previous.get("dataset")).get("format"),
                self._header["dataset"]["format"],
            ),
        ]
        for what, old, new in checks:
            if old is not None and old != new:
                raise UsageError(
                    f"{self.directory} was run with another {what} ({old!s:.60} ≠ {new!s:.60}); "
                    "resume with the same settings or choose a new --out"
                )

    def _check_same_dataset(
        self, rows: list[dict[str, Any]], dataset_keys: set[tuple[int, str]]
    ) -> None:
        """Rows of another dataset would be counted in this one's scores and never rerun."""
        keys = [row_key(row["index"], row["question"]) for row in rows]
        strays = [index for index, question in keys if (index, question) not in dataset_keys]
        if strays:
            raise UsageError(
                f"{self.directory} holds results of another dataset (its row {min(strays)} "
                "is not this dataset's); resume with the same dataset or choose a new --out"
            )

    def add(self, row: dict[str, Any]) -> dict[str, Any] | None:
        """Append one row and rewrite the summary; None once the store is closed; StoreError
        (the row not kept) when the disk refuses either."""
        with self._lock:
            if self._closed:
                return None
            before = replace(self.tally, stop_reasons=Counter(self.tally.stop_reasons))
            self.tally.add(row)
            try:
                _written(self._results, lambda: self._rows.append(dump_json(row) + "\n"))
                try:
                    summary = _written(
                        self.directory / SUMMARY, lambda: self._write_summary("running")
                    )
                except StoreError:
                    self._rows.undo()  # the summary on disk must count the rows on disk
                    raise
            except StoreError:
                self.tally = before
                self._closed = True
                raise
            self.done.add(row_key(row["index"], row["question"]))
            return summary

    def close(self, status: str) -> dict[str, Any]:
        """Write the final summary and let the folder go; rows arriving later are dropped."""
        with self._lock:
            self._closed = True
            try:
                self._rows.close()
                return _written(self.directory / SUMMARY, lambda: self._write_summary(status))
            finally:
                self._folder_lock.close()

    def _write_summary(self, status: str) -> dict[str, Any]:
        summary = self.summary(status)
        write_json_atomic(self.directory / SUMMARY, summary)
        return summary

    def summary(self, status: str) -> dict[str, Any]:
        """The summary of the rows stored so far."""
        summary = {
            "version": SUMMARY_VERSION,
            "status": status,
            **self._header,
            **self.tally.metrics(self.fever),
            "created": self._created,
            "updated": now_utc().isoformat(),
            "wall_s": round(time.monotonic() - self._started, 3),
        }
        # Keep the header's order: dataset first, config last.
        summary["config"] = summary.pop("config")
        return summary


def _written(path: Path, write: Callable[[], T]) -> T:
    """``write()``, with an OSError (disk full, file-size limit) as a StoreError naming ``path``."""
    try:
        return write()
    except OSError as exc:
        raise StoreError(f"{path}: cannot write ({exc.strerror or exc})") from None


def _object(value: Any) -> dict[str, Any]:
    """A JSON object read from a summary, or an empty one when it is anything else."""
    return value if isinstance(value, dict) else {}


class EvalObserver:
    """Progress of a batch, called from the main thread only; the default does nothing."""

    def started(self, total: int, done: int, summary: dict[str, Any]) -> None: ...

    def result(self, row: dict[str, Any], summary: dict[str, Any]) -> None: ...

    def finished(self, summary: dict[str, Any]) -> None: ...


@dataclass
class EvalOutcome:
    summary: dict[str, Any]
    status: str  # finished, interrupted, stopped (failures in a row, or a configuration
    # error), failed (the store could not be written)
    last_error: str | None = None
    max_tokens_reached: int = 0  # questions with a reply stopped at max_tokens before its action
    config_error: LLMConfigError | None = None  # the endpoint refused the key or the model


@dataclass
class Evaluation:
    """Everything one ``eval`` invocation needs."""

    dataset: Dataset
    examples: list[Example]
    selection: dict[str, Any]
    settings: Settings
    template: PromptTemplate
    out_dir: Path
    concurrency: int = 4
    wiki_concurrency: int = 2

    def header(self) -> dict[str, Any]:
        config = run_config(self.settings, self.template).to_json()
        config.update(concurrency=self.concurrency, wiki_concurrency=self.wiki_concurrency)
        dataset = {
            "path": str(self.dataset.path.resolve()),
            "format": self.dataset.format,
            "rows": len(self.dataset.examples),
            **self.selection,
        }
        return {"dataset": dataset, "config": config}


def score_row(
    example: Example, answer: str | None, fever: bool
) -> tuple[float, float, dict[str, Any]]:
    """(EM, F1, extra row fields). FEVER: EM = F1 = label match."""
    if fever:
        label = fever_label(answer)
        correct = float(label is not None and label == example.golds[0])
        return correct, correct, {"label": label}
    em, f1 = best_scores(answer, list(example.golds))
    return em, f1, {}


def trace_name(example: Example) -> str:
    return f"{TRACES}/{example.index:05d}-{slug(example.question)}.json"


class _Run:
    """One invocation's threads and shared state."""

    def __init__(
        self,
        evaluation: Evaluation,
        store: ResultsStore,
        backend: WikiBackend,
    ) -> None:
        self.evaluation = evaluation
        self.store = store
        self.backend = PoliteBackend(backend, evaluation.wiki_concurrency)
        self.fever = evaluation.dataset.format == "fever"
        self.stop = threading.Event()
        self.gave_up = False
        self.failure: str | None = None  # why the run could not go on (the store failed)
        self.failures_in_a_row = 0
        self.last_error: str | None = None
        self.max_tokens_reached = 0
        self.config_error: LLMConfigError | None = None
        self._lock = threading.Lock()
        self.todo: queue.SimpleQueue[Example] = queue.SimpleQueue()
        self.events: queue.SimpleQueue[tuple[dict[str, Any], dict[str, Any]] | None] = (
            queue.SimpleQueue()
        )

    def drive(self, models: list[Model], observer: EvalObserver) -> tuple[str, str | None]:
        """Start one worker per model and report rows until all end; (status, last failure)."""
        threads = [
            threading.Thread(target=self.work, args=(model,), daemon=True, name=f"eval-{i}")
            for i, model in enumerate(models)
        ]
        for thread in threads:
            thread.start()
        running = len(threads)
        while running:
            try:
                event = self.events.get(timeout=_POLL_S)
            except queue.Empty:
                continue
            if event is None:
                running -= 1
            else:
                observer.result(*event)
            if self.gave_up or self.failure:
                self._report_queued(observer)
                break
        if self.failure:
            return "failed", self.failure
        return ("stopped" if self.gave_up else "finished"), self.last_error

    def _report_queued(self, observer: EvalObserver) -> None:
        """Report the rows stored before the run stopped that are still queued."""
        while True:
            try:
                event = self.events.get_nowait()
            except queue.Empty:
                return
            if event is not None:
                observer.result(*event)

    def record(self, row: dict[str, Any]) -> dict[str, Any] | None:
        """Store a row; stop the run after too many hard failures in a row (endpoint down)."""
        with self._lock:
            summary = self.store.add(row)
            if summary is not None:  # reported before a stop below, so drive() always sees it
                self.events.put((row, summary))
            if row["stop_reason"] in HARD_FAILURES:
                self.failures_in_a_row += 1
                self.last_error = row["error"]
            else:
                self.failures_in_a_row = 0
            if self.failures_in_a_row >= MAX_CONSECUTIVE_FAILURES or self.config_error:
                self.gave_up = True
                self.stop.set()
        return summary

    def work(self, model: Model) -> None:
        """A worker thread: run questions until none are left or the run stops."""
        guarded = StopAwareModel(model, self.stop)
        try:
            while not self.stop.is_set():
                try:
                    example = self.todo.get_nowait()
                except queue.Empty:
                    return
                row = self.run_one(example, guarded)
                if row is None:
                    continue  # the run stopped under this question; the loop ends here
                if self.record(row) is None:
                    return
        except Exception as exc:  # the store refused the row (disk full), or a bug: stop here
            with self._lock:
                self.failure = self.failure or _describe(exc)
                self.stop.set()
        finally:
            self.events.put(None)

    def run_one(self, example: Example, model: Model) -> dict[str, Any] | None:
        """Run, trace and score one question; None when the run stopped under it."""
        evaluation = self.evaluation
        name = trace_name(example)
        tools = WikiSession(
            self.backend, max_observation_chars=evaluation.settings.max_observation_chars
        )
        started = time.monotonic()
        row: dict[str, Any] = {"index": example.index, "id": example.id}
        row.update(question=example.question, gold=_gold(example))
        try:
            outcome = run_question(
                example.question,
                settings=evaluation.settings,
                template=evaluation.template,
                model=model,
                tools=tools,
                trace_path=evaluation.out_dir / name,
            )
            result = outcome.run
            if result.stop_reason == "interrupted":
                return None
            em, f1, extra = score_row(example, result.answer, self.fever)
        except Exception as exc:  # one question's crash is its row, never the batch's end
            row.update(answer=None, em=0.0, f1=0.0, stop_reason="error", error=_describe(exc))
            row.update(steps=0, tokens=0, usage=Usage().to_json(), cost=None)
            row.update(latency_s=round(time.monotonic() - started, 4), trace=None)
            return row
        with self._lock:
            self.max_tokens_reached += result.max_tokens_reached
            if isinstance(result.failure, LLMConfigError) and self.config_error is None:
                self.config_error = result.failure  # no other question can do better: stop
        row.update(answer=result.answer, **extra, em=em, f1=round(f1, 6))
        row.update(stop_reason=result.stop_reason, error=result.error, steps=len(result.steps))
        row.update(tokens=result.usage.total_tokens, usage=result.usage.to_json())
        prices = evaluation.settings.prices()
        row["cost"] = None if prices is None else prices.cost(result.usage).to_json()["amount"]
        row.update(latency_s=round(result.duration_s, 4))
        row["trace"] = name
        return row


def _describe(exc: Exception) -> str:
    return str(exc) if isinstance(exc, ReactCliError) else f"{type(exc).__name__}: {exc}"


def _gold(example: Example) -> str | list[str]:
    return example.golds[0] if len(example.golds) == 1 else list(example.golds)


def run_evaluation(
    evaluation: Evaluation,
    *,
    model_factory: Callable[[], Model],
    backend: WikiBackend,
    observer: EvalObserver | None = None,
    warn: Callable[[str], None] | None = None,
) -> EvalOutcome:
    """Run every selected question not already in ``results.jsonl``; see the module docstring.

    Ctrl-C (KeyboardInterrupt in the calling thread) stops the run: rows written so far stay,
    questions in flight are dropped, and the outcome's status is ``interrupted``; a second
    Ctrl-C waits for the final summary. When ``results.jsonl`` or ``summary.json`` cannot be
    written, the run stops with status ``failed`` and the store's error as ``last_error``.
    ``warn`` hears about a torn last row dropped from an earlier run.
    """
    observer = observer or EvalObserver()
    fever = evaluation.dataset.format == "fever"
    keys = {row_key(e.index, e.question) for e in evaluation.dataset.examples}
    with interrupts.guard():
        store = ResultsStore(evaluation.out_dir, evaluation.header(), fever, dataset_keys=keys)
        status, last_error, run = "failed", None, None
        try:
            if store.torn_line and warn is not None:
                cut = "its last row was cut short (crash or full disk); that question runs again"
                warn(f"{evaluation.out_dir / RESULTS}: {cut}")
            run = _Run(evaluation, store, backend)
            done = store.done
            pending = [e for e in evaluation.examples if row_key(e.index, e.question) not in done]
            workers = max(1, min(evaluation.concurrency, len(pending)))
            models = [model_factory() for _ in range(workers)]
            for example in pending:
                run.todo.put(example)
            total = len(evaluation.examples)
            observer.started(total, total - len(pending), store.tally.metrics(fever))
            status, last_error = run.drive(models, observer)
        except KeyboardInterrupt:
            status = "interrupted"
        finally:
            interrupts.hold()  # the final summary gets written whatever the user presses
            if run is not None:
                run.stop.set()
            summary = _final_summary(store, status)
    observer.finished(summary)
    return EvalOutcome(summary, status, last_error, run.max_tokens_reached, run.config_error)


def _final_summary(store: ResultsStore, status: str) -> dict[str, Any]:
    """Close the store; when the run failed on the disk already, that first error is the one
    reported, and the summary is what the file would say."""
    try:
        return store.close(status)
    except StoreError:
        if status != "failed":
            raise
        return store.summary(status)
