"""The eval folder under stress: a second run, torn rows, a disk that stops growing, questions
that used to kill a worker, two runs in one second, Ctrl-C at every stage.

Each ends with the documented exit code, at most one ``Error:`` line, no traceback, and a
summary whose counts equal the rows on disk."""

from __future__ import annotations

import errno
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, CliResult, cli_env
from eval_fakes import PerQuestion, finish
from fake_openai import FakeOpenAI, Reply
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from inproc import Runner, one_error_line

from react_cli.eval.files import lock_folder

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "eval"
HOTPOT = FIXTURES / "hotpotqa_dev_first6.json"
QUESTIONS = [row["question"] for row in json.loads(HOTPOT.read_text(encoding="utf-8"))]
CLOSED_WIKI = "http://127.0.0.1:9"  # every question finishes at step 1: the wiki is never asked


@pytest.fixture(scope="module")
def llm() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(PerQuestion({}, default=[finish("Émile Zola")])) as server:
        yield server


@pytest.fixture(scope="module")
def finished_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    """Folders of finished runs by --limit, made once and copied by :func:`finished_run`."""
    return {0: tmp_path_factory.mktemp("finished")}


def finished_run(
    cli: Runner, llm: FakeOpenAI, runs: dict[int, Path], out: Path, limit: int
) -> None:
    """``out``: the folder of a finished ``eval --limit LIMIT`` over the HotpotQA fixture."""
    if limit not in runs:
        assert run_eval(cli, llm, "--out", str(out), "--limit", str(limit)).code == 0
        runs[limit] = runs[0] / str(limit)
        shutil.copytree(out, runs[limit])
    else:
        shutil.copytree(runs[limit], out)


def run_eval(cli: Runner, llm: FakeOpenAI, *args: str, dataset: Path = HOTPOT) -> CliResult:
    env = {"OPENAI_BASE_URL": llm.url, "REACT_CLI_MODEL": "m", "REACT_CLI_WIKI": CLOSED_WIKI}
    return cli(["eval", str(dataset), *args], **env)


def rows_on_disk(out: Path) -> list[dict[str, Any]]:
    text = (out / "results.jsonl").read_text(encoding="utf-8")
    assert text == "" or text.endswith("\n")
    return [json.loads(line) for line in text.splitlines()]


def summary_of(out: Path) -> dict[str, Any]:
    summary: dict[str, Any] = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    return summary


def assert_consistent(out: Path) -> dict[str, Any]:
    """The summary counts exactly the rows on disk."""
    rows, summary = rows_on_disk(out), summary_of(out)
    assert summary["n"] == len(rows)
    assert summary["failed"] == sum(row["stop_reason"] == "error" for row in rows)
    return summary


def no_traceback(result: CliResult) -> None:
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert "Exception in thread" not in result.stderr


