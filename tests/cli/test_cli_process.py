"""What only a process of its own can show: exit codes through the console script (2 for usage,
1 on a full disk, 130 on Ctrl-C), Ctrl-C as a real SIGINT, a full disk on stdout, a reader that
goes away. Every other CLI test runs in-process (``support/inproc.py``)."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import REACT_CLI, ROOT, cli_env, only_trace, run_cli
from eval_fakes import HOTPOT, HOTPOT_SCRIPTS, PerQuestion, Q, finish, rows_of, summary_of
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, Reply, scripted
from inproc import GOOD_RUN, QUESTION, servers_env


def start(args: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    """Start the console script in the background, its output piped."""
    return subprocess.Popen(
        [str(REACT_CLI), *args],
        env=env,
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def interrupt_when(
    proc: subprocess.Popen[str], ready: Callable[[], bool], settle_s: float = 0.0
) -> tuple[str, str]:
    """Send SIGINT ``settle_s`` after ``ready()`` is true (within 20 s); return stdout, stderr."""
    deadline = time.monotonic() + 20
    while not ready() and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(settle_s)
    proc.send_signal(signal.SIGINT)
    return proc.communicate(timeout=20)


def test_no_model_configured_is_a_usage_error(home: Path) -> None:
    result = run_cli(["ask", "q"], cli_env(home))
    assert result.code == 2
    assert result.stderr.startswith("Error: no model configured")


def test_ctrl_c_writes_the_trace_and_exits_130(home: Path, wiki: FakeMediaWiki) -> None:
    replies = [*scripted(GOOD_RUN[0]), Reply(GOOD_RUN[1], delay_s=30)]
    with FakeOpenAI(replies) as llm:
        proc = start(["ask", QUESTION], cli_env(home, **servers_env(llm, wiki)))
        stdout, stderr = interrupt_when(proc, lambda: len(llm.requests) >= 2)
    assert proc.returncode == 130, stderr
    assert stdout == ""
    assert stderr.startswith("Error: interrupted")
    assert "Traceback" not in stderr
    trace = only_trace(home)
    assert trace["stop_reason"] == "interrupted"
    assert trace["steps"][0]["actions"][0]["action"] == "Search[Arthur's Magazine]"


def test_ctrl_c_keeps_results_and_exits_130(
    home: Path, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    late: list[str | Reply] = [Reply(finish("late"), delay_s=30)]
    slow = {**HOTPOT_SCRIPTS, **dict.fromkeys(Q[2:], late)}
    results = out / "results.jsonl"

    def two_rows_written() -> bool:
        return results.exists() and len(results.read_text().splitlines()) >= 2

    with FakeOpenAI(PerQuestion(slow)) as llm:
        # 4 at once, fixed: the two slow questions hold two requests, the others finish
        args = ["eval", str(HOTPOT), "--out", str(out), "--concurrency", "4"]
        proc = start(args, cli_env(home, **servers_env(llm, wiki)))
        stdout, stderr = interrupt_when(proc, two_rows_written, settle_s=0.2)
    assert proc.returncode == 130, stderr
    assert stderr.strip().splitlines()[-1] == (
        f"Error: interrupted; 2 results kept in {out}; continue with: react-cli eval --resume {out}"
    )
    assert "Traceback" not in stderr
    assert [row["index"] for row in rows_of(out)] == [0, 1]
    assert summary_of(out)["status"] == "interrupted" and summary_of(out)["n"] == 2
    assert stdout == f"{out / 'summary.json'}\n"


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_full_disk_on_stdout_is_one_error_line() -> None:
    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            [str(REACT_CLI), "prompts", "show", "hotpotqa"],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
    assert proc.returncode == 1
    assert proc.stderr == "Error: cannot write the output: No space left on device\n"


def test_a_reader_that_goes_away_ends_ask_quietly_with_its_trace(
    home: Path, wiki: FakeMediaWiki
) -> None:
    """``ask -v … 2>&1 | head -c 1``: the first failed write (stderr's, mid-run) no longer ends
    the run without its trace; it goes on to its end, writes the trace and exits 1 quietly."""
    with FakeOpenAI(scripted(*GOOD_RUN)) as llm:
        env = cli_env(home, **servers_env(llm, wiki), QUESTION=QUESTION, REACT_CLI=str(REACT_CLI))
        script = '"$REACT_CLI" ask -v "$QUESTION" 2>&1 | head -c 1; echo " ${PIPESTATUS[0]}"'
        done = subprocess.run(["bash", "-c", script], env=env, capture_output=True, timeout=60)
    assert done.stdout == b"Q 1\n", done
    assert only_trace(home)["answer"] == "Arthur's Magazine"
