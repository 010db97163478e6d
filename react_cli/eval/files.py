"""The eval folder's files: one eval at a time, rows and summary read back, rows appended whole.

- ``.lock``: an exclusive ``flock`` for as long as an eval uses the folder, so a second one (two
  ``--resume`` of one folder) is refused instead of interleaving rows;
- ``results.jsonl``: read back row by row; a last line cut short (crash, full disk) is dropped
  and reported, any other line that is not a row is an error naming the line (or, for
  ``eval show``, skipped and counted); an append that fails (disk full, file-size limit) is
  undone, so the rows on disk are always whole rows;
- ``summary.json``: read with the same JSON bounds as every local file, checked field by field;
- every file an eval writes there (rows rewritten, summary, traces) follows the folder's one
  policy: written in one step (``infra.files.write_atomic``, its mode kept), a symbolic link at
  its name (or at ``traces/``, see ``infra.files.write_json_in``) replaced, never written
  through, so a link planted in the folder cannot make the eval overwrite a file outside it;
  rows are
  appended by the same policy (``infra.files.open_appending``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from react_cli.core.errors import UsageError
from react_cli.eval.rows import BadRow, Row
from react_cli.eval.summary import BadSummary, Summary
from react_cli.infra.files import hold_lock, open_appending
from react_cli.infra.untrusted import BadInput, not_regular, parse_json, read_bytes, read_text, utf8

LOCK = ".lock"
RESULTS = "results.jsonl"
SUMMARY = "summary.json"
TRACES = "traces"
MAX_RESULTS_BYTES = 1 << 30
MAX_SUMMARY_BYTES = 16 << 20


def lock_folder(directory: Path) -> IO[bytes]:
    """Hold the folder's lock until the returned file is closed; UsageError if an eval has it."""
    path = directory / LOCK
    try:
        return hold_lock(path)
    except BlockingIOError:
        raise UsageError(
            f"{directory} is in use by another react-cli eval; "
            "wait for it to end, or choose another --out"
        ) from None
    except OSError as exc:
        raise UsageError(f"cannot lock {directory}: {path}: {exc.strerror or exc}") from None


def check_regular(path: Path) -> None:
    """UsageError if ``path`` exists as anything but a regular file (a FIFO would block the
    read, a symbolic link to a device would be replaced)."""
    kind = not_regular(path, follow_symlinks=False)
    if kind is not None:
        raise UsageError(f"{path} is {kind}, not a regular file")


@dataclass
class ReadRows:
    """The rows of ``results.jsonl``, each with its line as stored."""

    rows: list[Row] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)  # rewritten as they were on resume
    torn: bool = False  # a last line cut short (crash, full disk) was dropped
    skipped: int = 0  # lines that are no row (read with ``skip_bad``), torn ones included


def read_rows(path: Path, *, skip_bad: bool = False) -> ReadRows:
    """The rows of ``results.jsonl`` (none if missing); any line but a torn last one that is
    not a row is a UsageError naming the line, or with ``skip_bad`` skipped and counted."""
    check_regular(path)
    try:
        data = read_bytes(path, MAX_RESULTS_BYTES)
    except FileNotFoundError:
        return ReadRows()
    except (OSError, BadInput) as exc:
        raise UsageError(f"{path}: cannot read: {exc}") from None
    lines = data.split(b"\n")  # the last one is empty unless a write was cut short
    read = ReadRows()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            text = utf8(line)
            row = Row.from_json(parse_json(text))
        except (BadInput, BadRow) as exc:
            last = number == len(lines)  # cut short (a whole row that lost only its newline
            read.torn |= last  # is read above like any other)
            read.skipped += 1
            if not (skip_bad or last):
                problem = f"not a result row ({exc})" if isinstance(exc, BadRow) else exc
                raise UsageError(f"{path} line {number}: {problem}") from None
            continue
        read.rows.append(row)
        read.lines.append(text)
    return read


def read_summary(path: Path) -> Summary | None:
    """The folder's ``summary.json`` (None if missing); UsageError if it is not one."""
    check_regular(path)
    try:
        document = parse_json(read_text(path, MAX_SUMMARY_BYTES))
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise UsageError(f"{path}: unreadable ({exc.strerror or exc})") from None
    except BadInput as exc:
        raise UsageError(f"{path}: unreadable ({exc})") from None
    try:
        return Summary.from_json(document)
    except BadSummary as exc:
        raise UsageError(f"{path}: not a react-cli eval summary ({exc})") from None


class RowFile:
    """``results.jsonl`` opened for appending rows that land whole or not at all."""

    def __init__(self, path: Path) -> None:
        self.path = path
        # A FIFO put there since the rows were read fails at once (no reader), never blocks.
        self._fd = open_appending(path)
        self._size = os.fstat(self._fd).st_size
        self._last = self._size

    def append(self, line: str) -> None:
        """Write one line; on OSError the file is cut back to what it was, then it raises."""
        data = line.encode("utf-8")
        start, written = self._size, 0
        try:
            while written < len(data):
                written += os.write(self._fd, data[written:])
        except OSError:
            self._cut(start)
            raise
        self._last, self._size = start, start + written

    def undo(self) -> None:
        """Remove the last line appended (its summary could not be written)."""
        self._cut(self._last)

    def _cut(self, size: int) -> None:
        try:
            os.ftruncate(self._fd, size)
        except OSError:  # the disk is failing: nothing better to do than to report the write
            return
        self._size = size

    def close(self) -> None:
        os.close(self._fd)
