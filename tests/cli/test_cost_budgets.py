"""Spending limits through ``ask`` and ``eval``, in-process: ``--max-cost`` (a run),
``--max-total-cost`` (an eval: no question starts once spent; ``--resume`` goes on), and
``--max-no-progress`` (observations in a row that brought nothing new)."""

from __future__ import annotations

import json
from pathlib import Path

from eval_fakes import HOTPOT, HOTPOT_SCRIPTS, PerQuestion, Q, rows_of, search, summary_of
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, scripted
from inproc import GOOD_RUN, Runner, actions, one_error_line, servers_env
from method_fakes import SCRIPTS, MethodsEndpoint

PRICED = {"price_input": 100.0, "price_output": 100.0}  # per million: 1,000 tokens cost 0.1


def test_max_cost_stops_a_run_with_cost_budget(
    cli: Runner, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    cli.config(**PRICED)
    path = tmp_path / "trace.json"
    with FakeOpenAI(scripted(*GOOD_RUN)) as llm:
        result = cli.ask(llm, wiki, "--max-cost", "0.1", "--trace", str(path))  # ~0.16 a step
    assert result.code == 1 and result.stdout == ""
    assert one_error_line(result.stderr) == (
        "Error: no answer: the cost budget (--max-cost) was spent"
    )
    assert len(llm.requests) == 1
    trace = json.loads(path.read_text(encoding="utf-8"))
    assert trace["stop_reason"] == "cost_budget" and len(trace["steps"]) == 1
    assert trace["config"]["max_cost"] == 0.1
    assert trace["config"]["prices"] == {"input": 100.0, "output": 100.0}
    assert trace["cost"]["amount"] >= 0.1
    cli.config()  # no prices now: the re-run stops by the recorded ones
    replayed = cli(["replay", "--rerun", str(path)])
    assert replayed.code == 0, replayed.stderr  # it reproduced the recording


def test_max_cost_needs_a_price(cli: Runner, wiki: FakeMediaWiki) -> None:
    with FakeOpenAI(scripted(*GOOD_RUN)) as llm:
        result = cli.ask(llm, wiki, "--max-cost", "1")
        bad = cli.ask(llm, wiki, "--max-cost", "0", "--no-trace")
    assert result.code == 2 and llm.requests == []
    assert one_error_line(result.stderr).startswith(
        "Error: --max-cost counts the cost from the model's prices, and none is configured "
        "for 'test-model': add them to the config file under [prices], e.g. 'test-model' = "
    )
    assert bad.code == 2


def test_a_hybrid_never_backs_off_once_the_budget_is_spent(
    cli: Runner, wiki: FakeMediaWiki
) -> None:
    """ReAct → CoT-SC: ReAct gives no answer in its steps, but it spent the budget: no sample
    is drawn, and the run says why."""
    cli.config(**PRICED)
    endpoint = MethodsEndpoint(SCRIPTS)
    with FakeOpenAI(endpoint) as llm:
        args = ["--method", "react+cot-sc", "--max-steps", "2", "--max-cost", "0.2"]
        result = cli.ask(llm, wiki, *args, question=Q[2])
    assert result.code == 1, result.stderr
    assert endpoint.kinds["sample"] == 0 and endpoint.kinds["react"] == 2
    assert cli.trace()["stop_reason"] == "cost_budget"


def test_max_total_cost_starts_no_question_once_spent_and_resume_goes_on(
    cli: Runner, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    cli.config(**PRICED)
    out = tmp_path / "run"
    with FakeOpenAI(PerQuestion(HOTPOT_SCRIPTS)) as llm:
        args = ["eval", str(HOTPOT), "--out", str(out), "--max-steps", "3"]
        budget = ["--concurrency", "1", "--max-total-cost", "0.3"]  # ~2 questions' worth
        result = cli([*args, *budget], **servers_env(llm, wiki))
        assert result.code == 1
        assert "Error: stopped: the eval spent its --max-total-cost;" in result.stderr
        assert "continue with: react-cli eval --resume" in result.stderr
        summary = summary_of(out)
        assert summary["status"] == "budget" and 1 <= summary["n"] < 6
        assert summary["total_cost"] >= 0.3 and summary["failed"] == 0
        resumed = cli(["eval", "--resume", str(out)], **servers_env(llm, wiki))
    assert resumed.code == 0, resumed.stderr
    assert summary_of(out)["status"] == "finished"
    assert [row["index"] for row in rows_of(out)] == list(range(6))


def test_max_total_cost_needs_a_price(cli: Runner, wiki: FakeMediaWiki) -> None:
    with FakeOpenAI(scripted(*GOOD_RUN)) as llm:
        result = cli(["eval", str(HOTPOT), "--max-total-cost", "5"], **servers_env(llm, wiki))
    assert result.code == 2 and "--max-total-cost counts the cost" in result.stderr


def test_max_no_progress_stops_a_run_going_nowhere(cli: Runner, wiki: FakeMediaWiki) -> None:
    """Pages not found, then a page already seen: each brought nothing new."""
    misses = [search("Page 1"), search("Page 2", 2), search("Page 3", 3)]
    with FakeOpenAI(scripted(*misses)) as llm:
        result = cli.ask(llm, wiki, "--max-no-progress", "2")
    assert result.code == 1
    assert one_error_line(result.stderr) == (
        "Error: no answer: observations in a row brought nothing new (--max-no-progress)"
    )
    trace = cli.trace()
    assert trace["stop_reason"] == "no_progress" and len(trace["steps"]) == 2
    assert all(action["details"]["nothing_new"] is True for action in actions(trace))
    assert trace["config"]["max_no_progress"] == 2
    again = [GOOD_RUN[0], search("Arthur's Magazine", 2), search("Page 9", 3), GOOD_RUN[2]]
    cli.config(max_no_progress=2)  # from the config file; a page seen again counts
    with FakeOpenAI(scripted(*again)) as llm:
        result = cli.ask(llm, wiki)
    trace = cli.trace()
    assert result.code == 1 and trace["stop_reason"] == "no_progress"
    assert [a["details"].get("nothing_new") for a in actions(trace)] == [None, True, True]
    with FakeOpenAI(scripted(*GOOD_RUN)) as llm:  # a run that finds something each step
        assert cli.ask(llm, wiki).code == 0


def test_without_max_no_progress_runs_stay_the_papers(cli: Runner, wiki: FakeMediaWiki) -> None:
    misses = [search(f"Page {k}", k) for k in range(1, 5)]
    with FakeOpenAI(scripted(*misses)) as llm:
        result = cli.ask(llm, wiki, "--max-steps", "4")
    assert result.code == 1 and cli.trace()["stop_reason"] == "max_steps"


def test_a_resume_takes_no_endpoint_from_the_folder_and_its_hint_names_the_one_given(
    cli: Runner, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    """An eval folder does not choose where the API key goes (issue 29, class 1): a folder
    run against another endpoint than the user's is refused before any request, unless
    ``--base-url`` names it again; the stopped eval's hint names it, and works as printed."""
    cli.config(**PRICED)
    out = tmp_path / "run"
    key = {
        "OPENAI_API_KEY": "sk-resume-key-0000",
        "REACT_CLI_MODEL": "m",
        "REACT_CLI_WIKI": wiki.url,
    }
    with FakeOpenAI(PerQuestion(HOTPOT_SCRIPTS)) as llm:
        args = ["eval", str(HOTPOT), "--out", str(out), "--max-steps", "3", "--base-url", llm.url]
        budget = ["--concurrency", "1", "--max-total-cost", "0.3"]
        stopped = cli([*args, *budget], **key)
        assert stopped.code == 1, stopped.stderr
        hint = stopped.stderr.rsplit("continue with: ", 1)[1].split()
        assert hint[:4] == ["react-cli", "eval", "--resume", str(out)]
        assert hint[4:] == ["--base-url", llm.url]
        asked = len(llm.requests)
        refused = cli(["eval", "--resume", str(out)], **key)  # the key would go to the folder's
        assert refused.code == 2 and len(llm.requests) == asked, refused.stderr
        line = one_error_line(refused.stderr)
        assert f"was run against {llm.url}, not the endpoint you configured" in line
        assert line.endswith(f"--resume {out} --base-url {llm.url}")
        resumed = cli(hint[1:], **key)
    assert resumed.code == 0, resumed.stderr
    assert summary_of(out)["status"] == "finished" and len(rows_of(out)) == 6
