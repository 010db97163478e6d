"""Versioned JSON traces: one document per run, written atomically, never holding a secret.

``load_trace`` accepts every version listed in ``READABLE_VERSIONS`` and upgrades older ones in
``_UPGRADES`` so that old traces keep loading when the format moves on.
"""

from __future__ import annotations

import math
import os
import re
import tempfile
import unicodedata
import uuid
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from react_cli.agent import RunResult, Step
from react_cli.errors import TraceError, UsageError
from react_cli.records import Usage
from react_cli.untrusted import BadInput, dump_json, not_regular, parse_json, read_text

TRACE_VERSION = 1
_UPGRADES: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {}
READABLE_VERSIONS = frozenset({TRACE_VERSION, *_UPGRADES})
_REQUIRED = ("question", "stop_reason", "steps")
MAX_TRACE_BYTES = 64 << 20
"""A larger file is not read as a trace (ours stay far below: steps hold bounded text)."""


def new_run_id() -> str:
    return uuid.uuid4().hex[:12]


def now_utc() -> datetime:
    return datetime.now(timezone.utc)


def slug(text: str, limit: int = 40) -> str:
    """A filename-safe short form of a question (ASCII where possible)."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    words = re.sub(r"[^A-Za-z0-9]+", "-", folded.lower()).strip("-")
    return words[:limit].rstrip("-") or "run"


def default_trace_path(home: Path, created: datetime, question: str) -> Path:
    stamp = created.strftime("%Y%m%dT%H%M%S%fZ")
    return home / "traces" / f"{stamp}-{slug(question)}.json"


def step_to_dict(step: Step) -> dict[str, Any]:
    return {
        "index": step.index,
        "thought": step.thought,
        "action": step.action,
        "observation": step.observation,
        "raw": step.raw,
        "followup_raw": step.followup_raw,
        "usage": step.usage.to_dict(),
        "latency_s": round(step.latency_s, 4),
        "tool_latency_s": round(step.tool_latency_s, 4),
        "retries": step.retries,
        "tool_retries": step.tool_retries,
        "error": step.error,
        "details": step.details,
    }


def step_from_dict(data: dict[str, Any]) -> Step:
    """A recorded step; TypeError/ValueError when a field has the wrong type or is not finite."""
    if not isinstance(data, dict):
        raise TypeError(f"a step is {type(data).__name__}, not an object")
    details = data.get("details") or {}
    if not isinstance(details, dict):
        raise TypeError("step details are not an object")
    usage = data.get("usage")
    return Step(
        index=int(data.get("index", 0)),
        thought=_text(data, "thought") or "",
        action=_text(data, "action"),
        observation=_text(data, "observation") or "",
        raw=_text(data, "raw") or "",
        followup_raw=_text(data, "followup_raw"),
        usage=Usage.from_dict(usage if isinstance(usage, dict) else None),
        latency_s=seconds(data.get("latency_s"), "latency_s"),
        tool_latency_s=seconds(data.get("tool_latency_s"), "tool_latency_s"),
        retries=int(data.get("retries") or 0),
        tool_retries=int(data.get("tool_retries") or 0),
        error=_text(data, "error"),
        details=details,
    )


def _text(data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{key} is {type(value).__name__}, not text")
    return value


def seconds(value: Any, name: str) -> float:
    """A recorded duration: a finite number ≥ 0 (missing = 0)."""
    if value is None:
        return 0.0
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} is {type(value).__name__}, not a number")
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} is {value}, not a duration")
    return float(value)


def trace_document(
    result: RunResult,
    *,
    run_id: str,
    created: datetime,
    config: dict[str, Any],
    prompt_template: str,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The trace of a finished (or stopped) run. ``config`` must already be secret-free."""
    document = {
        "version": TRACE_VERSION,
        "id": run_id,
        "created": created.isoformat(),
        "question": result.question,
        "answer": result.answer,
        "stop_reason": result.stop_reason,
        "error": result.error,
        "config": config,
        "prompt_template": prompt_template,
        "usage": result.usage.to_dict(),
        "duration_s": round(result.duration_s, 4),
        "steps": [step_to_dict(step) for step in result.steps],
    }
    document.update(extra or {})
    return document


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_FILE_MODE = 0o666 & ~_umask()  # read once, at import: changing the umask is not thread-safe


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` in one step, so a crash or Ctrl-C mid-write never leaves half a file.

    The file gets the permissions a plain ``open`` would give it (mkstemp's are 0600)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            os.fchmod(handle.fileno(), _FILE_MODE)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json_atomic(path: Path, document: dict[str, Any]) -> None:
    """Write a JSON document atomically; any text in it can be written (see ``dump_json``)."""
    write_atomic(path, dump_json(document, indent=2) + "\n")


def trace_target(path: Path) -> Path:
    """The file a trace for ``path`` replaces: ``path`` if new or a regular file, the file a
    symbolic link points to; OSError for anything else, which must never be replaced (as root,
    replacing ``/dev/full`` with a file breaks the system)."""
    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    kind = not_regular(target, follow_symlinks=False)
    if kind is not None:
        verb = "is" if target == path else "links to"
        raise OSError(f"{verb} {kind}, not a regular file")
    return target


def write_trace(path: Path, document: dict[str, Any]) -> None:
    """Write a trace atomically; TraceError names the file when that is impossible."""
    try:
        target = trace_target(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        write_json_atomic(target, document)
    except OSError as exc:
        raise TraceError(f"cannot write trace {path}: {exc.strerror or exc}") from None


def check_writable(path: Path) -> None:
    """Fail now, with the reason, if a trace could not be written to ``path`` later."""
    try:
        target = trace_target(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise UsageError(
            f"cannot write the trace to {path}: {exc.strerror or exc} "
            "(give --trace PATH, --no-trace, or another REACT_CLI_HOME)"
        ) from None


def load_trace(path: Path) -> dict[str, Any]:
    """Read and validate a trace, upgrading older versions; TraceError names file and problem."""
    try:
        text = read_text(path, MAX_TRACE_BYTES)
    except FileNotFoundError:
        raise TraceError(f"{path}: no such trace file") from None
    except IsADirectoryError:
        raise TraceError(f"{path}: is a directory, not a trace file") from None
    except (OSError, BadInput) as exc:
        raise TraceError(f"{path}: cannot read trace: {exc}") from None
    if not text.strip():
        raise TraceError(f"{path}: empty file, not a trace")
    try:
        parsed = parse_json(text)
    except BadInput as exc:
        raise TraceError(f"{path}: {exc}") from None
    if not isinstance(parsed, dict):
        raise TraceError(f"{path}: not a react-cli trace (top level is not an object)")
    document: dict[str, Any] = parsed
    version = document.get("version")
    if (
        isinstance(version, bool)
        or not isinstance(version, int)
        or version not in READABLE_VERSIONS
    ):
        raise TraceError(
            f"{path}: unsupported trace version {version!r} "
            f"(this react-cli reads {', '.join(map(str, sorted(READABLE_VERSIONS)))})"
        )
    while document["version"] != TRACE_VERSION:
        document = _UPGRADES[document["version"]](document)
    missing = [key for key in _REQUIRED if key not in document]
    if missing or not isinstance(document["steps"], list):
        raise TraceError(f"{path}: not a react-cli trace (missing {', '.join(missing) or 'steps'})")
    return document
