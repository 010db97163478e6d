"""The traces kept in the home directory: listed newest first, chosen by number, summarised.

``react-cli traces`` lists them and ``replay -n N`` picks one; a file that is not a readable
trace is a row saying why, never the end of the listing.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from react_cli.core.errors import TraceError, UsageError
from react_cli.core.wording import plural
from react_cli.traces.trace import Trace


def trace_files(home: Path) -> list[Path]:
    """Trace files under ``<home>/traces``, newest first (by modification time, then name)."""
    folder = home / "traces"
    if not folder.is_dir():
        return []
    stamped = []
    for path in folder.glob("*.json"):
        try:
            if path.is_file():
                stamped.append((path.stat().st_mtime_ns, path.name, path))
        except OSError:  # vanished or unreadable meanwhile: not worth failing the listing
            continue
    return [path for *_, path in sorted(stamped, reverse=True)]


def select_trace(home: Path, path: Path | None, nth: int | None) -> Path:
    """TRACE if given, else the ``nth`` most recent trace in the home directory (1 = newest)."""
    if path is not None:
        if nth is not None:
            raise UsageError("give either TRACE or -n, not both")
        return path
    nth = 1 if nth is None else nth
    if nth < 1:
        raise UsageError("-n must be at least 1")
    files = trace_files(home)
    if not files:
        raise TraceError(f"no traces in {home / 'traces'} yet: run 'react-cli ask' or pass TRACE")
    if nth > len(files):
        raise TraceError(
            f"only {plural(len(files), 'trace')} in {home / 'traces'}, no number {nth}"
        )
    return files[nth - 1]


def summarize(path: Path) -> dict[str, Any]:
    """One listing row; an unreadable file becomes a row with ``error`` instead of crashing."""
    try:
        trace = Trace.read(path)
    except TraceError as exc:
        return {"path": str(path), "error": str(exc).removeprefix(f"{path}: ")}
    run, conversation = trace.run, trace.conversation
    return {
        "path": str(path),
        "created": trace.created,
        "question": run.question,
        "answer": run.answer,
        "stop_reason": str(run.stop_reason),
        "steps": len(run.steps),
        "model": trace.config.model,
        "method": str(trace.record.method),
        "conversation": None if conversation is None else conversation.turn_json(),
    }


def local_time(created: Any) -> str:
    """An ISO timestamp shown in local time to the minute; anything else as is."""
    try:
        return datetime.fromisoformat(str(created)).astimezone().strftime("%Y-%m-%d %H:%M")
    except (ValueError, OverflowError):  # not a timestamp, or one at the end of time
        return str(created or "?")
