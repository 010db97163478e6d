"""Each bench script still runs (with tiny parameters) and prints its figure; the figures
themselves are not tested. Run in this process, as ``python bench/SCRIPT`` would run them."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"


RUNS = [
    ("agent_overhead.py", ["--runs", "2", "--steps", "3"], ["agent overhead per step:"]),
    (
        "eval_throughput.py",
        ["--questions", "4", "--latency", "0.01", "--concurrency", "2", "--in-process"],
        ["wall / ideal:"],
    ),
    (
        "matrix.py",
        ["--questions", "3", "--latency", "0.01", "--concurrency", "2", "--in-process"],
        ["run / ideal:"],
    ),
    (
        "startup.py",
        ["--runs", "1"],
        ["react-cli --help: median", "react-cli ask (a closed port, exit 1): median"],
    ),
    ("pathological.py", ["--repeat", "1", "--sizes", "1000,2000"], ["worst growth per"]),
    ("methods.py", ["--samples", "3", "--n", "ignore", "--limit", "2"], ["in one pass"]),
    ("protocols.py", ["--limit", "1"], ["tools  per question:", "first call"]),
    (
        "otel_collectors.py",
        ["--runs", "1", "--timeout", "0.05"],
        ["spans received by the live collector: 6"],
    ),
    ("mcp_stdio.py", ["--sizes", "1000", "--repeat", "1", "--starts", "0"], ["react-cli"]),
    (
        "concurrency.py",
        [
            *("--endpoints", "cut", "--per-slot", "2", "--min-questions", "2"),
            *("--only", "1,auto", "--prompt-ms", "0", "--token-ms", "0", "--in-process"),
        ],
        ["cut: auto / best fixed (1)"],
    ),
    (
        "slow_start.py",
        [
            *("--endpoints", "queue1", "--questions", "2", "--only", "1,auto"),
            *("--prompt-ms", "0", "--token-ms", "0", "--in-process"),
        ],
        ["queue1: auto / best fixed (1)"],
    ),
    (
        "replicas.py",
        [
            *("--slots", "1", "--questions", "2", "--replicas", "1,2"),
            *("--prompt-ms", "0", "--token-ms", "0", "--in-process"),
        ],
        ["replicas", "1+1"],
    ),
    (
        "cache.py",
        ["--questions", "2", "--prompt-ms", "0", "--token-ms", "0", "--in-process"],
        ["second run: ", "same rows (answers and scores): True"],
    ),
    (
        "batch_eval.py",
        ["--questions", "4", "--most-steps", "2", "--polls", "0"],
        ["batch / live cost: 0.", "same rows (answers, scores, steps, tokens): True"],
    ),
    ("suite_time.py", ["--here", "--busy", "1", "--", "--version"], ["suite, 1 core(s) busy"]),
    (
        "share_speed.py",
        ["--questions", "4"],
        ["export per trace", "report: 4 questions", "compare: 4 paired questions"],
    ),
]


@pytest.mark.parametrize(("script", "args", "figures"), RUNS, ids=[run[0] for run in RUNS])
def test_bench_script_runs(
    script: str,
    args: list[str],
    figures: list[str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.syspath_prepend(str(BENCH))
    monkeypatch.setattr(sys, "argv", [script, *args])
    runpy.run_path(str(BENCH / script), run_name="__main__")
    out = capsys.readouterr().out
    for figure in figures:
        assert figure in out
