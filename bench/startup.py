"""Start-up time: wall time of ``react-cli --help``, optionally next to another command.

python bench/startup.py [--runs 20] [--compare "/tmp/llm-venv/bin/llm --help"]
"""

from __future__ import annotations

import argparse
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path


def react_cli_command() -> list[str]:
    """The installed console script next to this interpreter, else ``python -m react_cli``."""
    script = Path(sys.executable).with_name("react-cli")
    return (
        [str(script), "--help"]
        if script.exists()
        else [sys.executable, "-m", "react_cli", "--help"]
    )


def timings(command: list[str], runs: int) -> list[float]:
    subprocess.run(command, capture_output=True, check=True)  # warm the file cache
    seconds = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(command, capture_output=True, check=True)
        seconds.append(time.perf_counter() - started)
    return seconds


def report(name: str, seconds: list[float]) -> None:
    print(
        f"{name}: median {statistics.median(seconds) * 1000:.0f} ms, "
        f"min {min(seconds) * 1000:.0f} ms over {len(seconds)} runs"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--compare", help="another command line to time the same way")
    args = parser.parse_args()
    command = react_cli_command()
    report("react-cli --help", timings(command, args.runs))
    if args.compare:
        report(args.compare, timings(shlex.split(args.compare), args.runs))


if __name__ == "__main__":
    main()
