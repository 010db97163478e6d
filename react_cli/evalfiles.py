"""The eval folder's files: one run at a time, rows read back whole, rows appended whole.

- ``.lock``: an exclusive ``flock`` for as long as a run uses the folder, so a second run (two
  ``--resume`` of one folder) is refused instead of interleaving rows;
- ``results.jsonl``: read back row by row; a last line cut short (crash, full disk) is dropped
  and reported, any other bad line is an error naming the line; an append that fails (disk
  full, file-size limit) is undone, so the rows on disk are always whole rows;
- ``summary.json``: read with the same JSON bounds as every local file.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO, Any

from react_cli.errors import UsageError
from react_cli.untrusted import BadInput, not_regular, parse_json, read_bytes, read_text, utf8

LOCK = ".lock"
MAX_RESULTS_BYTES = 1 << 30
MAX_SUMMARY_BYTES = 16 << 20
# What a row needs for the summary, and the largest meaningful value of its numbers: sums over
# 7,405 rows must stay finite and short enough to be read back.
_ROW_NUMBERS = {"em": 1.0, "f1": 1.0, "latency_s": 1e9, "steps": 10**6, "tokens": 10**15}


def lock_folder(directory: Path) -> IO[bytes]:
    """Hold the folder's lock until the returned file is closed; UsageError if a run has it."""
    import fcntl

    path = directory / LOCK
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        handle = os.fdopen(os.open(path, flags, 0o644), "r+b")
    except OSError as exc:
        raise UsageError(f"cannot lock {directory}: {path}: {exc.strerror or exc}") from None
    try:
        if not_regular(path, follow_symlinks=False):
            raise UsageError(f"cannot lock {directory}: {path} is not a regular file")
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise UsageError(
            f"{directory} is in use by another react-cli eval; "
            "wait for it to end, or choose another --out"
        ) from None
    except BaseException:
        handle.close()
        raise
    return handle


def check_regular(path: Path) -> None:
    """UsageError if ``path`` exists as anything but a regular file (a FIFO would block the
    read, a symbolic link to a device would be replaced)."""
    kind = not_regular(path, follow_symlinks=False)
    if kind is not None:
        raise UsageError(f"{path} is {kind}, not a regular file")


def read_rows(path: Path) -> tuple[list[dict[str, Any]], bool]:
    """The rows of ``results.jsonl`` (none if missing), and whether a torn last line was
    dropped; UsageError naming the line for anything else that is not a row."""
    check_regular(path)
    try:
        data = read_bytes(path, MAX_RESULTS_BYTES)
    except FileNotFoundError:
        return [], False
    except (OSError, BadInput) as exc:
        raise UsageError(f"{path}: cannot read: {exc}") from None
    lines = data.split(b"\n")
    tail = lines.pop()  # after the last newline: empty unless a write was cut short
    rows = [_row(path, number, line) for number, line in enumerate(lines, 1) if line.strip()]
    if not tail.strip():
        return rows, False
    try:  # a complete row that lost only its newline is still a row
        rows.append(_row(path, len(lines) + 1, tail))
    except UsageError:
        return rows, True
    return rows, False


def _row(path: Path, number: int, line: bytes) -> dict[str, Any]:
    try:
        row = parse_json(utf8(line))
    except BadInput as exc:
        raise UsageError(f"{path} line {number}: {exc}") from None
    problem = _row_problem(row) if isinstance(row, dict) else "not a JSON object"
    if problem is not None or not isinstance(row, dict):
        raise UsageError(f"{path} line {number}: not a result row ({problem})")
    return row


def _row_problem(row: dict[str, Any]) -> str | None:
    if not isinstance(row.get("question"), str) or not isinstance(row.get("stop_reason"), str):
        return "no question or stop_reason text"
    index = row.get("index")
    if type(index) is not int or index < 0:
        return "index is not a row number"
    for name, limit in _ROW_NUMBERS.items():
        value = row.get(name)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"{name} is not a number"
        if isinstance(limit, int) and type(value) is not int:
            return f"{name} is not a whole number"
        if not 0 <= value <= limit:
            return f"{name} is out of range"
    return None


def read_summary(path: Path) -> dict[str, Any] | None:
    """The folder's ``summary.json`` (None if missing); UsageError if it is not one."""
    check_regular(path)
    try:
        document = parse_json(read_text(path, MAX_SUMMARY_BYTES))
    except FileNotFoundError:
        return None
    except (OSError, BadInput) as exc:
        raise UsageError(f"{path}: {exc}") from None
    if not isinstance(document, dict):
        raise UsageError(f"{path}: not an eval summary (top level is not an object)")
    return document


class RowFile:
    """``results.jsonl`` opened for appending rows that land whole or not at all."""

    def __init__(self, path: Path) -> None:
        self.path = path
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        self._fd = os.open(path, flags, 0o644)
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
