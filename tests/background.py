"""Checks that need nothing but a process of their own (``mypy --strict``, the linear-growth
measurements) start when collection ends, one after another on the machine's other core, and
their tests collect the verdict: a 2-core run then spends ~15 s less waiting for them.

Under pytest-xdist (each worker collects every test) nothing starts early: a check then runs
when a test first asks for it, on that worker.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Check:
    """One command run from the repository root; ``tests`` is the node ID (or node-ID prefix)
    of the tests that read its output."""

    argv: list[str]
    tests: str
    _result: Future[subprocess.CompletedProcess[str]] = field(default_factory=Future)
    _process: subprocess.Popen[str] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def run(self) -> None:
        """Run the command (once, whichever thread asks first); ``result`` then has it."""
        with self._lock:
            if self._result.running() or self._result.done():  # ran, runs, or was stopped
                return
            self._result.set_running_or_notify_cancel()
            try:
                self._process = subprocess.Popen(
                    self.argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
                )
            except OSError as exc:
                self._result.set_exception(exc)
                return
        try:
            output, _ = self._process.communicate()
            completed = subprocess.CompletedProcess(self.argv, self._process.returncode, output)
            self._result.set_result(completed)
        except BaseException as exc:
            self._result.set_exception(exc)

    def result(self) -> subprocess.CompletedProcess[str]:
        """The command's exit code and output (stderr folded in), waiting for it if needed."""
        self.run()
        return self._result.result()

    def stop(self) -> None:
        """Kill the command if it runs; never start it."""
        with self._lock:
            self._result.cancel()
            if self._process is not None and self._process.poll() is None:
                self._process.kill()


MYPY = Check(
    [sys.executable, "-m", "mypy", "--strict", "react_cli"],
    "tests/test_lint.py::test_mypy_strict_is_clean",
)
GROWTH = Check(
    [sys.executable, str(ROOT / "bench" / "pathological.py"), "--check"],
    "tests/test_pathological.py::",
)
CHECKS = (GROWTH, MYPY)


def start(node_ids: Iterable[str]) -> None:
    """Start, in one background thread and in order, the checks some of ``node_ids`` read."""
    selected = list(node_ids)
    wanted = [check for check in CHECKS if any(n.startswith(check.tests) for n in selected)]
    if wanted:
        threading.Thread(target=lambda: [check.run() for check in wanted], daemon=True).start()


def stop() -> None:
    """End a check still running when the session ends (``-x`` stopped the run first)."""
    for check in CHECKS:
        check.stop()
