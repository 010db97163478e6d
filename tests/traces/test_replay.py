"""`react-cli replay`: a recorded run shown, re-run and compared, end to end in-process.

Traces are made by real `ask` runs against the local fake servers; replays and re-runs then run
with those servers stopped, to prove they need no network and no key. ``traces/test_traces.py`` has
forks, broken and old trace files and the listing.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, scripted
from inproc import GOOD_RUN, QUESTION, CliResult, Runner, edit_json

from react_cli.traces.diffs import compare
from react_cli.traces.replay import rerun
from react_cli.traces.trace import Trace, load_trace


@pytest.fixture
def offline() -> dict[str, str]:
    """No key, no model, and endpoints that refuse connections (nothing listens there)."""
    with FakeOpenAI(scripted("unused")) as closed:
        url = closed.url
    return {"OPENAI_BASE_URL": url, "REACT_CLI_WIKI": url.removesuffix("/v1")}


def rerun_altered(
    cli: Runner, wiki: FakeMediaWiki, offline: dict[str, str], step: int, raw: str
) -> tuple[Path, CliResult]:
    """Record GOOD_RUN, replace the model output of step ``step`` with ``raw``, re-run it."""
    path = cli.record(wiki, *GOOD_RUN)
    edit_json(path, lambda d: d["steps"][step - 1]["replies"][0].update(text=raw))
    return path, cli(["replay", str(path), "--rerun"], **offline)


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
    path = cli.record(wiki, *GOOD_RUN)
    shown = cli(["replay", str(path), "--step-delay", "0.01"], **offline)
    assert shown.code == 0 and "Answer: Arthur's Magazine" in shown.stdout


def test_replay_shows_a_followup_action_call_and_no_answer(
    cli: Runner, wiki: FakeMediaWiki, offline: dict[str, str]
) -> None:
    path = cli.record(
        wiki, " I should look.", "Search[Arthur's Magazine]", args=("--max-steps", "1"), code=1
    )
    shown = cli(["replay", str(path)], **offline)
    assert shown.code == 0
    assert "Thought 1: I should look.\nAction 1: Search[Arthur's Magazine]\n" in shown.stdout
    assert "No answer (max_steps)" in shown.stdout


def test_replay_prints_untrusted_text_literally(
    cli: Runner, wiki: FakeMediaWiki, offline: dict[str, str]
) -> None:
    path = cli.record(wiki, *GOOD_RUN)
    hostile = " [bold]x[/bold] \x1b[31mred"
    edit_json(path, lambda d: d["steps"][0].update(thought=hostile))
    shown = cli(["replay", str(path)], **offline)
    assert "[bold]x[/bold] red" in shown.stdout and "\x1b" not in shown.stdout


def test_json_prints_the_trace_normalised(
    cli: Runner, wiki: FakeMediaWiki, offline: dict[str, str]
) -> None:
    path = cli.record(wiki, *GOOD_RUN)
    edit_json(path, lambda d: [a.pop("details") for step in d["steps"] for a in step["actions"]])
    shown = cli(["replay", str(path), "--json"], **offline)
    data = json.loads(shown.stdout)
    assert data["answer"] == "Arthur's Magazine" and data["version"] == 3
    assert all(a["details"] == {} for step in data["steps"] for a in step["actions"])
    assert data["steps"][0]["actions"][0]["action"] == "Search[Arthur's Magazine]"


# --- re-runs ------------------------------------------------------------------------------


def test_rerun_reproduces_offline_with_servers_stopped(
    cli: Runner, offline: dict[str, str]
) -> None:
    with FakeMediaWiki.from_fixtures() as wiki:
        path = cli.record(wiki, *GOOD_RUN)
    result = cli(["replay", str(path), "--rerun"], **offline)
    assert result.code == 0, result.stdout + result.stderr
    assert result.stdout == "Arthur's Magazine\n" and result.stderr == ""
    verbose = cli(["replay", str(path), "--rerun", "-v", "--json"], **offline)
    assert json.loads(verbose.stdout) == {
        "method": "react",
        "reproduced": True,
        "answer": "Arthur's Magazine",
        "branch": "react",
        "stop_reason": "finish",
        "votes": None,
        "differences": [],
        "revisions_changed": [],
    }
    assert "Thought 3:" in verbose.stderr


def test_rerun_detects_an_altered_raw_output(
    cli: Runner, wiki: FakeMediaWiki, offline: dict[str, str]
) -> None:
    path, result = rerun_altered(cli, wiki, offline, 2, " Hmm.\nAction 2: Search[Women]")
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
    _, result = rerun_altered(cli, wiki, offline, 3, " I am done, no action written.")
    assert result.code == 1
    assert "answer:\n  - Arthur's Magazine\n  + (none)\n" in result.stdout
    assert "the trace holds no model output for the followup call of step 3" in result.stdout


def test_rerun_reproduces_runs_that_ended_without_an_answer(
    cli: Runner, wiki: FakeMediaWiki, offline: dict[str, str]
) -> None:
    loop = [f" t\nAction {i}: Search[Page {i}]" for i in range(1, 3)]
    limited = cli.record(wiki, *loop, args=("--max-steps", "2"), code=1)
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
    path = cli.record(
        wiki, *loop, "Arthur's Magazine]", args=("--max-steps", "2", "--force-answer")
    )
    assert load_trace(path)["forced"] is True
    result = cli(["replay", str(path), "--rerun"], **offline)
    assert (result.code, result.stdout, result.stderr) == (0, "Arthur's Magazine\n", "")


def test_live_tools_show_wikipedia_drift(
    cli: Runner, wiki: FakeMediaWiki, offline: dict[str, str]
) -> None:
    path = cli.record(wiki, *GOOD_RUN)
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
    recorded = Trace.read(path)
    now = rerun(recorded)[1]
    assert (now.stop_reason, now.error) == (stop_reason, error)
    assert compare(recorded.run, now) == []


def test_rerun_keeps_the_recorded_stop_rules(tmp_path: Path) -> None:
    budget = synthetic(
        tmp_path,
        "token_budget",
        [search_step(1, "A", 60), search_step(2, "B", 60)],
        config={"max_total_tokens": 100},
    )
    assert compare(Trace.read(budget).run, rerun(Trace.read(budget))[1]) == []
    repeated = synthetic(
        tmp_path,
        "repeated_action",
        [search_step(k, "A") for k in (1, 2)],
        config={"max_repeats": 2},
    )
    assert compare(Trace.read(repeated).run, rerun(Trace.read(repeated))[1]) == []
    assert rerun(Trace.read(repeated))[1].stop_reason == "repeated_action"


@pytest.mark.parametrize(
    "method", ["standard", "cot", "cot-sc", "act", "react", "cot-sc+react", "react+cot-sc"]
)
def test_a_run_whose_first_model_call_failed_reruns_as_that_failure(
    cli: Runner, wiki: FakeMediaWiki, offline: dict[str, str], tmp_path: Path, method: str
) -> None:
    """Every method: the endpoint refused the first call; the re-run fails there again."""
    path = tmp_path / f"{method}.json"
    asked = cli(
        ["ask", QUESTION, "--method", method, "--samples", "3", "--trace", str(path)],
        REACT_CLI_MODEL="m",
        **offline,
    )
    assert asked.code == 1, asked.stderr
    assert json.loads(path.read_text(encoding="utf-8"))["stop_reason"] == "llm_error"
    rerun_result = cli(["replay", "--rerun", "--json", str(path)])
    assert rerun_result.code == 0, rerun_result.stdout + rerun_result.stderr
    report = json.loads(rerun_result.stdout)
    assert (report["reproduced"], report["stop_reason"]) == (True, "llm_error")
