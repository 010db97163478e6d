"""An eval folder's results and summary, kept in step while questions finish, and resumed.

``results.jsonl`` gets one row per finished question, appended as it finishes; ``summary.json``
is rewritten atomically after every row, so a crash or Ctrl-C loses at most the questions in
flight. Resuming keeps the rows of the same dataset, model, prompt and format, drops failed
ones (they run again) and a torn last line.
"""

from __future__ import annotations

import shlex
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, TypeVar

from react_cli.datasets import Format
from react_cli.errors import StoreError, UsageError
from react_cli.eval.config import EvalConfig
from react_cli.eval.files import (
    LOCK,
    RESULTS,
    SUMMARY,
    RowFile,
    lock_folder,
    read_rows,
    read_summary,
)
from react_cli.eval.rows import Row
from react_cli.eval.summary import DatasetRef, EvalStatus, Figures, ScoreKind, Summary
from react_cli.records import StopReason
from react_cli.trace import now_utc, write_atomic, write_json_atomic
from react_cli.untrusted import dump_json

T = TypeVar("T")


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
    estimated: bool = False
    cost: float | None = None
    stop_reasons: Counter[StopReason] = field(default_factory=Counter)

    def add(self, row: Row) -> None:
        self.n += 1
        self.em += row.em
        self.f1 += row.f1
        self.steps += row.steps
        self.tokens += row.tokens
        self.latency_s += row.latency_s
        self.failed += row.failed
        self.estimated |= row.usage is not None and row.usage.estimated
        if row.cost is not None:
            self.cost = (self.cost or 0.0) + row.cost
        self.stop_reasons[row.stop_reason] += 1

    def figures(self, kind: ScoreKind) -> Figures:
        def mean(total: float, digits: int) -> float | None:
            return round(total / self.n, digits) if self.n else None

        return Figures(
            kind=kind,
            n=self.n,
            em=mean(self.em, 6),
            f1=None if kind is ScoreKind.ACCURACY else mean(self.f1, 6),
            failed=self.failed,
            avg_steps=mean(self.steps, 4),
            avg_tokens=mean(self.tokens, 2),
            avg_latency_s=mean(self.latency_s, 4),
            total_tokens=self.tokens,
            tokens_estimated=self.estimated,
            total_cost=None if self.cost is None else round(self.cost, 6),
            stop_reasons=dict(sorted(self.stop_reasons.items())),
        )


def resume_command(folder: Path) -> str:
    """The command that continues an eval, as the user can paste it."""
    return f"react-cli eval --resume {shlex.quote(str(folder))}"


def claim_folder(folder: Path, resuming: bool) -> IO[bytes]:
    """Lock ``folder`` for this eval (the returned file holds the lock); UsageError when a new
    eval's folder holds anything but a lock file, or is a file."""
    if resuming:
        return lock_folder(folder)
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"--out {folder} is a file, not a folder")
    _check_empty(folder)  # first without the lock: a folder that is not ours stays untouched
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create {folder}: {exc.strerror or exc}") from None
    lock = lock_folder(folder)
    try:
        _check_empty(folder)  # again under the lock: another eval may have filled it meanwhile
    except BaseException:
        lock.close()
        raise
    return lock


def _check_empty(folder: Path) -> None:
    """UsageError unless ``folder`` is missing or holds nothing but a lock file."""
    names = {path.name for path in folder.iterdir()} - {LOCK} if folder.is_dir() else set()
    if RESULTS in names or SUMMARY in names:
        raise UsageError(
            f"{folder} holds an earlier run: continue it with: {resume_command(folder)}"
        )
    if names:
        raise UsageError(f"--out {folder} is not empty")


