"""What the process that schedules the tests starts in the background for the run: ``mypy
--strict``, and hypothesis' tables of Unicode.

``mypy --strict`` starts as soon as the run's selection is known, as a process of its own,
and its test collects the verdict: from a fresh checkout it takes ~9 s of CPU, which the
machine's cores then fit between the tests instead of one worker waiting for it at the end.
The selection is known in the process that schedules the tests: pytest-xdist's controller when
it hears a worker's collection (``pytest_xdist_node_collection_finished``), or the only process
at ``pytest_collection_finish`` (``-n 0``). Its test may run in another process (a worker), so
the verdict is handed over in a folder named by ``MYPY_DIR`` in the environment the workers
inherit: mypy's output, then its exit code, written while the starter holds a lock on the folder's
``lock`` file that the test waits for (``flock``: no polling, no fixed wait).

The tests running meanwhile share the machine with it; none measures time but
``test_pathological.py``, whose growth checks are built to stand that load.

hypothesis computes which code points are in each Unicode category, and which UTF-8 encodes,
the first time a process draws text (1.4 s of CPU), and keeps both in ``.hypothesis/`` for the
processes after it. From a fresh checkout every pytest-xdist worker would compute them; the
controller does it once, on a thread, while the workers start and collect (~4 s).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MYPY_TEST = "tests/test_lint.py::test_mypy_strict_is_clean"
MYPY_DIR = "REACT_CLI_TEST_MYPY_DIR"
COMMAND = [sys.executable, "-m", "mypy", "--strict", "react_cli"]
_started: list[tuple[subprocess.Popen[bytes], threading.Thread]] = []
_prepared: list[str] = []


def prepare() -> None:
    """Make the hand-over folder (in the process that starts the workers, before it does)."""
    _prepared.append(tempfile.mkdtemp(prefix="react-cli-mypy-"))
    os.environ[MYPY_DIR] = _prepared[0]


def start(node_ids: Iterable[str]) -> None:
    """Start mypy now if one of ``node_ids`` is its test (once a run)."""
    if _started or not _prepared or MYPY_TEST not in node_ids:
        return
    folder = _prepared[0]
    lock = (Path(folder) / "lock").open("w")
    fcntl.flock(lock, fcntl.LOCK_EX)  # before any test can run: nobody waits for it yet
    with (Path(folder) / "output").open("wb") as output:
        process = subprocess.Popen(COMMAND, cwd=ROOT, stdout=output, stderr=subprocess.STDOUT)

    def verdict() -> None:
        (Path(folder) / "code").write_text(str(process.wait()), encoding="utf-8")
        lock.close()  # the test waiting on the lock goes on

    _started.append((process, threading.Thread(target=verdict, name="mypy", daemon=True)))
    _started[0][1].start()


def mypy() -> tuple[int, str]:
    """mypy's exit code and output: the background run's if there is one, else run now."""
    folder = Path(os.environ.get(MYPY_DIR) or "/nonexistent")
    if (folder / "lock").exists():
        with (folder / "lock").open() as lock:
            fcntl.flock(lock, fcntl.LOCK_SH)  # until the starter's verdict is written
        if (folder / "code").exists():
            output = (folder / "output").read_text(encoding="utf-8", errors="replace")
            return int((folder / "code").read_text(encoding="utf-8")), output
    done = subprocess.run(COMMAND, cwd=ROOT, capture_output=True, text=True, check=False)
    return done.returncode, done.stdout + done.stderr


def unicode_tables() -> None:
    """Have hypothesis write its Unicode tables, on a thread (see the module's docstring): a
    worker that draws text before they are written computes them itself, as it would have."""

    def draw() -> None:
        from hypothesis import find, settings
        from hypothesis import strategies as st

        once = settings(database=None, max_examples=1, phases=["generate"])
        find(st.text(min_size=1), lambda _: True, settings=once)

    threading.Thread(target=draw, name="unicode-tables", daemon=True).start()


def stop() -> None:
    """End a mypy whose test never ran (``-x`` stopped the session first), and remove the
    hand-over folder (in the process that made it), when pytest ends."""
    for process, verdict in _started:
        if process.poll() is None:
            process.kill()
        verdict.join()
    for folder in _prepared:
        os.environ.pop(MYPY_DIR, None)
        shutil.rmtree(folder, ignore_errors=True)
