"""Start-up time: wall time of ``react-cli --help``, optionally next to another command, and
what a command that runs costs before its first request: ``react-cli ask`` against a closed
port (exit 1 at once), in a throwaway ``REACT_CLI_HOME``; each with its CPU time (user + sys).

python bench/startup.py [--runs 20] [--compare "/tmp/llm-venv/bin/llm --help"]
"""

from __future__ import annotations

import argparse
import os
import resource
import shlex
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def react_cli_command(*args: str) -> list[str]:
    """The installed console script next to this interpreter, else ``python -m react_cli``."""
    script = Path(sys.executable).with_name("react-cli")
    return [str(script), *args] if script.exists() else [sys.executable, "-m", "react_cli", *args]


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then let go)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def timings(
    command: list[str], runs: int, *, code: int = 0, env: dict[str, str] | None = None
) -> tuple[list[float], float]:
    """Each run's wall time, and the mean CPU time (user + sys) of a run; every run must exit
    with ``code``."""

    def run() -> None:
        done = subprocess.run(command, capture_output=True, env=env)
        if done.returncode != code:
            sys.exit(f"{command[0]}: expected exit {code}, got {done.returncode}: {done.stderr!r}")

    run()  # warm the file cache
    seconds = []
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    for _ in range(runs):
        started = time.perf_counter()
        run()
        seconds.append(time.perf_counter() - started)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return seconds, cpu / runs


def report(name: str, figures: tuple[list[float], float]) -> None:
    seconds, cpu_s = figures
    print(
        f"{name}: median {statistics.median(seconds) * 1000:.0f} ms, "
        f"min {min(seconds) * 1000:.0f} ms over {len(seconds)} runs, "
        f"{cpu_s * 1000:.0f} ms of CPU a run"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--compare", help="another command line to time the same way")
    args = parser.parse_args()
    report("react-cli --help", timings(react_cli_command("--help"), args.runs))
    if args.compare:
        report(args.compare, timings(shlex.split(args.compare), args.runs))
    url = f"http://127.0.0.1:{closed_port()}/v1"
    ask = react_cli_command("ask", "q", "--base-url", url, "--no-wiki", "--no-trace")
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "REACT_CLI_HOME": home, "REACT_CLI_MODEL": "bench"}
        report("react-cli ask (a closed port, exit 1)", timings(ask, args.runs, code=1, env=env))


if __name__ == "__main__":
    main()