def the_error_line(stderr: str) -> str:
    """The one ``Error:`` line among progress and summary lines."""
    errors = [line for line in stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, stderr
    return errors[0]


# --- (a) one run per folder ----------------------------------------------------------------------


def test_a_second_run_on_a_folder_in_use_is_refused(
    cli: Runner, llm: FakeOpenAI, finished_runs: dict[int, Path], tmp_path: Path
) -> None:
    out = tmp_path / "run"
    finished_run(cli, llm, finished_runs, out, 2)
    before = (out / "results.jsonl").read_bytes()
    requests = len(llm.requests)
    holder = lock_folder(out)  # what a running `eval --resume` holds
    try:
        second = run_eval(cli, llm, "--resume", str(out))
    finally:
        holder.close()
    assert second.code == 2 and second.stdout == ""
    assert "is in use by another react-cli eval" in one_error_line(second.stderr)
    assert len(llm.requests) == requests and (out / "results.jsonl").read_bytes() == before
    third = run_eval(cli, llm, "--resume", str(out))  # the lock goes with the run holding it
    assert third.code == 0, third.stderr
    assert assert_consistent(out)["n"] == 6


def test_a_new_eval_s_folder_may_hold_a_lock_file_but_not_a_held_lock(
    cli: Runner, llm: FakeOpenAI, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    out.mkdir()
    holder = lock_folder(out)  # another new eval passed the empty check and took the lock
    try:
        refused = run_eval(cli, llm, "--out", str(out), "--limit", "1")
    finally:
        holder.close()
    assert refused.code == 2 and refused.stdout == ""
    assert "is in use by another react-cli eval" in one_error_line(refused.stderr)
    assert sorted(p.name for p in out.iterdir()) == [".lock"]
    result = run_eval(cli, llm, "--out", str(out), "--limit", "1")  # a lock file alone: empty
    assert result.code == 0, result.stderr
    assert assert_consistent(out)["n"] == 1


def test_a_folder_filled_between_the_empty_check_and_the_lock_is_refused(
    cli: Runner,
    llm: FakeOpenAI,
    finished_runs: dict[int, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two new evals on one --out: the second takes the lock after the first has finished,
    and must see the folder is no longer empty rather than add its rows to the first's."""
    from react_cli.eval import store

    out, other = tmp_path / "run", tmp_path / "other"
    finished_run(cli, llm, finished_runs, other, 1)
    real_lock = store.lock_folder

    def the_other_eval_ran_first(folder: Path) -> Any:
        for name in ("results.jsonl", "summary.json"):
            shutil.copy(other / name, folder / name)
        return real_lock(folder)

    monkeypatch.setattr(store, "lock_folder", the_other_eval_ran_first)
    requests = len(llm.requests)
    result = run_eval(cli, llm, "--out", str(out), "--limit", "2")
    assert result.code == 2 and len(llm.requests) == requests
    assert one_error_line(result.stderr).startswith(f"Error: {out} holds an earlier run: ")
    assert (out / "results.jsonl").read_bytes() == (other / "results.jsonl").read_bytes()


# --- (b) a torn last row -------------------------------------------------------------------------


FIXTURE_OK = [HealthCheck.function_scoped_fixture]  # each example makes its own folder


@settings(max_examples=6, deadline=None, suppress_health_check=FIXTURE_OK)
@given(cut=st.integers(min_value=1, max_value=10_000))
def test_a_row_cut_anywhere_never_stops_a_resume(
    cli: Runner,
    llm: FakeOpenAI,
    finished_runs: dict[int, Path],
    tmp_path_factory: pytest.TempPathFactory,
    cut: int,
) -> None:
    out = tmp_path_factory.mktemp("torn") / "run"
    finished_run(cli, llm, finished_runs, out, 3)
    data = (out / "results.jsonl").read_bytes()
    last_start = data.rstrip(b"\n").rfind(b"\n") + 1
    cut_at = last_start + 1 + cut % (len(data) - last_start - 2)  # inside the last row
    assert "É".encode() in data[last_start:]  # the answer holds a two-byte character to cut
    (out / "results.jsonl").write_bytes(data[:cut_at])
    result = run_eval(cli, llm, "--resume", str(out), "--limit", "3")
    assert result.code == 0, result.stderr
    no_traceback(result)
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "results.jsonl" in warnings[0] and "cut short" in warnings[0]
    assert "Error:" not in result.stderr
    rows = rows_on_disk(out)
    assert sorted(row["index"] for row in rows) == [0, 1, 2]  # the torn question ran again
    assert assert_consistent(out)["status"] == "finished"


def test_a_last_row_that_only_lost_its_newline_is_kept(
    cli: Runner, llm: FakeOpenAI, finished_runs: dict[int, Path], tmp_path: Path
) -> None:
    out = tmp_path / "run"
    finished_run(cli, llm, finished_runs, out, 2)
    results = out / "results.jsonl"
    results.write_bytes(results.read_bytes().rstrip(b"\n"))
    requests = len(llm.requests)
    result = run_eval(cli, llm, "--resume", str(out), "--limit", "2")
    assert result.code == 0 and "Warning" not in result.stderr
    assert len(llm.requests) == requests and len(rows_on_disk(out)) == 2


# --- (c) a results file that cannot grow ---------------------------------------------------------

LIMIT_BYTES = 12_000


def test_results_that_cannot_grow_stop_the_run_with_one_error(tmp_path: Path, home: Path) -> None:
    """RLIMIT_FSIZE in a child process: the third row does not fit in results.jsonl (a trace
    and the summary still do), as on a disk that fills up during the run."""
    dataset = tmp_path / "long.jsonl"
    rows = [{"question": f"Question {i}: " + "why " * 900, "answer": "a"} for i in range(6)]
    dataset.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    prompt = tmp_path / "tiny.txt"
    prompt.write_text("Answer.\nQuestion: {question}\n", encoding="utf-8")
    out = tmp_path / "run"

    def limit_file_size() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT_BYTES, LIMIT_BYTES))

    with FakeOpenAI(PerQuestion({}, default=[finish("a")])) as llm:
        args = ["eval", str(dataset), "--out", str(out), "--prompt", str(prompt)]
        env = cli_env(home, OPENAI_BASE_URL=llm.url, REACT_CLI_MODEL="m")
        proc = subprocess.run(
            [sys.executable, "-m", "react_cli", *args, "--concurrency", "1"],
            env={**env, "REACT_CLI_WIKI": CLOSED_WIKI},
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
            preexec_fn=limit_file_size,
        )
    assert proc.returncode == 1, proc.stderr
    no_traceback(CliResult(proc.returncode, proc.stdout, proc.stderr))
    line = the_error_line(proc.stderr)
    assert line.startswith(f"Error: {out / 'results.jsonl'}: cannot write (File too large); ")
    assert "--resume" in line
    kept = rows_on_disk(out)
    assert 0 < len(kept) < 6
    assert (out / "results.jsonl").stat().st_size <= LIMIT_BYTES
    summary = assert_consistent(out)
    assert summary["status"] == "failed"


@pytest.mark.parametrize("full_from_then_on", [False, True])
def test_a_summary_that_cannot_be_written_takes_its_row_back(
    cli: Runner,
    llm: FakeOpenAI,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    full_from_then_on: bool,
) -> None:
    """The disk fills between a row and its summary: the row goes, so the counts still agree;
    when the final summary cannot be written either, the one written last still agrees."""
    from react_cli.infra.files import write_json_atomic as real_write

    writes = {"n": 0}

    def disk_full_at_the_third_row(path: Path, document: dict[str, Any]) -> None:
        writes["n"] += 1  # 1: the summary at start, then one per row
        if writes["n"] == 4 or (full_from_then_on and writes["n"] > 4):
            raise OSError(errno.ENOSPC, "No space left on device")
        real_write(path, document)

    monkeypatch.setattr("react_cli.eval.store.write_json_atomic", disk_full_at_the_third_row)
    out = tmp_path / "run"
    result = run_eval(cli, llm, "--out", str(out), "--concurrency", "1")
    assert result.code == 1
    no_traceback(result)
    line = the_error_line(result.stderr)
    assert line.startswith(f"Error: {out / 'summary.json'}: cannot write (No space left on device)")
    assert "2 results kept" in line
    summary = assert_consistent(out)
    assert summary["n"] == 2
    assert summary["status"] == ("running" if full_from_then_on else "failed")


# --- (d) questions that used to kill a worker ----------------------------------------------------


@settings(max_examples=6, deadline=None, suppress_health_check=FIXTURE_OK)
@given(
    escapes=st.lists(  # low surrogates: two in a row never make a pair
        st.integers(min_value=0xDC00, max_value=0xDFFF).map(lambda c: f"\\u{c:04x}"),
        min_size=1,
        max_size=3,
    )
)
def test_a_question_with_lone_surrogates_is_run_like_any_other(
    cli: Runner, llm: FakeOpenAI, tmp_path_factory: pytest.TempPathFactory, escapes: list[str]
) -> None:
    folder = tmp_path_factory.mktemp("surrogates")
    dataset, out = folder / "data.jsonl", folder / "run"
    lines = [json.dumps({"question": f"Question {i}?", "answer": "a"}) for i in range(5)]
    lines[2] = '{"question": "Who ' + "".join(escapes) + ' is?", "answer": "\\ud800"}'
    dataset.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = run_eval(cli, llm, "--out", str(out), dataset=dataset)
    assert result.code == 0, result.stderr
    no_traceback(result)
    summary = assert_consistent(out)
    assert summary["n"] == 5 and summary["status"] == "finished" and summary["failed"] == 0
    row = next(row for row in rows_on_disk(out) if row["index"] == 2)
    assert row["question"] == "Who " + "\ufffd" * len(escapes) + " is?"
    assert cli(["replay", str(out / row["trace"])]).code == 0


def test_a_worker_crash_is_a_row_not_a_lost_question(
    cli: Runner, llm: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from react_cli.eval import question

    real = question.score

    def crash_on_the_third(example: Any, answer: str | None, fever: bool) -> Any:
        if example.index == 2:
            raise RuntimeError("a bug in scoring")
        return real(example, answer, fever)

    monkeypatch.setattr(question, "score", crash_on_the_third)
    out = tmp_path / "run"
    result = run_eval(cli, llm, "--out", str(out))
    assert result.code == 1
    no_traceback(result)
    assert the_error_line(result.stderr).startswith("Error: 1 question failed")
    summary = assert_consistent(out)
    assert summary["n"] == 6 and summary["failed"] == 1 and summary["status"] == "finished"
    row = next(row for row in rows_on_disk(out) if row["index"] == 2)
    assert row["stop_reason"] == "error" and row["error"] == "RuntimeError: a bug in scoring"
    monkeypatch.setattr(question, "score", real)
    again = run_eval(cli, llm, "--resume", str(out))  # a failed question is retried
    assert again.code == 0 and assert_consistent(out)["failed"] == 0


# --- (e) default folder names --------------------------------------------------------------------


def test_two_runs_started_in_the_same_second_get_their_own_folders(
    cli: Runner, llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    second = datetime(2026, 11, 30, 12, 0, 0, tzinfo=timezone.utc)
    monkeypatch.setattr("react_cli.eval.plan.now_utc", lambda: second)
    first = run_eval(cli, llm, "--limit", "1")
    again = run_eval(cli, llm, "--limit", "1")
    assert first.code == again.code == 0, (first.stderr, again.stderr)
    paths = {Path(first.stdout.strip()).parent, Path(again.stdout.strip()).parent}
    assert len(paths) == 2
    for path in paths:
        assert path.name.startswith("20261130T120000Z-")
        assert path.name.endswith("-hotpotqa-dev-first6")


# --- files in the folder that are not rows -------------------------------------------------------

BAD_RESULTS: dict[str, str | bytes] = {
    "deep": "[" * 100_000 + "]" * 100_000 + "\n",
    "huge-number": '{"index": 1e400}\n',
    "nan": '{"index": NaN}\n',
    "long-integer": '{"index": ' + "9" * 5000 + "}\n",
    "not-utf8": b'{"question": "\xff"}\n',
    "not-an-object": "[1, 2]\n",
    "no-index": '{"question": "q", "stop_reason": "finish"}\n',
    "em-as-text": (
        '{"index": 0, "question": "q", "stop_reason": "finish", "em": "1", "f1": 1, '
        '"steps": 1, "tokens": 1, "latency_s": 1}\n'
    ),
}


@pytest.mark.parametrize("name", sorted(BAD_RESULTS))
def test_a_bad_row_before_the_last_is_one_error_naming_the_line(
    cli: Runner, llm: FakeOpenAI, finished_runs: dict[int, Path], tmp_path: Path, name: str
) -> None:
    out = tmp_path / "run"
    finished_run(cli, llm, finished_runs, out, 2)
    good = (out / "results.jsonl").read_bytes()
    bad = BAD_RESULTS[name]
    (out / "results.jsonl").write_bytes((bad.encode() if isinstance(bad, str) else bad) + good)
    requests = len(llm.requests)
    result = run_eval(cli, llm, "--resume", str(out))
    assert result.code == 2 and result.stdout == ""
    assert one_error_line(result.stderr).startswith(f"Error: {out / 'results.jsonl'} line 1: ")
    assert len(llm.requests) == requests


@pytest.mark.parametrize("content", ['{"n": 1e400}', "[" * 100_000, '"text"', "{"])
def test_a_bad_summary_is_one_error_naming_it(
    cli: Runner, llm: FakeOpenAI, finished_runs: dict[int, Path], tmp_path: Path, content: str
) -> None:
    out = tmp_path / "run"
    finished_run(cli, llm, finished_runs, out, 1)
    (out / "summary.json").write_text(content, encoding="utf-8")
    result = run_eval(cli, llm, "--resume", str(out))
    assert result.code == 2
    assert one_error_line(result.stderr).startswith(f"Error: {out / 'summary.json'}: ")


@pytest.mark.parametrize("kind", ["fifo", "symlink-to-device", "directory"])
@pytest.mark.parametrize("name", ["results.jsonl", "summary.json", ".lock"])
def test_folder_entries_that_are_not_files_are_refused_untouched(
    cli: Runner,
    llm: FakeOpenAI,
    finished_runs: dict[int, Path],
    tmp_path: Path,
    kind: str,
    name: str,
) -> None:
    out = tmp_path / "run"
    finished_run(cli, llm, finished_runs, out, 1)
    path = out / name
    path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    else:
        path.symlink_to("/dev/null")
    result = run_eval(cli, llm, "--resume", str(out))
    assert result.code == 2, result.stderr
    assert str(path) in one_error_line(result.stderr)
    assert path.is_symlink() if kind == "symlink-to-device" else not path.is_file()


# --- Ctrl-C at every stage -----------------------------------------------------------------------


def interrupt_main_thread() -> None:
    """What the terminal does on Ctrl-C: SIGINT, handled by the main thread."""
    signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)


STAGES = [
    "react_cli.eval.plan.load_dataset",
    "react_cli.eval.store.read_rows",
    "react_cli.eval.store.read_summary",
    "react_cli.eval.store.write_atomic",  # the rows rewritten without failures
]


@pytest.mark.parametrize("stage", STAGES)
def test_ctrl_c_while_starting_keeps_the_folder_as_it_was(
    cli: Runner,
    llm: FakeOpenAI,
    finished_runs: dict[int, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    stage: str,
) -> None:
    out = tmp_path / "run"
    finished_run(cli, llm, finished_runs, out, 2)
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}

    def pressed(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(stage, pressed)
    result = run_eval(cli, llm, "--resume", str(out))
    assert result.code == 130 and result.stdout == ""
    assert one_error_line(result.stderr) == "Error: interrupted"
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before
    monkeypatch.undo()
    assert run_eval(cli, llm, "--resume", str(out)).code == 0  # and the lock was let go


def test_double_ctrl_c_still_leaves_a_consistent_summary(
    cli: Runner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first Ctrl-C while questions run, the second while the final summary is written."""
    from react_cli.infra.files import write_json_atomic as real_write

    calls = {"n": 0}

    def model(body: dict[str, Any]) -> Reply:
        calls["n"] += 1
        if calls["n"] == 3:
            interrupt_main_thread()
        return Reply(text=finish("a"), delay_s=0.05)

    def write_and_press(path: Path, document: dict[str, Any]) -> None:
        if document.get("status") == "interrupted":
            interrupt_main_thread()
        real_write(path, document)

    monkeypatch.setattr("react_cli.eval.store.write_json_atomic", write_and_press)
    out = tmp_path / "run"
    with FakeOpenAI(model) as llm:
        result = run_eval(cli, llm, "--out", str(out), "--concurrency", "1")
    assert result.code == 130, result.stderr
    no_traceback(result)
    assert result.stderr.splitlines()[-1].startswith("Error: interrupted; ")
    summary = assert_consistent(out)
    assert summary["status"] == "interrupted" and 1 <= summary["n"] < 6
