"""The test suite's time from a cold checkout while other processes keep cores busy: the figure
behind the goal "under a minute on this 2-core machine while another process keeps one core
busy" (issue 30).

By default the committed ``HEAD`` (``--ref``) is cloned into a temporary folder, so nothing is
cached (no ``__pycache__``, ``.mypy_cache``, ``.hypothesis`` or ``.pytest_cache``: what CI starts
from), and ``pytest`` runs there with this interpreter, the clone first on ``PYTHONPATH`` so that
it, not the development install, is what the tests and the console scripts they start import.
``--here`` runs in this checkout instead (``.ci/run``: a clean checkout is already cold).
``--busy N`` keeps N cores busy for the run with ``python -c 'while 1: pass'`` processes,
started before pytest and ended after it.

Printed per run: the wall time, the CPU time (user + sys) of pytest and every process it waited
for (its workers and their children, mypy), the load average before the run, and pytest's
summary line (the test counts). The exit code is pytest's: the time is a figure, never a
failure. Other people's processes on the machine add to the wall time: compare runs made one
after the other, and the CPU times.

    python bench/suite_time.py [--busy 1] [--repeat 1] [--ref HEAD | --here] [--show] [-- ARGS]
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
GOAL_S = 60.0
SPIN = "while 1: pass"
SUMMARY = re.compile(r"^=*\s*(\d+ \w+(?:, \d+ \w+)*) in [\d.]+s\b")  # 1 failed, 2 passed in 3.4s


class Run(NamedTuple):
    code: int
    wall_s: float
    cpu_s: float
    load: float  # the 1-minute load average before the run
    summary: str  # pytest's last line of counts

    def __str__(self) -> str:
        goal = "under" if self.wall_s < GOAL_S else "OVER"
        return (
            f"{self.wall_s:.1f} s wall ({goal} the {GOAL_S:.0f} s goal), {self.cpu_s:.1f} s CPU, "
            f"load {self.load:.2f} before; {self.summary}"
        )


def cold_clone(ref: str, into: Path) -> Path:
    """``ref`` of this repository checked out alone in ``into``: nothing cached."""
    sha = git("rev-parse", "--verify", f"{ref}^{{commit}}")
    clone = into / "react-cli"
    subprocess.run(["git", "clone", "-q", "--no-checkout", str(ROOT), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", "--detach", sha], check=True)
    return clone


def git(*args: str) -> str:
    done = subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True, text=True)
    return done.stdout.strip()


def run_suite(where: Path, busy: int, pytest_args: list[str], show: bool) -> Run:
    """pytest in ``where`` while ``busy`` spin loops run; its output passed on if ``show``."""
    path = [str(where), *filter(None, [os.environ.get("PYTHONPATH")])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    load = os.getloadavg()[0]
    spinners = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(busy)]
    summary, lines = "(no pytest summary line)", []
    try:
        before, start = os.times(), time.perf_counter()
        with subprocess.Popen(
            [sys.executable, "-m", "pytest", *pytest_args],
            cwd=where,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            preexec_fn=_default_sigint,
        ) as pytest:
            assert pytest.stdout is not None
            for line in pytest.stdout:
                lines.append(line)
                if show:
                    print(line, end="", flush=True)
                found = SUMMARY.match(line.strip())
                if found:
                    summary = found.group(1)
        wall, after = time.perf_counter() - start, os.times()  # the spinners not yet reaped
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()
    if pytest.returncode != 0 and not show:
        print("".join(lines), end="")
    cpu = sum(after[2:4]) - sum(before[2:4])  # children_user + children_system
    return Run(pytest.returncode, wall, cpu, load, summary)


def _default_sigint() -> None:
    """SIGINT back to its default in pytest: a shell starts a background job with it ignored,
    Python then never raises KeyboardInterrupt, and every Ctrl-C test would hang."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--busy", type=int, default=1, help="cores kept busy (default 1)")
    parser.add_argument("--repeat", type=int, default=1, help="runs, each from a fresh clone")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--ref", default="HEAD", help="the commit to clone (default HEAD)")
    where.add_argument("--here", action="store_true", help="run in this checkout as it is")
    parser.add_argument("--show", action="store_true", help="pass pytest's output on as it comes")
    parser.add_argument("pytest_args", nargs="*", help="after --: passed on to pytest")
    args = parser.parse_args(argv)
    code = 0
    for number in range(1, args.repeat + 1):
        with tempfile.TemporaryDirectory(prefix="suite-time-") as scratch:
            folder = ROOT if args.here else cold_clone(args.ref, Path(scratch))
            run = run_suite(folder, args.busy, args.pytest_args, args.show)
        print(f"suite, {args.busy} core(s) busy, run {number}: {run}", flush=True)
        code = code or run.code
    return code


if __name__ == "__main__":
    if code := main():
        sys.exit(code)
