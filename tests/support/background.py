"""``mypy --strict`` starts when collection ends, on the machine's other core, and its test
collects the verdict: a run from a fresh checkout then spends ~8 s less waiting for it.

The tests running meanwhile share the machine with it; none measures time but
``test_pathological.py``, whose growth checks are built to stand that load. Under
pytest-xdist (each worker collects every test) nothing starts early: the test then runs mypy
itself.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MYPY_TEST = "tests/test_lint.py::test_mypy_strict_is_clean"
_started: list[subprocess.Popen[str]] = []


def start(node_ids: Iterable[str]) -> None:
    """Start mypy now if one of ``node_ids`` is its test."""
    if not _started and MYPY_TEST in node_ids:
        _started.append(
            subprocess.Popen(
                [sys.executable, "-m", "mypy", "--strict", "react_cli"],
                cwd=ROOT,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
        )


def mypy() -> tuple[int, str]:
    """mypy's exit code and output, started now if it was not at collection."""
    start([MYPY_TEST])
    output, _ = _started[0].communicate()
    return _started[0].returncode, output


def stop() -> None:
    """End a mypy whose test never ran (``-x`` stopped the session first)."""
    for process in _started:
        if process.poll() is None:
            process.kill()
            process.wait()
