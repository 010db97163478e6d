"""An eval folder's results and summary, kept in step while questions finish, and resumed.

``results.jsonl`` gets one row per finished question, appended as it finishes; ``summary.json``
is rewritten atomically after every row, so a crash or Ctrl-C loses at most the questions in
flight. Resuming keeps the rows of the same dataset, model, prompts and format, drops rows
whose every method failed (they run again) and a torn last line. A question whose row lacks a
method (or holds its failure) runs that method again; its new row, holding all of them, is
appended and replaces the earlier one (the last row of a question counts; resuming rewrites
the file without the ones replaced).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, TypeVar

from react_cli.core.errors import StoreError, UsageError
from react_cli.display.terminal import shell_word
from react_cli.eval.config import EvalConfig, tools_differ
from react_cli.eval.datasets import Format
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
from react_cli.eval.summary import DatasetRef, EvalStatus, Methods, ScoreKind, Summary
from react_cli.eval.tally import Tally
from react_cli.infra.files import write_atomic, write_json_atomic
from react_cli.infra.untrusted import dump_json
from react_cli.traces.trace import now_utc

T = TypeVar("T")


def resume_command(folder: Path) -> str:
    """The command that continues an eval, as the user can paste it."""
    return f"react-cli eval --resume {shell_word(str(folder))}"


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
        levels: Callable[[], dict[str, dict[str, Any]]] | None = None,
    ) -> None:
        """``levels`` tells the summary how many requests each endpoint gets at once."""
        self.folder = folder
        self._levels = levels
        self.tally = Tally()
        self.methods = {name: Tally() for name in config.methods}
        self.calls_made = 0
        self.rows: dict[tuple[int, str], Row] = {}  # the last row of each question
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
        last = {row.key: (row, line) for row, line in zip(read.rows, read.lines, strict=True)}
        kept = [(row, line) for row, line in last.values() if not _all_failed(row)]
        previous = read_summary(self.folder / SUMMARY)
        if previous is not None:
            check_same_eval(self.folder, previous, self._config, self._dataset)
            self._created = previous.created
        self._check_same_dataset([row for row, _ in kept])
        # Rewritten without failed, replaced or torn rows, so failures run again and appends
        # are clean.
        text = "".join(line + "\n" for _, line in kept)
        _written(results, lambda: write_atomic(results, text))
        for row, _ in kept:
            self._count(row)
        _written(self.folder / SUMMARY, lambda: self._write_summary(EvalStatus.RUNNING))
        self._rows = _written(results, lambda: RowFile(results))
        return read.torn

    def missing(self, key: tuple[int, str]) -> list[str]:
        """The eval's methods a question has no result of yet (or a failure)."""
        row = self.rows.get(key)
        results = row.results() if row is not None else {}
        return [m for m in self.methods if m not in results or results[m].failed]

    def _count(self, row: Row, sign: int = 1) -> None:
        """Count ``row`` in the totals (``sign`` -1: take it back out) and keep it (or not)."""
        self.tally.add(row.result, sign, failed=row.failed)
        for name, result in row.results().items():
            if name in self.methods:
                self.methods[name].add(result, sign)
        made = row.calls_made if row.calls_made is not None else row.result.calls
        self.calls_made += sign * (made or 0)
        if sign > 0:
            self.rows[row.key] = row

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
            before = (self.tally.copy(), {m: t.copy() for m, t in self.methods.items()})
            calls_before, replaced = self.calls_made, self.rows.get(row.key)
            if replaced is not None:
                self._count(replaced, -1)
            self._count(row)
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
                self.tally, self.methods = before
                self.calls_made = calls_before
                if replaced is not None:
                    self.rows[row.key] = replaced
                else:
                    del self.rows[row.key]
                self._closed = True
                raise
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

    def final(self, status: EvalStatus) -> Summary:
        """:meth:`close`; when the eval failed on the disk already, that first error is the one
        reported, and the summary is what the file would say."""
        try:
            return self.close(status)
        except StoreError:
            if status is not EvalStatus.FAILED:
                raise
            return self.summary(status)

    def _write_summary(self, status: EvalStatus) -> Summary:
        summary = self.summary(status)
        write_json_atomic(self.folder / SUMMARY, summary.to_json())
        return summary

    def summary(self, status: EvalStatus) -> Summary:
        """The summary of the rows stored so far; with its methods' table and the calls made
        unless the eval is ReAct's alone."""
        react_only = self._config.methods == ("react",)
        return Summary(
            status=status,
            dataset=self._dataset,
            figures=self.tally.figures(self._kind),
            created=self._created,
            updated=now_utc().isoformat(),
            wall_s=round(time.monotonic() - self._started, 3),
            config=self._config,
            methods=()
            if react_only
            else tuple((name, tally.cells(self._kind)) for name, tally in self.methods.items()),
            calls_made=None if react_only else self.calls_made,
            levels=_levels(self._levels() if self._levels is not None else {}),
        )


