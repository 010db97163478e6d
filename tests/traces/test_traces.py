"""Trace files in-process: forks (`ask --from-trace`), broken, missing and old trace files,
the `traces` listing, and the shipped examples."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from conftest import ROOT
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, scripted
from inproc import GOOD_RUN, QUESTION, CliResult, Runner, edit_json, servers_env

from react_cli.traces.trace import load_trace

EXAMPLES = sorted((ROOT / "examples" / "traces").glob("*.json"))


# --- forks --------------------------------------------------------------------------------


def fork_at_step_2(
    cli: Runner, wiki: FakeMediaWiki, *texts: str
) -> tuple[Path, Path, CliResult, FakeOpenAI]:
    """Record GOOD_RUN, then fork it live from step 2 with a model scripted with ``texts``:
    the recorded trace, the fork's trace, the fork's result and its model."""
    path = cli.record(wiki, *GOOD_RUN)
    fork_path = cli.home / "fork.json"
    with FakeOpenAI(scripted(*texts)) as llm:
        args = ["ask", "--from-trace", str(path), "--from-step", "2", "--trace", str(fork_path)]
        result = cli(args, **servers_env(llm, wiki))
    assert result.code == 0, result.stderr
    return path, fork_path, result, llm


def test_fork_continues_live_from_step_k(cli: Runner, wiki: FakeMediaWiki) -> None:
    new_steps = (" Let me check the other one.\nAction 2: Search[First for Women]", GOOD_RUN[2])
    path, fork_path, result, llm = fork_at_step_2(cli, wiki, *new_steps)
    assert result.stdout == "Arthur's Magazine\n"
    assert len(llm.requests) == 2  # step 1 came from the trace
    prompt = llm.requests[0].json["messages"][0]["content"]
    original = load_trace(path)
    seen = original["steps"][0]["actions"][0]["observation"]
    assert prompt.endswith(GOOD_RUN[0] + f"\nObservation 1: {seen}\nThought 2:")
    forked = load_trace(fork_path)
    assert forked["forked_from"] == {"trace": str(path), "id": original["id"], "step": 2}
    assert forked["steps"][0]["replies"] == original["steps"][0]["replies"]
    assert forked["steps"][1]["thought"] == "Let me check the other one."
    assert forked["question"] == QUESTION


def test_fork_restores_the_page_for_a_live_lookup(cli: Runner, wiki: FakeMediaWiki) -> None:
    lookup = (" Check the year.\nAction 2: Lookup[Philadelphia]", GOOD_RUN[2])
    _, fork_path, _, _ = fork_at_step_2(cli, wiki, *lookup)
    looked = load_trace(fork_path)["steps"][1]["actions"][0]
    assert looked["observation"].startswith("(Result 1 / ")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--from-step", "4"], "--from-step must be between 1 and 3"),
        (["--from-step", "0"], "--from-step must be between 1 and 3"),
        ([], "needs both --from-trace TRACE and --from-step K"),
        (["--from-step", "1", "another question"], "give no QUESTION"),
    ],
)
def test_fork_usage_errors(cli: Runner, wiki: FakeMediaWiki, args: list[str], message: str) -> None:
    path = cli.record(wiki, *GOOD_RUN)
    edit_json(path, lambda d: d["steps"].pop())  # 2 steps: K may be 1..3
    result = cli(["ask", "--from-trace", str(path), *args], REACT_CLI_MODEL="m")
    assert result.code == 2, result.stderr
    assert result.stderr.startswith("Error: ") and message in result.stderr
    assert len(result.stderr.splitlines()) == 1


# --- broken files -------------------------------------------------------------------------

BROKEN = {
    "empty.json": ("", "empty file"),
    "truncated.json": ('{"version": 1, "question": "q", "steps": [', "truncated JSON"),
    "nonjson.json": ("this is not json", "not JSON"),
    "list.json": ("[1, 2]", "top level is not an object"),
    "future.json": ('{"version": 4, "question": "q"}', "unsupported trace version 4"),
    "noversion.json": ('{"question": "q"}', "unsupported trace version None"),
    "fields.json": ('{"version": 1, "question": "q"}', "missing stop_reason, steps"),
    "steps.json": (
        '{"version": 1, "question": "q", "stop_reason": "finish", "steps": [1]}',
        "malformed trace",
    ),
    "binary.json": (b"\xff\xfe\x00garbage", "cannot read trace"),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
@pytest.mark.parametrize("mode", [[], ["--rerun"]])
def test_broken_trace_is_one_line_exit_1(
    cli: Runner, tmp_path: Path, name: str, mode: list[str]
) -> None:
    content, problem = BROKEN[name]
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    result = cli(["replay", str(path), *mode])
    assert result.code == 1
    assert result.stdout == ""
    assert re.fullmatch(rf"Error: {re.escape(str(path))}: .*\n", result.stderr), result.stderr
    assert problem in result.stderr


@pytest.mark.parametrize("make", ["missing", "directory"])
def test_missing_trace_or_directory(cli: Runner, tmp_path: Path, make: str) -> None:
    path = tmp_path / "trace.json"
    if make == "directory":
        path.mkdir()
    result = cli(["replay", str(path)])
    assert result.code == 1
    expected = "no such trace file" if make == "missing" else "is a directory"
    assert re.fullmatch(rf"Error: {re.escape(str(path))}: {expected}.*\n", result.stderr)


def test_no_traces_yet(cli: Runner) -> None:
    result = cli(["replay"])
    assert result.code == 1 and result.stderr.startswith("Error: no traces in ")
    listed = cli(["traces"])
    assert listed.code == 0 and listed.stdout == "" and "no traces" in listed.stderr
    assert cli(["traces", "--json"]).stdout == "[]\n"


def test_usage_errors_of_replay(cli: Runner, wiki: FakeMediaWiki) -> None:
    path = cli.record(wiki, *GOOD_RUN)
    for args, message in [
        ([str(path), "-n", "1"], "either TRACE or -n"),
        (["-n", "0"], "-n must be at least 1"),
        ([str(path), "--step-delay", "-1"], "--step-delay must be"),
        ([str(path), "--rerun", "--step-delay", "1"], "--step-delay applies"),
        ([str(path), "-v"], "-v applies"),
        ([str(path), "--rerun", "--wiki", "http://x"], "--wiki applies"),
    ]:
        result = cli(["replay", *args])
        assert result.code == 2 and message in result.stderr, (args, result.stderr)
    assert cli(["replay", "-n", "5"]).code == 1


# --- browsing -----------------------------------------------------------------------------


def test_traces_lists_newest_first_and_replay_n_picks_older(
    cli: Runner, wiki: FakeMediaWiki
) -> None:
    first = cli.record(wiki, *GOOD_RUN)
    second = cli.record(wiki, " t\nAction 1: Search[Page 1]", args=("--max-steps", "1"), code=1)
    broken = cli.home / "traces" / "broken.json"
    broken.write_text("{", encoding="utf-8")
    for age, path in enumerate((broken, second, first)):
        os.utime(path, (1_700_000_000 - age * 60, 1_700_000_000 - age * 60))
    listed = cli(["traces", "--json"])
    assert listed.code == 0, listed.stderr
    rows = json.loads(listed.stdout)
    assert [row["path"] for row in rows] == [str(broken), str(second), str(first)]
    assert [row["n"] for row in rows] == [1, 2, 3]
    assert rows[0]["error"].startswith("truncated JSON")
    assert rows[1]["conversation"]["turn"] == 1  # each ask is a conversation's turn
    assert rows[1] | {"created": None, "conversation": None} == {
        "conversation": None,
        "n": 2,
        "path": str(second),
        "created": None,
        "question": QUESTION,
        "answer": None,
        "stop_reason": "max_steps",
        "steps": 1,
        "model": "test-model",
        "method": "react",
    }
    assert rows[2]["answer"] == "Arthur's Magazine"
    table = cli(["traces", "-n", "2"]).stdout.splitlines()
    assert len(table) == 3 and table[0].split()[:5] == ["#", "time", "method", "stop", "steps"]
    assert "broken" in table[1] and "broken.json: truncated JSON" in table[1]
    assert "max_steps" in table[2] and "test-model" in table[2] and "→ —" in table[2]
    older = cli(["replay", "-n", "3"])
    assert older.code == 0 and "Answer: Arthur's Magazine" in older.stdout
    newest = cli(["replay"])
    assert newest.code == 1 and newest.stderr.startswith(f"Error: {broken}: truncated JSON")


# --- format versions and shipped examples -------------------------------------------------


def test_a_version_1_document_is_upgraded_through_every_version(tmp_path: Path) -> None:
    """The loader's upgrade chain: version 1 to 2 (the method), 2 to 3 (replies and
    actions); a version-3 document is read as it is."""
    step = {"index": 1, "action": "Search[A]", "observation": "o", "raw": " t\nAction 1: Search[A]"}
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"version": 1, "question": "q", "stop_reason": "x", "steps": [step]}))
    document = load_trace(old)
    assert (document["version"], document["method"]) == (3, "react")
    assert document["steps"] == [
        {
            "index": 1,
            "thought": "",
            "replies": [{"cue": "thought", "text": " t\nAction 1: Search[A]"}],
            "actions": [
                {
                    "action": "Search[A]",
                    "call": {"name": "Search", "argument": "A", "id": None},
                    "observation": "o",
                    "details": {},
                }
            ],
            "error": None,
        }
    ]
    new = tmp_path / "new.json"
    new.write_text(json.dumps({**document, "steps": []}))
    assert load_trace(new)["steps"] == [] and load_trace(new)["version"] == 3


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_shipped_examples_replay_offline(
    cli: Runner, monkeypatch: pytest.MonkeyPatch, path: Path
) -> None:
    monkeypatch.chdir(ROOT)
    result = cli(["replay", str(path.relative_to(ROOT))])
    assert result.code == 0, result.stderr
    assert "Question: " in result.stdout and "stop: " in result.stdout
    text = path.read_text(encoding="utf-8")
    assert "/home/" not in text and "/root" not in text and "Bearer" not in text


def test_examples_are_shipped() -> None:
    assert len(EXAMPLES) >= 2
