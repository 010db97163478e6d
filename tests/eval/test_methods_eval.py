"""``eval --methods``: every method scored in one pass over one memo per question, against the
scripted endpoint of ``method_fakes`` (counting its requests), resumed per method, compared
method against method."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from eval_fakes import FEVER, HOTPOT, Q, prompt_of, question_of, rows_of, search, summary_of
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, Reply
from inproc import CliResult, Runner, servers_env
from method_fakes import EXPECTED_BRANCH, EXPECTED_EM, SCRIPTS, MethodsEndpoint, Script, samples

ALL = list(EXPECTED_EM)  # the order of --methods all: the paper's Table 1
# Requests the sharing implies, per question: Standard, CoT and the 21 samples (one request
# each), Act's steps, and ReAct's one run of 8 steps at most, which the hybrids reuse.
ACT_STEPS = [1, 2, 1, 1, 8, 1]
REACT_STEPS = [1, 2, 8, 8, 1, 8]
SHARED_CALLS = sum(3 + act + react for act, react in zip(ACT_STEPS, REACT_STEPS, strict=True))


def last_rows(out: Path) -> list[dict[str, Any]]:
    """Each question's last row (a resumed eval appends a question's row again, methods added)."""
    lines = (out / "results.jsonl").read_text(encoding="utf-8").splitlines()
    last = {row["index"]: row for row in map(json.loads, lines)}
    return [last[index] for index in sorted(last)]


def run(
    cli: Runner, wiki: FakeMediaWiki, args: list[str], endpoint: Any = None, n: str = "answer"
) -> tuple[CliResult, FakeOpenAI]:
    with FakeOpenAI(endpoint or MethodsEndpoint(SCRIPTS), n=n) as llm:
        result = cli(["eval", *args], **servers_env(llm, wiki))
    return result, llm


def test_all_methods_in_one_pass_score_as_scripted_with_the_calls_sharing_implies(
    cli: Runner, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    out = tmp_path / "all"
    endpoint = MethodsEndpoint(SCRIPTS)
    result, llm = run(cli, wiki, [str(HOTPOT), "--methods", "all", "--out", str(out)], endpoint)
    assert result.code == 0, result.stderr
    assert len(llm.requests) == SHARED_CALLS == 60
    assert endpoint.kinds == {"standard": 6, "cot": 6, "sample": 126, "act": 14, "react": 28}
    rows = rows_of(out)
    for method, expected in EXPECTED_EM.items():
        assert [row["methods"][method]["em"] for row in rows] == expected, method
    for method, expected in EXPECTED_BRANCH.items():
        assert [row["methods"][method].get("branch") for row in rows] == expected, method
    first = rows[2]  # its own fields are the first method's: Standard's
    assert (first["method"], first["answer"], first["em"]) == ("standard", "Animorphs", 1.0)
    assert [row["calls_made"] for row in rows] == [
        3 + act + react for act, react in zip(ACT_STEPS, REACT_STEPS, strict=True)
    ]
    summary = summary_of(out)
    assert summary["config"]["methods"] == ALL and summary["calls_made"] == 60
    table = summary["methods"]
    assert {m: table[m]["em"] for m in ALL} == pytest.approx(
        {m: sum(em) / 6 for m, em in EXPECTED_EM.items()}
    )
    # shared work counted for every method using it: the hybrids' ReAct runs are 7 steps long
    assert {m: table[m]["calls"] for m in ALL} == {
        "standard": 6,
        "cot": 6,
        "cot-sc": 6,
        "act": 14,
        "react": 28,
        "cot-sc+react": 6 + 2 + 7 + 1,  # the back-offs of questions 1, 3 and 4
        "react+cot-sc": (1 + 2 + 7 + 7 + 1 + 7) + 3,  # and the back-offs of 2, 3 and 5
    }
    assert all(table[m]["n"] == 6 and table[m]["tokens"] > 0 for m in ALL)
    hybrid = json.loads((out / rows[2]["methods"]["react+cot-sc"]["trace"]).read_text("utf-8"))
    assert (hybrid["method"], len(hybrid["steps"]), len(hybrid["samples"])) == (
        "react+cot-sc",
        7,
        21,
    )
    screen = " ".join(result.stderr.split())
    assert "methods (paper: ReAct, Table 1, PaLM-540B; 60 calls made)" in screen
    assert "ReAct → CoT-SC │ 6 │ 66.7% │" in screen and "│ 35.1% │ 4.7 │" in screen


def test_an_endpoint_refusing_n_is_learnt_once_for_the_whole_eval(
    cli: Runner, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    out = tmp_path / "refused"
    args = [str(HOTPOT), "--limit", "3", "--methods", "cot-sc,cot-sc+react", "--samples", "5"]
    args += ["--concurrency", "1", "--sample-concurrency", "1"]  # samples in a stable order
    result, llm = run(cli, wiki, [*args, "--out", str(out)], n="refuse")
    assert result.code == 0, result.stderr
    with_n = [r for r in llm.requests if r.json and "n" in r.json]
    assert len(with_n) == 1 and (with_n[0].json or {})["n"] == 5
    assert len(llm.requests) == 1 + 3 * 5  # the first question learnt it for the others
    rows = rows_of(out)  # the first 5 samples of each: a strong majority, no back-off
    assert [row["methods"]["cot-sc+react"]["branch"] for row in rows] == ["cot-sc"] * 3
    assert [row["methods"]["cot-sc"]["answer"] for row in rows] == [
        "yes",
        "Chief of Protocol",
        "The Animorphs.",
    ]
    assert rows[0]["calls_made"] == 5  # calls made: the refused request was retried at once


class CotFails(MethodsEndpoint):
    """The scripted endpoint, but CoT's calls for questions 1 and 3 fail (an endpoint error
    for that method alone)."""

    def __call__(self, body: dict[str, Any]) -> Reply:
        cot = prompt_of(body).endswith("step.") and "n" not in body  # not the 21 samples
        if cot and question_of(body) in (Q[1], Q[3]):
            return Reply(status=503)
        return super().__call__(body)


def test_resume_runs_only_the_methods_a_question_lacks(
    cli: Runner, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    out = tmp_path / "resumed"
    cli.config(retries=0)
    first, _ = run(cli, wiki, [str(HOTPOT), "--method", "react", "--out", str(out)])
    assert first.code == 0 and "methods" not in last_rows(out)[0]  # a ReAct eval, as ever
    added = ["--resume", str(out), "--methods", "cot,cot-sc+react"]
    again, llm = run(cli, wiki, added, CotFails(SCRIPTS))
    assert again.code == 1  # CoT failed for 2 questions: retry them with --resume
    assert "Error: 2 questions failed (http" in again.stderr  # the failed method's error
    assert len(llm.requests) == 6 + 6 + (2 + 7 + 1)  # CoT, the samples, 3 back-offs: no ReAct
    rows = last_rows(out)
    assert len((out / "results.jsonl").read_text().splitlines()) == 12  # 6 replaced by 6
    assert [list(row["methods"]) for row in rows] == [["react", "cot", "cot-sc+react"]] * 6
    assert [row["methods"]["cot"]["stop_reason"] for row in rows][1::2][:2] == ["llm_error"] * 2
    summary = summary_of(out)
    assert summary["config"]["methods"] == ["react", "cot", "cot-sc+react"]
    assert summary["methods"]["react"]["em"] == pytest.approx(4 / 6)
    assert summary["failed"] == 2 and summary["methods"]["cot"]["failed"] == 2
    last, llm = run(cli, wiki, ["--resume", str(out)])
    assert last.code == 0, last.stderr
    assert len(llm.requests) == 2  # only CoT, of the 2 questions it failed
    rows = last_rows(out)
    assert [row["methods"]["cot"]["em"] for row in rows] == EXPECTED_EM["cot"]
    assert len((out / "results.jsonl").read_text().splitlines()) == 6 + 2  # rewritten, added
    summary = summary_of(out)
    assert summary["failed"] == 0 and summary["methods"]["cot"]["em"] == pytest.approx(3 / 6)
    assert summary["n"] == 6 and summary["methods"]["cot-sc+react"]["n"] == 6


def test_compare_picks_a_method_of_each_eval(
    cli: Runner, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    out = tmp_path / "both"
    result, _ = run(cli, wiki, [str(HOTPOT), "--methods", "react,react+cot-sc", "--out", str(out)])
    assert result.code == 0, result.stderr
    methods = ["--method", "react", "--method-b", "react+cot-sc"]
    compared = cli(["eval", "compare", str(out), str(out), *methods, "--json"])
    assert compared.code == 0, compared.stderr
    data = json.loads(compared.stdout)
    assert data["scores"]["em"]["a"] == pytest.approx(4 / 6)
    assert data["scores"]["em"]["b"] == pytest.approx(4 / 6)
    assert data["flips"] == {
        "both_right": 3,  # questions 0, 1, 4
        "both_wrong": 1,  # question 5
        "right_to_wrong": 1,  # question 3: ReAct answered at step 8, past the hybrid's 7
        "wrong_to_right": 1,  # question 2: CoT-SC answered where ReAct could not
        "mcnemar_exact_p": 1.0,
    }
    assert data["a"]["label"].endswith("· react") and data["b"]["label"].endswith("react+cot-sc")
    missing = cli(["eval", "compare", str(out), str(out), "--method", "cot"])
    assert missing.code == 2 and "holds no results of the method 'cot'" in missing.stderr
    shown = cli(["eval", "show", str(out), "--wrong", "--method", "react+cot-sc"])
    assert shown.code == 0 and "wrong answers by react+cot-sc (2)" in shown.stdout
    assert "ReAct → CoT-SC" in shown.stdout and "35.1%" in shown.stdout  # the Table 1


def test_fever_claims_vote_by_label_and_the_hybrids_take_five_steps(
    cli: Runner, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    claims = Script(  # the same for every claim (gold: NEI, NEI, SUPPORTS, NEI, REFUTES, REFUTES)
        react=[search(f"Page {k}", k) for k in range(1, 9)],
        act=[" Finish[NEI]"],
        standard=" SUPPORTS",
        cot=" Not said anywhere.\nAnswer: NOT ENOUGH INFO",
        samples=samples(("Refuted.", 12), ("SUPPORTS", 9)),
    )
    out = tmp_path / "fever"
    endpoint = MethodsEndpoint({}, default=claims)
    result, llm = run(cli, wiki, [str(FEVER), "--methods", "all", "--out", str(out)], endpoint)
    assert result.code == 0, result.stderr
    assert len(llm.requests) == 6 * (4 + 8)
    table = summary_of(out)["methods"]
    accuracy = {"standard": 1, "cot": 3, "cot-sc": 2, "act": 3, "react": 0}
    accuracy.update({"cot-sc+react": 2, "react+cot-sc": 2})  # REFUTES: 12 of 21 votes
    assert {m: table[m]["accuracy"] for m in ALL} == pytest.approx(
        {m: n / 6 for m, n in accuracy.items()},
        abs=1e-6,  # the summary keeps 6 digits
    )
    row = rows_of(out)[4]
    assert row["methods"]["cot-sc"]["label"] == "REFUTES" and row["label"] == "SUPPORTS"
    trace = json.loads((out / row["methods"]["react+cot-sc"]["trace"]).read_text("utf-8"))
    assert len(trace["steps"]) == 5 and trace["config"]["hybrid_max_steps"] == 5
    assert "acc" in result.stderr and "64.6%" in result.stderr  # the paper's FEVER column
    both = cli(["eval", str(FEVER), "--method", "cot", "--methods", "cot"])
    assert both.code == 2 and "--method and --methods both name methods" in both.stderr