def check_same_eval(
    folder: Path, previous: Summary, config: EvalConfig, dataset: DatasetRef
) -> None:
    """UsageError when resuming ``previous`` with ``config`` would mix two experiments:
    another model, prompt, dataset format, Search and Lookup setting, consent rules, set of MCP
    servers, or set of tool files (by their text: see ``config.tools_differ``). A folder names
    no code that runs and no server that starts: the error says how to give them yourself."""
    old = previous.config
    sent, sends = old.prompt_shas(), config.prompt_shas()
    checks = [
        ("model", old.model, config.model),
        *((f"{kind} prompt", sent[kind], sends[kind]) for kind in sent if kind in sends),
        ("dataset format", previous.dataset.format, dataset.format),
        ("Search and Lookup setting", _on(old.wiki_tools), _on(config.wiki_tools)),
        ("--allow-tool set", _listed(old.tool_allow), _listed(config.tool_allow)),
        ("--deny-tool set", _listed(old.tool_deny), _listed(config.tool_deny)),
    ]
    for what, before, now in checks:
        if before is not None and before != now:
            raise UsageError(
                f"{folder} was run with another {what} ({before!s:.60} ≠ {now!s:.60}); "
                "resume with the same settings or choose a new --out"
            )
    if _listed(old.mcp) != _listed(config.mcp):
        raise UsageError(
            f"{folder} was run with another set of MCP servers ({_listed(old.mcp):.200} ≠ "
            f"{_listed(config.mcp):.200}); an eval folder starts no server: give the same ones "
            "again with --mcp (or the config file's [mcp]), or choose a new --out"
        )
    differ = tools_differ(old, config.tool_files)
    if differ is not None:
        ran = [f.path for f in old.tool_files] or list(old.tools_from)
        again = resume_command(folder) + "".join(f" --tools-from {shell_word(p)}" for p in ran)
        how = (
            f"give them yourself if you trust them: {again}"
            if not config.tool_files
            else "give the files it ran with --tools-from"
        )
        raise UsageError(
            f"{folder} was run with another set of tool files ({differ:.600}); an eval folder "
            f"runs no code it names: {how}; or choose a new --out"
        )


def _levels(levels: dict[str, dict[str, Any]]) -> Methods:
    return tuple((name, tuple(cells.items())) for name, cells in levels.items())


def _all_failed(row: Row) -> bool:
    """A row of which no method's result stands (they all run again)."""
    return all(result.failed for result in row.results().values())


def _line(row: Row) -> str:
    return dump_json(row.to_json()) + "\n"


def _written(path: Path, write: Callable[[], T]) -> T:
    """``write()``, with an OSError (disk full, file-size limit) as a StoreError naming ``path``."""
    try:
        return write()
    except OSError as exc:
        raise StoreError(f"{path}: cannot write ({exc.strerror or exc})") from None


def _listed(names: tuple[str, ...]) -> str:
    """Tool files or MCP servers as an error names them (``none``)."""
    return ", ".join(names) or "none"


def _on(flag: bool) -> str:
    return "on" if flag else "off"
