"""The paper's methods through ``ask`` and ``replay``, in-process, against a scripted endpoint
(``method_fakes``) and the recorded fake Wikipedia: answers, exit codes, the path ``-v`` shows,
``--json`` and the trace, the ``n`` fallback, prompt files, re-runs and re-derived methods."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from eval_fakes import CLAIMS, Q, search
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI
from inproc import CliResult, Runner, edit_json, one_error_line, only_trace
from method_fakes import SCRIPTS, MethodsEndpoint, Script, sample, samples

FEVER = {
    CLAIMS[0]: Script(
        react=[search(f"Page {k}", k) for k in range(1, 9)],
        act=[" Finish[SUPPORTS]"],
        standard=" SUPPORTS",
        cot=" Not sure.\nAnswer: NOT ENOUGH INFO",
        samples=samples(("REFUTES", 12), ("SUPPORTS", 9)),
    )
}


@pytest.fixture(scope="module")
def llm() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(MethodsEndpoint({**SCRIPTS, **FEVER})) as server:
        yield server


def ask(cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki, n: int, *args: str) -> CliResult:
    llm.requests.clear()
    return cli.ask(llm, wiki, *args, question=Q[n])


def no_times(text: str) -> str:
    return re.sub(r"\d+\.\d+ s", "T s", text)


# Question 2 (gold: Animorphs): ReAct never answers; CoT-SC's majority is 11 of 21.
ANSWERS_TO_2 = {
    "standard": ("Animorphs", 1),
    "cot": ("Remnants", 1),
    "cot-sc": ("The Animorphs.", 1),
    "act": ("Remnants", 1),
    "react": (None, 8),
    "cot-sc+react": ("The Animorphs.", 1),
    "react+cot-sc": ("The Animorphs.", 8),  # 7 ReAct steps, then one request for 21 samples
}


@pytest.mark.parametrize("method", ANSWERS_TO_2)
def test_each_method_answers_as_scripted(
    cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki, method: str
) -> None:
    result = ask(cli, llm, wiki, 2, "--method", method)
    expected, calls = ANSWERS_TO_2[method]
    assert result.code == (0 if expected else 1), result.stderr
    assert result.stdout == (f"{expected}\n" if expected else "")
    assert len(llm.requests) == calls
    trace = cli.trace()
    assert (trace["version"], trace["method"], trace["calls"]) == (3, method, calls)
    assert trace["config"]["method"] == method and trace["config"]["task"] == "hotpotqa"
    sampled = trace.get("samples", [])
    assert len(sampled) == {"standard": 1, "cot": 1, "act": 0, "react": 0}.get(method, 21)
    if method in ("cot-sc", "cot-sc+react", "react+cot-sc"):
        assert trace["votes"] == {"The Animorphs.": 11, "Remnants": 10}
        assert trace["config"]["samples"] == 21 and trace["config"]["sample_temperature"] == 0.7


def test_react_without_an_answer_says_so(cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki) -> None:
    result = ask(cli, llm, wiki, 4, "--method", "cot")
    assert result.code == 1
    assert one_error_line(result.stderr) == (
        "Error: no answer: the model wrote no answer (no 'Answer:' line)"
    )
    assert cli.trace()["stop_reason"] == "no_answer"


def test_v_shows_which_path_ran(cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki) -> None:
    backed = ask(cli, llm, wiki, 2, "-v", "--method", "react+cot-sc")
    assert backed.code == 0
    path = 'ReAct gave no answer in 7 steps → CoT-SC: 11/21 votes for "The Animorphs."'
    lines = backed.stderr.splitlines()
    assert path in lines and "Thought 7:" in backed.stderr and "Thought 8:" not in backed.stderr
    assert "votes: The Animorphs. 11 · Remnants 10" in lines
    assert "  sample 1: The Animorphs." in lines and "  sample 21: Remnants" in lines
    assert re.search(r"^stop: finish · 7 steps · 8 calls · [\d,]+ tokens", backed.stderr, re.M)
    cli.trace()
    weak = ask(cli, llm, wiki, 1, "-v", "--method", "cot-sc+react")
    assert weak.code == 0 and weak.stdout == "Chief of Protocol\n"
    assert (
        'CoT-SC: 10/21 votes for "Chief of Protocol", fewer than half → ReAct answered in 2 steps'
        in weak.stderr.splitlines()
    )
    assert cli.trace()["branch"] == "react"
    cot = ask(cli, llm, wiki, 0, "-v", "--method", "cot")
    assert "CoT: They are both American.\nAnswer: yes\n" in cot.stderr


def test_json_has_the_method_its_samples_and_votes(
    cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki
) -> None:
    result = ask(cli, llm, wiki, 3, "--json", "--method", "react+cot-sc")
    data = json.loads(result.stdout)
    assert (data["method"], data["answer"], data["branch"]) == ("react+cot-sc", "yes", "cot-sc")
    assert data["votes"] == {"yes": 7, "no": 7}  # a tie: the first to appear wins
    assert len(data["steps"]) == 7 and data["calls"] == 8
    assert data["samples"][0] == {
        "raw": sample("yes"),
        "answer": "yes",
        "usage": data["samples"][0]["usage"],
        "latency_s": data["samples"][0]["latency_s"],
        "retries": 0,
    }
    assert sum(s["usage"]["total_tokens"] for s in data["samples"]) > 0
    assert [s["answer"] for s in data["samples"][14:]] == [None] * 7
    cli.trace()


@pytest.mark.parametrize(("mode", "requests"), [("refuse", 22), ("ignore", 21), ("answer", 1)])
def test_an_endpoint_refusing_or_ignoring_n_gets_single_requests(
    cli: Runner, wiki: FakeMediaWiki, mode: str, requests: int
) -> None:
    with FakeOpenAI(MethodsEndpoint(SCRIPTS), n=mode) as llm:
        result = ask(cli, llm, wiki, 0, "--method", "cot-sc", "--sample-concurrency", "3")
        bodies = [r.json or {} for r in llm.requests]
    assert result.code == 0 and result.stdout == "yes\n"
    assert len(bodies) == requests and bodies[0]["n"] == 21
    assert all("n" not in body for body in bodies[1:])
    trace = cli.trace()
    assert trace["votes"] == {"yes": 13, "no": 8} and trace["calls"] == min(requests, 21)
    assert trace["samples"][0]["retries"] == (1 if mode == "refuse" else 0)


def test_samples_and_their_temperature_are_options(
    cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki
) -> None:
    llm.requests.clear()
    args = ["--method", "cot-sc", "--samples", "5", "--sample-temperature", "0.3"]
    result = cli(["ask", Q[5], *args], REACT_CLI_METHOD="standard", **servers(llm, wiki))
    assert result.code == 0 and result.stdout == "SM\n"  # the option wins over the variable
    body = llm.requests[0].json or {}
    assert (body["n"], body["temperature"]) == (5, 0.3)
    assert cli.trace()["votes"] == {"SM": 5}
    env = cli(["ask", Q[5]], REACT_CLI_METHOD="standard", **servers(llm, wiki))
    assert env.stdout == "JYP\n" and cli.trace()["method"] == "standard"
    bad = cli(["ask", Q[5], "--method", "tot"], **servers(llm, wiki))
    assert bad.code == 2 and "--method must be one of standard, cot" in one_error_line(bad.stderr)


def servers(llm: FakeOpenAI, wiki: FakeMediaWiki) -> dict[str, str]:
    return {"OPENAI_BASE_URL": llm.url, "REACT_CLI_MODEL": "m", "REACT_CLI_WIKI": wiki.url}


def test_the_hybrids_step_limit_is_the_tasks(
    cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki
) -> None:
    fever = cli.ask(llm, wiki, "--prompt", "fever", "--method", "react+cot-sc", question=CLAIMS[0])
    assert fever.code == 0 and fever.stdout == "REFUTES\n"
    trace = cli.trace()
    assert trace["config"]["task"] == "fever" and trace["config"]["hybrid_max_steps"] == 5
    assert len(trace["steps"]) == 5 and trace["prompt_template"].startswith("\nDetermine")
    given = ask(cli, llm, wiki, 2, "--method", "react+cot-sc", "--max-steps", "3")
    assert given.code == 0 and len(cli.trace()["steps"]) == 3  # --max-steps is the hybrids' too


def test_a_prompt_file_declares_its_method(
    cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    mine = tmp_path / "mine.txt"
    mine.write_text("---\nmethod: cot\n---\nQuestion: {question}\nThought:", encoding="utf-8")
    result = ask(cli, llm, wiki, 0, "--method", "cot", "--prompt", str(mine))
    assert result.code == 0 and result.stdout == "yes\n"
    prompt = (llm.requests[0].json or {})["messages"][0]["content"]
    assert prompt == f"Question: {Q[0]}\nThought:"
    cli.trace()
    wrong = ask(cli, llm, wiki, 0, "--method", "standard", "--prompt", str(mine))
    assert wrong.code == 2 and llm.requests == []
    assert "is a cot prompt; --method standard sends standard prompts" in wrong.stderr
    mine.write_text("---\nmethod: cot\nflavour: x\n---\n", encoding="utf-8")
    broken = ask(cli, llm, wiki, 0, "--method", "cot", "--prompt", str(mine))
    assert broken.code == 2 and "front matter lines are" in one_error_line(broken.stderr)


# --- replay -----------------------------------------------------------------------------------


def recorded(cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki, n: int, method: str) -> Path:
    path = cli.home / f"{method}-{n}.json"
    result = ask(cli, llm, wiki, n, "-v", "--method", method, "--trace", str(path))
    assert result.code in (0, 1), result.stderr
    return path


def test_replay_shows_every_method_as_ask_v_did(
    cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki
) -> None:
    for method in ("cot", "cot-sc+react", "react+cot-sc", "act"):
        path = cli.home / "shown.json"
        live = ask(cli, llm, wiki, 1, "-v", "--method", method, "--trace", str(path))
        shown = cli(["replay", str(path)])
        assert shown.code == 0 and shown.stderr == ""
        assert no_times(shown.stdout) == no_times(live.stderr), method


def test_a_trace_naming_an_unknown_method_shows_but_does_not_re_run(
    cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki
) -> None:
    path = recorded(cli, llm, wiki, 0, "cot-sc+react")
    document = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps({**document, "method": "\x00\x1b[2Jmine"}), encoding="utf-8")
    assert cli(["replay", str(path)]).code == 0
    rerun = cli(["replay", "--rerun", str(path)])
    assert rerun.code == 1 and rerun.stdout == ""
    assert rerun.stderr == (
        f"Error: {path}: this react-cli does not know the method '\\x00\\x1b[2Jmine'\n"
    )


def test_traces_lists_each_runs_method(cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki) -> None:
    for n, method in enumerate(("standard", "cot-sc+react", "act")):
        assert ask(cli, llm, wiki, n, "--method", method).code in (0, 1)
    rows = json.loads(cli(["traces", "--json"]).stdout)
    assert [row["method"] for row in rows] == ["act", "cot-sc+react", "standard"]  # newest first
    table = cli(["traces"]).stdout.splitlines()
    assert [line.split()[3] for line in table[1:]] == ["act", "cot-sc+react", "standard"]


def test_rerun_reproduces_a_method_offline_and_notices_a_changed_sample(
    cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki
) -> None:
    path = recorded(cli, llm, wiki, 1, "cot-sc+react")
    again = cli(["replay", str(path), "--rerun", "--json"])
    report = json.loads(again.stdout)
    assert again.code == 0 and report["reproduced"] and report["answer"] == "Chief of Protocol"
    assert report["votes"] == {"Chief of Protocol": 10, "Ambassador": 6}
    edit_json(path, lambda d: d["samples"][19].update(raw=sample("Chief of Protocol")))
    changed = cli(["replay", str(path), "--rerun"])
    assert changed.code == 1
    assert "votes:\n  - Chief of Protocol: 10, Ambassador: 6\n" in changed.stdout
    assert "  + Chief of Protocol: 11, Ambassador: 6\n" in changed.stdout  # now strong: no ReAct
    assert "branch:\n  - react\n  + cot-sc\n" in changed.stdout


def test_rerun_derives_another_method_from_what_was_recorded(
    cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki
) -> None:
    path = recorded(cli, llm, wiki, 1, "cot-sc+react")  # samples, and the ReAct run it made
    derived: dict[str, Any] = {}
    for method in ("cot-sc", "react+cot-sc", "react"):
        result = cli(["replay", str(path), "--rerun", "--method", method, "--json"])
        assert result.code == 0, result.stderr
        derived[method] = json.loads(result.stdout)
    assert {m: (d["answer"], d["branch"]) for m, d in derived.items()} == {
        "cot-sc": ("Chief of Protocol", "cot-sc"),
        "react+cot-sc": ("Chief of Protocol", "react"),
        "react": ("Chief of Protocol", "react"),
    }
    assert not any(d["reproduced"] for d in derived.values())  # derived, not reproduced
    for method, said in [("cot", "holds no CoT completions"), ("act", "holds a ReAct run")]:
        refused = cli(["replay", str(path), "--rerun", "--method", method])
        assert refused.code == 2 and said in one_error_line(refused.stderr), method
    react_only = recorded(cli, llm, wiki, 2, "react")  # 8 steps, no samples
    needs = cli(["replay", str(react_only), "--rerun", "--method", "react+cot-sc"])
    assert needs.code == 2 and "holds no CoT-SC completions" in one_error_line(needs.stderr)


def test_a_fork_continues_a_react_or_act_run_only(
    cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki
) -> None:
    act = recorded(cli, llm, wiki, 1, "act")
    llm.requests.clear()
    fork = cli(["ask", "--from-trace", str(act), "--from-step", "2"], **servers(llm, wiki))
    assert fork.code == 0 and fork.stdout == "Ambassador\n", fork.stderr
    prompts = [(r.json or {})["messages"][0]["content"] for r in llm.requests]
    assert len(prompts) == 1 and prompts[0].endswith("\nAction 2:")  # Act's, after step 1
    forked = only_trace(cli.home)
    assert forked["method"] == "act" and forked["forked_from"]["step"] == 2
    cot = recorded(cli, llm, wiki, 1, "cot")
    refused = cli(["ask", "--from-trace", str(cot), "--from-step", "1"], **servers(llm, wiki))
    assert refused.code == 2 and "only ReAct and Act fork" in one_error_line(refused.stderr)
    other = ["ask", "--from-trace", str(act), "--from-step", "1", "--method", "react"]
    mixed = cli(other, **servers(llm, wiki))
    assert mixed.code == 2 and "continues the trace's method, act" in one_error_line(mixed.stderr)
