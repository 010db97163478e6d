"""Budgets and loop guards through ``react-cli ask``, in-process: --timeout against a slow model
or wiki, --force-answer, --max-total-tokens, repeats, parse errors and the step limit."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fake_mediawiki import FakeMediaWiki, Fault
from fake_openai import FakeOpenAI, Reply, scripted
from inproc import HANG_S, CliResult, Runner, one_error_line


def ask(cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki, *args: str) -> CliResult:
    return cli.ask(llm, wiki, *args, question="Who directed Ed Wood?")


def assert_no_answer(
    cli: Runner, result: CliResult, stop_reason: str, message: str
) -> dict[str, Any]:
    assert result.code == 1 and result.stdout == ""
    assert one_error_line(result.stderr) == f"Error: no answer: {message}"
    trace = cli.trace()
    assert trace["stop_reason"] == stop_reason
    return trace


@pytest.mark.parametrize(
    "slow",
    [
        Reply(" t\nAction 1: Search[Ed Wood]", delay_s=30),
        Reply(" t\nAction 1: Search[Ed Wood]", fault="stall_stream"),
    ],
    ids=["no-answer", "stalled-stream"],
)
def test_timeout_bounds_a_slow_endpoint(cli: Runner, wiki: FakeMediaWiki, slow: Reply) -> None:
    cli.config(timeout_s=60, max_retry_after_s=60)  # only --timeout can end this early
    with FakeOpenAI([slow]) as llm:
        result = ask(cli, llm, wiki, "--timeout", "0.25")
    trace = assert_no_answer(cli, result, "timeout", "the time limit (0.25 s) was reached")
    assert trace["config"]["timeout_s"] == 0.25
    assert cli.elapsed_s < HANG_S  # vs 60 s without --timeout


def test_no_retry_is_started_that_would_outlast_the_timeout(
    cli: Runner, wiki: FakeMediaWiki
) -> None:
    cli.config(max_retry_after_s=60)
    with FakeOpenAI([Reply(status=429, headers={"Retry-After": "3600"})]) as llm:
        result = ask(cli, llm, wiki, "--timeout", "5")
    line = one_error_line(result.stderr)
    assert "kept failing with HTTP 429" in line and "no time left to retry within" in line
    assert cli.trace()["stop_reason"] == "llm_error"
    assert len(llm.requests) == 1 and cli.elapsed_s < HANG_S


def test_timeout_bounds_a_slow_wiki(cli: Runner, wiki: FakeMediaWiki) -> None:
    cli.config(wiki_timeout_s=60)
    wiki.faults.extend([Fault(delay_s=30)] * 5)
    with FakeOpenAI(scripted(" t\nAction 1: Search[Ed Wood]", " u\nAction 2: Finish[x]")) as llm:
        result = cli(
            ["ask", "q"],
            OPENAI_BASE_URL=llm.url,
            REACT_CLI_MODEL="m",
            REACT_CLI_WIKI=wiki.url,
            REACT_CLI_TIMEOUT="0.3",
        )
    trace = assert_no_answer(cli, result, "timeout", "the time limit (0.3 s) was reached")
    observation = trace["steps"][0]["actions"][0]["observation"]
    assert observation.startswith("Wikipedia is unavailable right now")
    assert len(llm.requests) == 1 and cli.elapsed_s < HANG_S  # vs 60 s without --timeout


def test_force_answer_through_the_cli(cli: Runner, wiki: FakeMediaWiki) -> None:
    script = [
        " Search.\nAction 1: Search[Ed Wood]",
        " Again.\nAction 2: Search[Tim Burton]",
        "1994]",
    ]
    with FakeOpenAI(scripted(*script)) as llm:
        result = ask(cli, llm, wiki, "--max-steps", "2", "--force-answer", "--json", "-v")
    assert result.code == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["answer"] == "1994" and summary["stop_reason"] == "finish"
    assert summary["forced"] is True
    forced = summary["steps"][2]
    assert forced["forced"] is True and forced["actions"][0]["details"] == {}
    assert "Action 3: Finish[1994]" in result.stderr and "forced answer" in result.stderr
    assert llm.requests[2].json["stop"] == ["\n"]
    assert llm.requests[2].json["messages"][0]["content"].endswith("\nAction 3: Finish[")
    trace = cli.trace()
    assert trace["forced"] is True and trace["config"]["force_answer"] is True


@pytest.mark.parametrize(
    ("script", "args", "stop_reason", "message"),
    [
        (
            [" t\nAction 1: Search[Ed Wood]"] * 3,
            ["--max-total-tokens", "100"],
            "token_budget",
            "the token budget was used up",
        ),
        (
            [" t\nAction: Search[Ed Wood]"] * 3,
            [],
            "repeated_action",
            "the model repeated the same action",
        ),
        ([" I wonder."] * 6, [], "parse_errors", "the model kept writing no valid action"),
        (
            [" t\nAction 1: Search[Ed Wood]", " u\nAction 2: Search[Tim Burton]"],
            ["--max-steps", "2"],
            "max_steps",
            "the step limit (2) was reached",
        ),
    ],
    ids=["token-budget", "repeated-action", "parse-errors", "max-steps"],
)
def test_loop_guards_through_the_cli(
    cli: Runner,
    wiki: FakeMediaWiki,
    script: list[str],
    args: list[str],
    stop_reason: str,
    message: str,
) -> None:
    with FakeOpenAI(scripted(*script)) as llm:
        result = ask(cli, llm, wiki, *args)
    assert_no_answer(cli, result, stop_reason, message)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--timeout", "0"], "--timeout must be positive"),
        (["--timeout", "soon"], "Invalid value for '--timeout'"),
        (["--timeout", "inf"], "invalid value inf for run_timeout_s"),
        (["--temperature", "nan"], "invalid value nan for temperature"),
    ],
)
def test_bad_timeout_is_a_usage_error(cli: Runner, args: list[str], message: str) -> None:
    result = cli(["ask", "q", *args], REACT_CLI_MODEL="m")
    assert result.code == 2
    assert message in one_error_line(result.stderr)
