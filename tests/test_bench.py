"""Each bench script still runs (with tiny parameters); the figures themselves are not tested."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"


@pytest.mark.parametrize(
    ("script", "args", "figure"),
    [
        ("agent_overhead.py", ["--runs", "2", "--steps", "3"], "agent overhead per step:"),
        (
            "eval_throughput.py",
            ["--questions", "4", "--latency", "0.01", "--concurrency", "2"],
            "wall / ideal:",
        ),
        ("startup.py", ["--runs", "1"], "react-cli --help: median"),
        ("pathological.py", ["--repeat", "1", "--sizes", "1000,2000"], "worst growth per"),
        ("methods.py", ["--samples", "3", "--n", "ignore", "--limit", "2"], "in one pass"),
    ],
)
def test_bench_script_runs(script: str, args: list[str], figure: str) -> None:
    result = subprocess.run(
        [sys.executable, str(BENCH / script), *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert figure in result.stdout
