"""`react-cli replay`, `react-cli traces` and `ask --from-trace`, end to end in-process.

Traces are made by real `ask` runs against the local fake servers; replays and re-runs then run
with those servers stopped, to prove they need no network and no key.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, scripted
from inproc import GOOD_RUN, QUESTION, Runner, servers_env

from react_cli import trace as trace_module
from react_cli.replay import compare, load_run, rerun
from react_cli.trace import load_trace

EXAMPLES = sorted((ROOT / "examples" / "traces").glob("*.json"))


def record(
    cli: Runner, wiki: FakeMediaWiki, *texts: str, args: tuple[str, ...] = (), code: int = 0
) -> Path:
    """Run `ask` once against the fake servers (it exits with ``code``); return its trace."""
    target = cli.home / "traces" / f"run-{len(list(cli.home.glob('traces/*.json')))}.json"
    with FakeOpenAI(scripted(*texts)) as llm:
        result = cli.ask(llm, wiki, "--trace", str(target), *args)
    assert result.code == code, result.stderr
    return target


@pytest.fixture
def offline() -> dict[str, str]:
    """No key, no model, and endpoints that refuse connections (nothing listens there)."""
    with FakeOpenAI(scripted("unused")) as closed:
        url = closed.url
    return {"OPENAI_BASE_URL": url, "REACT_CLI_WIKI": url.removesuffix("/v1")}


def edit(path: Path, change: Any) -> None:
    document = json.loads(path.read_text(encoding="utf-8"))
    change(document)
    path.write_text(json.dumps(document), encoding="utf-8")


def without_timings(text: str) -> str:
    return re.sub(r"\d+\.\d+ s", "T s", text)


# --- rendering ----------------------------------------------------------------------------


def test_replay_renders_the_run_exactly_as_ask_v_showed_it(
    cli: Runner, wiki: FakeMediaWiki, offline: dict[str, str]
) -> None:
    with FakeOpenAI(scripted(*GOOD_RUN)) as llm:
        live = cli.ask(llm, wiki, "-v")
    assert live.code == 0
    shown = cli(["replay"], **offline)
    assert shown.code == 0, shown.stderr
    assert shown.stderr == ""
    assert without_timings(shown.stdout) == without_timings(live.stderr)
    for k, action in enumerate(("Search[Arthur's Magazine]", "Search[First for Women]"), 1):
        assert f"Action {k}: {action}" in shown.stdout
    assert "Action 3: Finish[Arthur's Magazine]" in shown.stdout
    assert "Observation 2: First for Women is a woman's magazine" in shown.stdout
    assert "stop: finish · 3 steps" in shown.stdout


def test_replay_of_a_path_with_step_delay(
    cli: Runner, wiki: FakeMediaWiki, offline: dict[str, str]
) -> None:
    path = record(cli, wiki, *GOOD_RUN)
    shown = cli(["replay", str(path), "--step-delay", "0.01"], **offline)
    assert shown.code == 0 and "Answer: Arthur's Magazine" in shown.stdout


def test_replay_shows_a_followup_action_call_and_no_answer(
    cli: Runner, wiki: FakeMediaWiki, offline: dict[str, str]
) -> None:
    path = record(
        cli, wiki, " I should look.", "Search[Arthur's Magazine]", args=("--max-steps", "1"), code=1
    )
    shown = cli(["replay", str(path)], **offline)
    assert shown.code == 0
    assert "Thought 1: I should look.\nAction 1: Search[Arthur's Magazine]\n" in shown.stdout
    assert "No answer (max_steps)" in shown.stdout


def test_replay_prints_untrusted_text_literally(
    cli: Runner, wiki: FakeMediaWiki, offline: dict[str, str]
) -> None:
    path = record(cli, wiki, *GOOD_RUN)
    edit(path, lambda d: d["steps"][0].update(raw=" [bold]x[/bold] \x1b[31mred\nAction 1: S[x]"))
    shown = cli(["replay", str(path)], **offline)
    assert "[bold]x[/bold] red" in shown.stdout and "\x1b" not in shown.stdout


def test_json_prints_the_trace_normalised(
    cli: Runner, wiki: FakeMediaWiki, offline: dict[str, str]
) -> None:
    path = record(cli, wiki, *GOOD_RUN)
    edit(path, lambda d: [step.pop("details") for step in d["steps"]])
    shown = cli(["replay", str(path), "--json"], **offline)
    data = json.loads(shown.stdout)
    assert data["answer"] == "Arthur's Magazine" and data["version"] == 1
    assert all(step["details"] == {} for step in data["steps"])
    assert data["steps"][0]["action"] == "Search[Arthur's Magazine]"


# --- re-runs ------------------------------------------------------------------------------


def test_rerun_reproduces_offline_with_servers_stopped(
    cli: Runner, offline: dict[str, str]
) -> None:
    with FakeMediaWiki.from_fixtures() as wiki:
        path = record(cli, wiki, *GOOD_RUN)
    result = cli(["replay", str(path), "--rerun"], **offline)
    assert result.code == 0, result.stdout + result.stderr
    assert result.stdout == "Arthur's Magazine\n" and result.stderr == ""
    verbose = cli(["replay", str(path), "--rerun", "-v", "--json"], **offline)
    assert json.loads(verbose.stdout) == {
        "reproduced": True,
        "answer": "Arthur's Magazine",
        "stop_reason": "finish",
        "differences": [],
    }
    assert "Thought 3:" in verbose.stderr


def test_rerun_detects_an_altered_raw_output(
    cli: Runner, wiki: FakeMediaWiki, offline: dict[str, str]
) -> None:
    path = record(cli, wiki, *GOOD_RUN)
    edit(path, lambda d: d["steps"][1].update(raw=" Hmm.\nAction 2: Search[Women]"))
    result = cli(["replay", str(path), "--rerun"], **offline)
    assert result.code == 1
    assert result.stdout == (
        f"The re-run differs from {path}:\n"
        "step 2 action:\n"
        "  - Search[First for Women]\n"
        "  + Search[Women]\n"
    )
    assert result.stderr == (
        "Error: the re-run differs from the recorded run (step 2 action first)\n"
    )


def test_rerun_detects_a_parser_that_now_needs_another_call(
    cli: Runner, wiki: FakeMediaWiki, offline: dict[str, str]
) -> None:
    path = record(cli, wiki, *GOOD_RUN)
    edit(path, lambda d: d["steps"][2].update(raw=" I am done, no action written."))
    result = cli(["replay", str(path), "--rerun"], **offline)
    assert result.code == 1
    assert "answer:\n  - Arthur's Magazine\n  + (none)\n" in result.stdout
    assert "the trace holds no model output for 'Action 3:'" in result.stdout


def test_rerun_reproduces_runs_that_ended_without_an_answer(
    cli: Runner, wiki: FakeMediaWiki, offline: dict[str, str]
) -> None:
    loop = [f" t\nAction {i}: Search[Page {i}]" for i in range(1, 3)]
    limited = record(cli, wiki, *loop, args=("--max-steps", "2"), code=1)
    with FakeOpenAI(scripted("unused")) as closed:
        url = closed.url
    down = cli.home / "traces" / "down.json"
    cli.config(retries=0)  # fail fast, no backoff
    failed = cli(
        ["ask", QUESTION, "--trace", str(down)],
        OPENAI_BASE_URL=url,
        REACT_CLI_MODEL="m",
        REACT_CLI_WIKI=wiki.url,
    )
    assert failed.code == 1
    assert load_trace(down)["stop_reason"] == "llm_error"
    said = {
        limited: "reproduced the recorded run: no answer (max_steps) after 2 steps\n",
        down: "reproduced the recorded run: no answer (llm_error) after 1 step\n",
    }
    for path in (limited, down):
        result = cli(["replay", str(path), "--rerun"], **offline)
        assert (result.code, result.stdout, result.stderr) == (0, "", said[path]), path


def test_rerun_reproduces_a_forced_answer(
    cli: Runner, wiki: FakeMediaWiki, offline: dict[str, str]
) -> None:
    loop = [f" t\nAction {i}: Search[Page {i}]" for i in range(1, 3)]
    path = record(
        cli, wiki, *loop, "Arthur's Magazine]", args=("--max-steps", "2", "--force-answer")
    )
    assert load_trace(path)["forced"] is True
    result = cli(["replay", str(path), "--rerun"], **offline)
    assert (result.code, result.stdout, result.stderr) == (0, "Arthur's Magazine\n", "")


def test_live_tools_show_wikipedia_drift(
    cli: Runner, wiki: FakeMediaWiki, offline: dict[str, str]
) -> None:
    path = record(cli, wiki, *GOOD_RUN)
    same = cli(["replay", str(path), "--live-tools", "--wiki", wiki.url], **offline)
    assert same.code == 0 and same.stdout == "Arthur's Magazine\n", same.stdout + same.stderr
    drifted = {
        "Arthur's Magazine": "Arthur's Magazine was a periodical. It started in 1850.",
        "First for Women": "First for Women is a magazine. It started in 1989.",
    }
    with FakeMediaWiki(drifted) as changed:
        result = cli(["replay", str(path), "--live-tools", "--wiki", changed.url], **offline)
    assert result.code == 1
    assert "step 1 observation:\n" in result.stdout
    assert "  + Arthur's Magazine was a periodical. It started in 1850." in result.stdout


# --- forks --------------------------------------------------------------------------------


def test_fork_continues_live_from_step_k(cli: Runner, wiki: FakeMediaWiki) -> None:
    path = record(cli, wiki, *GOOD_RUN)
    fork_path = cli.home / "fork.json"
    new_steps = (" Let me check the other one.\nAction 2: Search[First for Women]", GOOD_RUN[2])
    with FakeOpenAI(scripted(*new_steps)) as llm:
        args = ["ask", "--from-trace", str(path), "--from-step", "2", "--trace", str(fork_path)]
        result = cli(args, **servers_env(llm, wiki))
    assert result.code == 0, result.stderr
    assert result.stdout == "Arthur's Magazine\n"
    assert len(llm.requests) == 2  # step 1 came from the trace
    prompt = llm.requests[0].json["messages"][0]["content"]
    original = load_trace(path)
    assert prompt.endswith(
        GOOD_RUN[0] + f"\nObservation 1: {original['steps'][0]['observation']}\nThought 2:"
    )
    forked = load_trace(fork_path)
    assert forked["forked_from"] == {"trace": str(path), "id": original["id"], "step": 2}
    assert forked["steps"][0]["raw"] == original["steps"][0]["raw"]
    assert forked["steps"][1]["thought"] == "Let me check the other one."
    assert forked["question"] == QUESTION


def test_fork_restores_the_page_for_a_live_lookup(cli: Runner, wiki: FakeMediaWiki) -> None:
    path = record(cli, wiki, *GOOD_RUN)
    fork_path = cli.home / "fork.json"
    lookup = (" Check the year.\nAction 2: Lookup[Philadelphia]", GOOD_RUN[2])
    with FakeOpenAI(scripted(*lookup)) as llm:
        args = ["ask", "--from-trace", str(path), "--from-step", "2", "--trace", str(fork_path)]
        result = cli(args, **servers_env(llm, wiki))
    assert result.code == 0, result.stderr
    assert load_trace(fork_path)["steps"][1]["observation"].startswith("(Result 1 / ")


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
    path = record(cli, wiki, *GOOD_RUN)
    edit(path, lambda d: d["steps"].pop())  # 2 steps: K may be 1..3
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
    "future.json": ('{"version": 2, "question": "q"}', "unsupported trace version 2"),
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
    path = record(cli, wiki, *GOOD_RUN)
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
    first = record(cli, wiki, *GOOD_RUN)
    second = record(cli, wiki, " t\nAction 1: Search[Page 1]", args=("--max-steps", "1"), code=1)
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
    assert rows[1] | {"created": None} == {
        "n": 2,
        "path": str(second),
        "created": None,
        "question": QUESTION,
        "answer": None,
        "stop_reason": "max_steps",
        "steps": 1,
        "model": "test-model",
    }
    assert rows[2]["answer"] == "Arthur's Magazine"
    table = cli(["traces", "-n", "2"]).stdout.splitlines()
    assert len(table) == 3 and table[0].split()[:4] == ["#", "time", "stop", "steps"]
    assert "broken" in table[1] and "broken.json: truncated JSON" in table[1]
    assert "max_steps" in table[2] and "test-model" in table[2] and "→ —" in table[2]
    older = cli(["replay", "-n", "3"])
    assert older.code == 0 and "Answer: Arthur's Magazine" in older.stdout
    newest = cli(["replay"])
    assert newest.code == 1 and newest.stderr.startswith(f"Error: {broken}: truncated JSON")


# --- format versions and shipped examples -------------------------------------------------


def test_version_1_keeps_loading_when_version_2_arrives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loader's upgrade chain: a v1 document is upgraded, a v2 one read as is."""

    def v1_to_v2(document: dict[str, Any]) -> dict[str, Any]:
        return {**document, "version": 2, "tags": []}

    monkeypatch.setattr(trace_module, "TRACE_VERSION", 2)
    monkeypatch.setattr(trace_module, "_UPGRADES", {1: v1_to_v2})
    monkeypatch.setattr(trace_module, "READABLE_VERSIONS", frozenset({1, 2}))
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"version": 1, "question": "q", "stop_reason": "x", "steps": []}))
    assert load_trace(old) == {
        "version": 2,
        "question": "q",
        "stop_reason": "x",
        "steps": [],
        "tags": [],
    }
    new = tmp_path / "new.json"
    new.write_text(json.dumps({"version": 2, "question": "q", "stop_reason": "x", "steps": []}))
    assert load_trace(new)["version"] == 2


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


