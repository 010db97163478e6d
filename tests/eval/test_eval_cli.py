"""`react-cli eval` end to end, in-process against local fake model and wiki servers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT
from eval_fakes import (
    CLAIMS,
    FEVER,
    HOTPOT,
    HOTPOT_SCRIPTS,
    PerQuestion,
    Q,
    finish,
    question_of,
    rows_of,
    summary_of,
)
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, Reply
from inproc import CliResult, Runner, servers_env

EXPECTED = {  # index: (answer, em, f1, stop reason, steps)
    0: ("yes", 1.0, 1.0, "finish", 1),
    1: ("Chief of Protocol of the United States", 0.0, 0.666667, "finish", 2),
    2: ("The Animorphs", 1.0, 1.0, "finish", 2),
    3: ("yes", 0.0, 0.0, "finish", 1),
    4: ("Greenwich Village", 0.0, 0.571429, "finish", 1),
    5: (None, 0.0, 0.0, "max_steps", 3),
}
EXPECTED_EM = 2 / 6
EXPECTED_F1 = (1 + 2 / 3 + 1 + 4 / 7) / 6


def run_eval(
    cli: Runner, wiki: FakeMediaWiki, model: PerQuestion, args: list[str], dataset: Path = HOTPOT
) -> tuple[CliResult, FakeOpenAI]:
    with FakeOpenAI(model) as llm:
        result = cli(["eval", str(dataset), "--max-steps", "3", *args], **servers_env(llm, wiki))
    return result, llm


def test_hotpotqa_end_to_end(cli: Runner, wiki: FakeMediaWiki, tmp_path: Path) -> None:
    out = tmp_path / "run"
    result, llm = run_eval(cli, wiki, PerQuestion(HOTPOT_SCRIPTS), ["--out", str(out)])
    assert result.code == 0, result.stderr
    assert result.stdout == f"{out / 'summary.json'}\n"
    assert "Traceback" not in result.stderr
    rows = rows_of(out)
    assert [row["index"] for row in rows] == list(range(6))
    for row in rows:
        answer, em, f1, stop_reason, steps = EXPECTED[row["index"]]
        assert row["question"] == Q[row["index"]]
        assert (row["answer"], row["em"], row["f1"]) == (answer, em, f1)
        assert (row["stop_reason"], row["steps"]) == (stop_reason, steps)
        trace = json.loads((out / row["trace"]).read_text(encoding="utf-8"))
        assert trace["question"] == row["question"] and trace["answer"] == answer
        assert row["tokens"] == trace["usage"]["total_tokens"] > 0
        assert row["latency_s"] > 0  # the run's duration, which its trace rounds to 1 ms
        assert row["latency_s"] == pytest.approx(trace["duration_s"], abs=0.00051)
    assert rows[1]["gold"] == "Chief of Protocol"
    summary = summary_of(out)
    assert summary["status"] == "finished"
    assert summary["n"] == 6 and summary["failed"] == 0
    assert summary["em"] == pytest.approx(EXPECTED_EM, abs=1e-6)
    assert summary["f1"] == pytest.approx(EXPECTED_F1, abs=1e-6)
    assert summary["stop_reasons"] == {"finish": 5, "max_steps": 1}
    assert summary["avg_steps"] == pytest.approx(10 / 6, abs=1e-4)
    assert summary["avg_tokens"] == pytest.approx(sum(r["tokens"] for r in rows) / 6, abs=0.01)
    latency_s = sum(r["latency_s"] for r in rows) / 6
    assert summary["avg_latency_s"] == pytest.approx(latency_s, abs=1e-4)
    assert summary["dataset"]["format"] == "hotpotqa" and summary["dataset"]["rows"] == 6
    config = summary["config"]
    assert config["model"] == "test-model" and config["prompt"]["name"] == "hotpotqa"
    assert config["concurrency"] == "auto" and config["wiki_concurrency"] == "auto"
    assert config["max_concurrency"] == 64
    levels = summary["levels"]  # the level each endpoint's limiter was at, and how it went
    assert levels["model"]["mode"] == levels["wiki"]["mode"] == "auto"
    assert 1 <= levels["model"]["lowest"] <= levels["model"]["level"] <= 64
    assert levels["model"]["streaming"] == "on"
    assert len(list((out / "traces").glob("*.json"))) == 6
    assert "EM" in result.stderr and "0.3333" in result.stderr  # the summary table
    assert len(llm.requests) == 1 + 2 + 2 + 1 + 1 + 3


def test_concurrency_gives_the_same_results(
    cli: Runner, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    outs = []
    for concurrency in ("1", "6"):
        out = tmp_path / f"c{concurrency}"
        model = PerQuestion(HOTPOT_SCRIPTS, delay_s=0.01)  # concurrent answers come out of order
        result, _ = run_eval(cli, wiki, model, ["--out", str(out), "--concurrency", concurrency])
        assert result.code == 0, result.stderr
        outs.append(out)

    def comparable(out: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        rows = [{k: v for k, v in row.items() if k != "latency_s"} for row in rows_of(out)]
        keep = ("n", "em", "f1", "failed", "avg_steps", "avg_tokens", "stop_reasons")
        return rows, {key: summary_of(out)[key] for key in keep}

    assert comparable(outs[0]) == comparable(outs[1])


def test_fever_uses_its_prompt_and_scores_labels(
    cli: Runner, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    answers = ["NOT ENOUGH INFO", "SUPPORTS", "supports.", "Not enough information", "REFUTES", "?"]
    scripts: dict[str, list[str | Reply]] = {
        claim: [finish(answer)] for claim, answer in zip(CLAIMS, answers, strict=True)
    }
    out = tmp_path / "fever"
    result, llm = run_eval(cli, wiki, PerQuestion(scripts), ["--out", str(out), "--json"], FEVER)
    assert result.code == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary == summary_of(out)
    assert summary["accuracy"] == pytest.approx(4 / 6, abs=1e-6)
    assert "em" not in summary and summary["config"]["prompt"]["name"] == "fever"
    labels = [row["label"] for row in rows_of(out)]
    assert labels == ["NOT ENOUGH INFO", "SUPPORTS", "SUPPORTS", "NOT ENOUGH INFO", "REFUTES", None]
    assert [row["em"] for row in rows_of(out)] == [1.0, 0.0, 1.0, 1.0, 1.0, 0.0]
    prompt = llm.requests[0].json["messages"][0]["content"]
    assert prompt.lstrip().startswith(
        "Determine if there is Observation that SUPPORTS or REFUTES a Claim"
    )
    assert {question_of(r.json) for r in llm.requests} == set(CLAIMS)
    assert "acc" in result.stderr


def test_resume_skips_finished_questions(cli: Runner, wiki: FakeMediaWiki, tmp_path: Path) -> None:
    out = tmp_path / "run"
    first, _ = run_eval(cli, wiki, PerQuestion(HOTPOT_SCRIPTS), ["--out", str(out), "--limit", "3"])
    assert first.code == 0, first.stderr
    assert [row["index"] for row in rows_of(out)] == [0, 1, 2]
    again, _ = run_eval(cli, wiki, PerQuestion(HOTPOT_SCRIPTS), ["--out", str(out)])
    assert again.code == 2
    assert again.stderr == (
        f"Error: {out} holds an earlier run: continue it with: react-cli eval --resume {out}\n"
    )
    second, llm = run_eval(cli, wiki, PerQuestion(HOTPOT_SCRIPTS), ["--resume", str(out)])
    assert second.code == 0, second.stderr
    assert {question_of(r.json) for r in llm.requests} == set(Q[3:])
    rows = rows_of(out)
    assert [row["index"] for row in rows] == list(range(6))
    summary = summary_of(out)
    assert summary["n"] == 6 and summary["em"] == pytest.approx(EXPECTED_EM, abs=1e-6)
    assert summary["f1"] == pytest.approx(EXPECTED_F1, abs=1e-6)


def test_failed_questions_exit_1_and_are_retried_on_resume(
    cli: Runner, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    broken = {**HOTPOT_SCRIPTS, Q[2]: [Reply(status=400)]}
    result, _ = run_eval(cli, wiki, PerQuestion(broken), ["--out", str(out)])
    assert result.code == 1
    assert result.stdout == f"{out / 'summary.json'}\n"
    lines = result.stderr.strip().splitlines()
    assert lines[-1].startswith("Error: 1 question failed (")
    assert lines[-1].endswith(f"; retry them with: react-cli eval --resume {out}")
    assert "Traceback" not in result.stderr
    failed = [row for row in rows_of(out) if row["stop_reason"] == "llm_error"]
    assert [row["index"] for row in failed] == [2] and "HTTP 400" in failed[0]["error"]
    assert summary_of(out)["failed"] == 1
    # A crash mid-write leaves a cut line; resume drops it and the failure, and reruns both.
    with (out / "results.jsonl").open("a", encoding="utf-8") as handle:
        handle.write('{"index": 4, "question": "cut sh')
    assert len((out / "results.jsonl").read_text().splitlines()) == 7
    result, llm = run_eval(cli, wiki, PerQuestion(HOTPOT_SCRIPTS), ["--resume", str(out)])
    assert result.code == 0, result.stderr
    assert {question_of(r.json) for r in llm.requests} == {Q[2]}
    rows = rows_of(out)
    assert len(rows) == 6 and summary_of(out)["failed"] == 0
    assert summary_of(out)["em"] == pytest.approx(EXPECTED_EM, abs=1e-6)


def test_endpoint_down_stops_the_run(cli: Runner, wiki: FakeMediaWiki, tmp_path: Path) -> None:
    out = tmp_path / "run"
    model = PerQuestion({}, default=[Reply(status=400)])
    result, llm = run_eval(cli, wiki, model, ["--out", str(out), "--concurrency", "1"])
    assert result.code == 1
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("Error: stopped: questions kept failing (the endpoint rejected")
    assert len(llm.requests) == 5
    assert summary_of(out)["status"] == "stopped" and summary_of(out)["failed"] == 5
    assert "5/6" in result.stderr  # the progress bar counted the row that stopped the run


def test_resume_refuses_other_settings(cli: Runner, wiki: FakeMediaWiki, tmp_path: Path) -> None:
    out = tmp_path / "run"
    run_eval(cli, wiki, PerQuestion(HOTPOT_SCRIPTS), ["--out", str(out), "--limit", "1"])
    result, llm = run_eval(
        cli, wiki, PerQuestion(HOTPOT_SCRIPTS), ["--resume", str(out), "-m", "other"]
    )
    assert result.code == 2
    assert result.stderr.startswith(f"Error: {out} was run with another model (test-model ≠ other)")
    assert llm.requests == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--format", "csv"], "--format must be one of hotpotqa, fever, jsonl"),
        (["--paper-subset"], "--paper-subset needs the full dev set"),
        (["--concurrency", "0"], "--concurrency must be at least 1"),
        (["--concurrency", "many"], "--concurrency must be auto or a number, not 'many'"),
        (["--wiki-concurrency", "300"], "--wiki-concurrency must be at most 256"),
        (["--limit", "0"], "--limit must be at least 1"),
        (["--offset", "6"], "--offset 6 leaves no questions: the selection has 6"),
        (["--out", "a", "--resume", "b"], "--out and --resume name different folders"),
        (["--resume", "/nonexistent/run"], "--resume /nonexistent/run: no such folder"),
        (["--out", str(ROOT / "react_cli")], "is not empty"),
        (["--prompt", "nope"], "no prompt named 'nope'"),
        (["--lang", "zh", "--wiki", "http://x"], "--lang and --wiki contradict each other"),
        (["--timeout", "0"], "--timeout must be positive"),
        (["--variant", "zh cn"], "variant"),
    ],
)
def test_usage_errors(cli: Runner, args: list[str], message: str) -> None:
    result = cli(["eval", str(HOTPOT), *args], REACT_CLI_MODEL="m", OPENAI_API_KEY="sk-test")
    assert result.code == 2, result.stderr
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and message in lines[0], lines


def test_missing_dataset_and_model(cli: Runner, tmp_path: Path) -> None:
    result = cli(["eval", str(tmp_path / "none.json")], REACT_CLI_MODEL="m")
    assert (result.code, result.stderr) == (
        2,
        f"Error: no such dataset file: {tmp_path / 'none.json'}; or a dataset name: "
        "hotpotqa-sample, hotpotqa-dev, hotpotqa-dev-fullwiki, hotpotqa-train, "
        "react-hotpotqa-dev, react-fever-dev, fever-paper-dev, fever-shared-task-dev "
        "('react-cli data list' shows them)\n",
    )
    result = cli(["eval", str(HOTPOT)])
    assert result.code == 2 and result.stderr.startswith("Error: no model configured")
    assert not (cli.home / "evals").exists()


def test_default_out_dir_is_under_home(cli: Runner, wiki: FakeMediaWiki) -> None:
    result, _ = run_eval(cli, wiki, PerQuestion(HOTPOT_SCRIPTS), ["--limit", "1"])
    assert result.code == 0, result.stderr
    path = Path(result.stdout.strip())
    assert path.parent.parent == cli.home / "evals"
    assert path.parent.name.endswith("hotpotqa-dev-first6")


def test_resume_refuses_another_dataset(cli: Runner, wiki: FakeMediaWiki, tmp_path: Path) -> None:
    """Rows of another file would be counted in this one's scores and never rerun."""
    out = tmp_path / "run"
    first, _ = run_eval(cli, wiki, PerQuestion(HOTPOT_SCRIPTS), ["--out", str(out)])
    assert first.code == 0, first.stderr
    before = (out / "results.jsonl").read_text(encoding="utf-8")
    other = tmp_path / "other.json"
    rows = json.loads(HOTPOT.read_text(encoding="utf-8"))
    other.write_text(json.dumps(rows[3:] + rows[:3]), encoding="utf-8")
    result, llm = run_eval(
        cli, wiki, PerQuestion(HOTPOT_SCRIPTS), ["--resume", str(out)], dataset=other
    )
    assert result.code == 2
    assert result.stderr == (
        f"Error: {out} holds results of another dataset (its row 0 is not this dataset's); "
        "resume with the same dataset or choose a new --out\n"
    )
    assert llm.requests == []
    assert (out / "results.jsonl").read_text(encoding="utf-8") == before
    # The same file moved elsewhere is the same dataset.
    moved = tmp_path / "moved.json"
    moved.write_text(HOTPOT.read_text(encoding="utf-8"), encoding="utf-8")
    again, llm = run_eval(
        cli, wiki, PerQuestion(HOTPOT_SCRIPTS), ["--resume", str(out)], dataset=moved
    )
    assert again.code == 0, again.stderr
    assert llm.requests == [] and summary_of(out)["n"] == 6


def test_ask_run_options_reach_every_question(
    cli: Runner, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    args = ["--out", str(out), "--limit", "2", "--timeout", "30", "--force-answer"]
    result, _ = run_eval(cli, wiki, PerQuestion(HOTPOT_SCRIPTS), [*args, "--variant", "zh-tw"])
    assert result.code == 0, result.stderr
    config = summary_of(out)["config"]
    assert (config["timeout_s"], config["force_answer"], config["variant"]) == (30, True, "zh-tw")
    trace = json.loads((out / rows_of(out)[0]["trace"]).read_text(encoding="utf-8"))
    assert trace["config"]["timeout_s"] == 30 and trace["config"]["force_answer"] is True
