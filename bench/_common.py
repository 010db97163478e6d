"""Shared by the bench scripts: make the test helpers (fake servers, scripted models) importable;
run the servers apart, and ``react-cli`` in this process."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import multiprocessing
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from react_cli.eval.plan import EvalRequest

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
if str(TESTS / "support") not in sys.path:
    sys.path.insert(0, str(TESTS / "support"))


def run_eval(request: EvalRequest) -> None:
    """``react-cli eval`` as its command runs it, in this process: one client per worker,
    sharing what they learn of the endpoint."""
    from react_cli.eval.plan import plan_eval
    from react_cli.eval.runner import claimed, evaluate, shared_limits
    from react_cli.session import open_session

    plan = plan_eval(request)
    shared, used = shared_limits(plan)
    session = open_session(plan.settings, plan.prompts, methods=plan.methods, shared=shared)
    with claimed(plan) as folder, session as opened:
        evaluate(plan, folder, opened, concurrency=used)


def add_in_process(parser: argparse.ArgumentParser) -> None:
    """``--in-process``: the servers on a thread of this process (a smoke test's quick start)."""
    parser.add_argument(
        "--in-process",
        action="store_true",
        help="run the servers on a thread of this process (quicker to start, for a smoke "
        "test; the CPU they take is then react-cli's too)",
    )


def start_servers(
    serve: Callable[..., None], here: bool, *args: Any
) -> multiprocessing.Process | threading.Thread:
    """``serve(*args)`` in a child process (its CPU time is not charged to react-cli), or
    (``here``) on a thread of this one; it talks back through a ``multiprocessing.Pipe``."""
    runner: multiprocessing.Process | threading.Thread
    if here:
        runner = threading.Thread(target=serve, args=args, daemon=True)
    else:
        runner = multiprocessing.get_context("spawn").Process(target=serve, args=args, daemon=True)
    runner.start()
    return runner


def questions_file(path: Path, count: int) -> Path:
    """A JSONL dataset of ``count`` questions about a magazine, each answered 1844."""
    rows = [{"question": f"When was magazine {i} started?", "answer": "1844"} for i in range(count)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@contextlib.contextmanager
def environment(env: dict[str, str]) -> Iterator[None]:
    """``env`` set in this process's environment for the block, then the old values back."""
    saved = {key: os.environ.get(key) for key in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def run_cli(args: list[str], env: dict[str, str]) -> float:
    """``react-cli ARGS`` in this process with ``env`` set (and then restored), its output
    dropped; the wall time it took."""
    from react_cli.cli import main

    started = time.perf_counter()
    quiet = contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO())
    with environment(env), quiet[0], quiet[1], contextlib.suppress(SystemExit):
        main(args)
    return time.perf_counter() - started