class ResultsStore:
    """``results.jsonl`` and ``summary.json`` of one eval folder; safe to use from threads.

    It holds the folder's lock (from :func:`claim_folder`) until :meth:`close`, or until its
    creation fails. The summary always counts the
    rows on disk: a row whose summary cannot be written is taken back, and once a write failed
    (StoreError) the store takes no more rows.
    """

    def __init__(
        self,
        folder: Path,
        lock: IO[bytes],
        dataset: DatasetRef,
        config: EvalConfig,
        dataset_keys: set[tuple[int, str]],
    ) -> None:
        self.folder = folder
        self.tally = Tally()
        self.done: set[tuple[int, str]] = set()
        self._dataset, self._config, self._dataset_keys = dataset, config, dataset_keys
        self._kind = ScoreKind.ACCURACY if dataset.format is Format.FEVER else ScoreKind.EM_F1
        self._lock = threading.Lock()
        self._closed = False
        self._started = time.monotonic()
        self._created = now_utc().isoformat()
        self._folder_lock = lock
        try:
            self.torn = self._open()
        except BaseException:
            self._folder_lock.close()
            raise

    def _open(self) -> bool:
        """Load and check earlier rows, rewrite them, start the summary; True if a torn last
        line was dropped."""
        results = self.folder / RESULTS
        read = read_rows(results)
        kept = [
            (row, line) for row, line in zip(read.rows, read.lines, strict=True) if not row.failed
        ]
        previous = read_summary(self.folder / SUMMARY)
        if previous is not None:
            self._check_same_eval(previous)
            self._created = previous.created
        self._check_same_dataset([row for row, _ in kept])
        # Rewritten without failed or torn rows, so failures run again and appends are clean.
        text = "".join(line + "\n" for _, line in kept)
        _written(results, lambda: write_atomic(results, text))
        for row, _ in kept:
            self.tally.add(row)
            self.done.add(row.key)
        _written(self.folder / SUMMARY, lambda: self._write_summary(EvalStatus.RUNNING))
        self._rows = _written(results, lambda: RowFile(results))
        return read.torn

    def _check_same_eval(self, previous: Summary) -> None:
        """Resuming with another model, prompt or dataset format would mix two experiments."""
        old, new = previous.config, self._config
        checks = [
            ("model", old.model, new.model),
            ("prompt", old.prompt_sha256, new.prompt_sha256),
            ("dataset format", previous.dataset.format, self._dataset.format),
        ]
        for what, before, now in checks:
            if before is not None and before != now:
                raise UsageError(
                    f"{self.folder} was run with another {what} ({before!s:.60} ≠ {now!s:.60}); "
                    "resume with the same settings or choose a new --out"
                )

    def _check_same_dataset(self, rows: list[Row]) -> None:
        """Rows of another dataset would be counted in this one's scores and never run again."""
        strays = [row.index for row in rows if row.key not in self._dataset_keys]
        if strays:
            raise UsageError(
                f"{self.folder} holds results of another dataset (its row {min(strays)} "
                "is not this dataset's); resume with the same dataset or choose a new --out"
            )

    def add(self, row: Row) -> Summary | None:
        """Append one row and rewrite the summary; None once the store is closed; StoreError
        (the row not kept) when the disk refuses either."""
        with self._lock:
            if self._closed:
                return None
            before = replace(self.tally, stop_reasons=Counter(self.tally.stop_reasons))
            self.tally.add(row)
            try:
                _written(self._rows.path, lambda: self._rows.append(_line(row)))
                try:
                    summary = _written(
                        self.folder / SUMMARY, lambda: self._write_summary(EvalStatus.RUNNING)
                    )
                except StoreError:
                    self._rows.undo()  # the summary on disk must count the rows on disk
                    raise
            except StoreError:
                self.tally = before
                self._closed = True
                raise
            self.done.add(row.key)
            return summary

    def close(self, status: EvalStatus) -> Summary:
        """Write the final summary and let the folder go; rows arriving later are dropped."""
        with self._lock:
            self._closed = True
            try:
                self._rows.close()
                return _written(self.folder / SUMMARY, lambda: self._write_summary(status))
            finally:
                self._folder_lock.close()

    def _write_summary(self, status: EvalStatus) -> Summary:
        summary = self.summary(status)
        write_json_atomic(self.folder / SUMMARY, summary.to_json())
        return summary

    def summary(self, status: EvalStatus) -> Summary:
        """The summary of the rows stored so far."""
        return Summary(
            status=status,
            dataset=self._dataset,
            figures=self.tally.figures(self._kind),
            created=self._created,
            updated=now_utc().isoformat(),
            wall_s=round(time.monotonic() - self._started, 3),
            config=self._config,
        )


def _line(row: Row) -> str:
    return dump_json(row.to_json()) + "\n"


def _written(path: Path, write: Callable[[], T]) -> T:
    """``write()``, with an OSError (disk full, file-size limit) as a StoreError naming ``path``."""
    try:
        return write()
    except OSError as exc:
        raise StoreError(f"{path}: cannot write ({exc.strerror or exc})") from None