# --- re-running recorded endings, in process ----------------------------------------------


def synthetic(tmp_path: Path, stop_reason: str, steps: list[dict[str, Any]], **extra: Any) -> Path:
    document = {
        "version": 1,
        "question": "q",
        "answer": extra.pop("answer", None),
        "stop_reason": stop_reason,
        "config": {"max_steps": 8, **extra.pop("config", {})},
        "steps": steps,
        **extra,
    }
    path = tmp_path / "t.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def search_step(k: int, entity: str, tokens: int = 10) -> dict[str, Any]:
    return {
        "index": k,
        "action": f"Search[{entity}]",
        "observation": f"About {entity}.",
        "raw": f" t\nAction {k}: Search[{entity}]",
        "usage": {"prompt_tokens": tokens, "completion_tokens": 0},
    }


@pytest.mark.parametrize(
    ("stop_reason", "last", "error"),
    [
        ("interrupted", {"index": 2, "raw": ""}, "interrupted by the user"),
        ("llm_error", {"index": 2, "raw": "", "error": "boom"}, "boom"),
        (
            "llm_error",
            {"index": 2, "raw": " no action", "thought": "no action", "error": "boom"},
            "boom",
        ),
    ],
)
def test_rerun_fails_again_exactly_where_the_recording_failed(
    tmp_path: Path, stop_reason: str, last: dict[str, Any], error: str
) -> None:
    path = synthetic(tmp_path, stop_reason, [search_step(1, "A"), last], error=error)
    recorded = load_run(path)
    now = rerun(recorded)
    assert (now.stop_reason, now.error) == (stop_reason, error)
    assert compare(recorded.result, now) == []


def test_rerun_keeps_the_recorded_stop_rules(tmp_path: Path) -> None:
    budget = synthetic(
        tmp_path,
        "token_budget",
        [search_step(1, "A", 60), search_step(2, "B", 60)],
        config={"max_total_tokens": 100},
    )
    assert compare(load_run(budget).result, rerun(load_run(budget))) == []
    repeated = synthetic(
        tmp_path,
        "repeated_action",
        [search_step(k, "A") for k in (1, 2)],
        config={"max_repeats": 2},
    )
    assert compare(load_run(repeated).result, rerun(load_run(repeated))) == []
    assert rerun(load_run(repeated)).stop_reason == "repeated_action"
