"""Fault injection at the Wikipedia host, through ``react-cli ask`` as a user runs it.

A failed Search is not the end of a run: the model sees ``Wikipedia is unavailable right now
(...)`` as its observation and may retry or finish. Only ``max_tool_errors`` (2) failures in a
row end the run (``stop_reason: tool_errors``, exit 1, one ``Error:`` line). Retries are bounded
by ``retries`` and ``max_retry_after_s`` (``inproc.FAST_CONFIG``).
"""

from __future__ import annotations

import json
import re

import pytest
from fake_mediawiki import FakeMediaWiki, Fault, library_default_agent
from fake_openai import FakeOpenAI, Reply, scripted
from inproc import HANG_S, Runner, actions, one_error_line

RETRIES = 2  # FAST_CONFIG
SEARCH = " I should search Arthur's Magazine.\nAction 1: Search[Arthur's Magazine]"
FINISH_2 = " It was started in 1844.\nAction 2: Finish[1844]"
UNAVAILABLE = "Wikipedia is unavailable right now ("


def test_the_default_user_agent_is_never_sent(cli: Runner, wiki: FakeMediaWiki) -> None:
    """The fake answers 403 to a missing or library-default User-Agent, like Wikimedia."""
    cli.config(contact="ops@example.org")
    script = [SEARCH, " Next.\nAction 2: Search[First for Women]", " ok\nAction 3: Finish[x]"]
    with FakeOpenAI(scripted(*script)) as llm:
        result = cli.ask(llm, wiki)
    assert result.code == 0, result.stderr
    agents = {request["headers"].get("User-Agent") for request in wiki.requests}
    assert len(wiki.requests) >= 2 and len(agents) == 1
    agent = agents.pop()
    assert not library_default_agent(agent)
    assert re.fullmatch(r"react-cli/\S+ \(ops@example\.org\) requests/\S+", agent)
    trace = cli.trace()  # not the whole trace: its URLs' port numbers may hold "403"
    shown = [[a["observation"], a.get("error"), a["details"]] for a in actions(trace)]
    assert not any("403" in json.dumps(said) for said in shown)
    assert not any("403" in json.dumps(s["error"]) for s in trace["steps"])


@pytest.mark.parametrize("status", [429, 503])
def test_retry_after_is_honoured_capped_and_the_search_succeeds(
    cli: Runner, wiki: FakeMediaWiki, status: int
) -> None:
    cli.config(max_retry_after_s=0.05)
    wiki.faults.append(Fault(status=status, headers={"Retry-After": "3600"}))
    with FakeOpenAI(scripted(SEARCH, FINISH_2)) as llm:
        result = cli.ask(llm, wiki)
    assert result.code == 0, result.stderr
    steps = actions(cli.trace())
    assert steps[0]["observation"].startswith("Arthur's Magazine (1844")
    assert (steps[0]["retries"], steps[1]["retries"]) == (1, 0)
    assert 0.05 <= cli.elapsed_s < HANG_S  # waited max_retry_after_s, not an hour


def test_maxlag_is_retried_and_the_search_succeeds(cli: Runner, wiki: FakeMediaWiki) -> None:
    wiki.faults.append(Fault(api_error="maxlag", headers={"Retry-After": "0"}))
    with FakeOpenAI(scripted(SEARCH, FINISH_2)) as llm:
        result = cli.ask(llm, wiki)
    assert result.code == 0, result.stderr
    assert wiki.requests[0]["params"]["maxlag"] == "5"
    step = actions(cli.trace())[0]
    assert step["observation"].startswith("Arthur's Magazine (1844")
    assert step["retries"] == 1


@pytest.mark.parametrize(
    ("fault", "reason"),
    [
        (Fault(status=503), "HTTP 503 from 127.0.0.1"),
        (Fault(delay_s=5), "no answer from 127.0.0.1:PORT within 0.1s"),
        (Fault(body="<html>Bad gateway</html>"), "did not answer with a JSON object"),
        (Fault(body='{"query": {"pages": [truncated'), "did not answer with a JSON object"),
        (Fault(api_error="maxlag", headers={"Retry-After": "0"}), "API error 'maxlag'"),
        (Fault(api_error="internal_api_error_DBQueryError"), "API error 'internal_api_error"),
    ],
    ids=["503", "timeout", "html", "truncated-json", "maxlag", "api-error"],
)
def test_a_failed_search_becomes_an_observation_and_the_run_goes_on(
    cli: Runner, wiki: FakeMediaWiki, fault: Fault, reason: str
) -> None:
    wiki.faults.extend([fault] * (RETRIES + 4))  # outlasts every retry of one Search
    if fault.delay_s:
        cli.config(wiki_timeout_s=0.1)  # every attempt of the Search times out
    with FakeOpenAI(scripted(SEARCH, FINISH_2)) as llm:
        result = cli.ask(llm, wiki)
    assert result.code == 0, result.stderr
    assert result.stdout == "1844\n"
    trace = cli.trace()
    step = actions(trace)[0]
    assert step["observation"].startswith(UNAVAILABLE)
    assert reason.replace("PORT", wiki.url.rsplit(":", 1)[1]) in step["observation"]
    assert trace["steps"][0]["error"] is None and "Wikipedia request failed" in step["error"]
    prompt = llm.requests[1].json["messages"][0]["content"]
    assert f"Observation 1: {step['observation']}\nThought 2:" in prompt
    assert cli.elapsed_s < HANG_S


def test_consecutive_tool_failures_end_the_run(cli: Runner, wiki: FakeMediaWiki) -> None:
    wiki.faults.extend([Fault(api_error="maxlag", headers={"Retry-After": "0"})] * 20)
    retry = " Try again.\nAction 2: Search[Arthur's Magazine magazine]"
    with FakeOpenAI(scripted(SEARCH, retry, FINISH_2)) as llm:
        result = cli.ask(llm, wiki)
    assert result.code == 1 and result.stdout == ""
    line = one_error_line(result.stderr)
    assert "API error 'maxlag'" in line and "(2 failed tool calls in a row)" in line
    trace = cli.trace()
    assert trace["stop_reason"] == "tool_errors" and len(trace["steps"]) == 2
    assert len(llm.requests) == 2


def test_a_success_resets_the_tool_error_count(cli: Runner, wiki: FakeMediaWiki) -> None:
    outage = [Fault(status=500)] * (RETRIES + 1)  # one failed Search
    script = [
        SEARCH,
        " Again.\nAction 2: Search[Arthur's Magazine]",
        " Now the other.\nAction 3: Search[First for Women]",
        " ok\nAction 4: Finish[1844]",
    ]
    calls: list[dict[str, object]] = []

    def model(body: dict[str, object]) -> Reply:
        calls.append(body)
        if len(calls) in (1, 3):  # the Searches of steps 1 and 3 fail
            wiki.faults.extend(outage)
        return Reply(script[len(calls) - 1])

    with FakeOpenAI(model) as llm:
        result = cli.ask(llm, wiki, "--json")
    assert result.code == 0, result.stderr
    observations = [a["observation"] for a in actions(json.loads(result.stdout))]
    assert observations[0].startswith(UNAVAILABLE) and observations[2].startswith(UNAVAILABLE)
    assert observations[1].startswith("Arthur's Magazine (1844")


def test_a_2_mb_article(cli: Runner) -> None:
    filler = " ".join(f"Sentence number {i} of the big page is rather dull." for i in range(38_000))
    text = f"The Big Page is a test article. {filler} The needle is hidden at the end."
    assert len(text) > 2_000_000
    script = [
        " Search it.\nAction 1: Search[The Big Page]",
        " Look for the needle.\nAction 2: Lookup[needle]",
        " Found.\nAction 3: Finish[the end]",
    ]
    with FakeMediaWiki({"The Big Page": text}) as wiki, FakeOpenAI(scripted(*script)) as llm:
        result = cli.ask(llm, wiki, "--json")
    assert result.code == 0, result.stderr
    steps = actions(json.loads(result.stdout))
    assert steps[0]["observation"].startswith("The Big Page is a test article. Sentence number 0")
    assert len(steps[0]["observation"]) <= 2000
    assert steps[1]["observation"] == "(Result 1 / 1) The needle is hidden at the end."
    assert max(len(r.json["messages"][0]["content"]) for r in llm.requests) < 12_000
    assert cli.elapsed_s < HANG_S


EVIL = (
    "Evil Corp is a [bold red]company[/] [link=http://x]click[/link] \x1b[31mred\x1b[0m "
    "\x1b]8;;http://evil\x07link\x1b]8;;\x07 \x9b2J \u202egnp.exe\u202c in Ohio. It sells [/]."
)


@pytest.mark.parametrize("mode", ["-v", "--json"])
def test_markup_and_escape_sequences_are_printed_literally(cli: Runner, mode: str) -> None:
    script = [" [bold]x[/]\nAction 1: Search[Evil Corp]", " ok\nAction 2: Finish[[i]Evil[/i] Corp]"]
    with FakeMediaWiki({"Evil Corp": EVIL}) as wiki, FakeOpenAI(scripted(*script)) as llm:
        result = cli.ask(llm, wiki, mode)
    assert result.code == 0, result.stderr
    shown = result.stdout + result.stderr
    for control in ("\x1b", "\x07", "\x9b", "\u202e"):
        assert control not in shown
    if mode == "-v":
        assert result.stdout == "[i]Evil[/i] Corp\n"
        assert "[bold red]company[/] [link=http://x]click[/link] red" in result.stderr
        assert "It sells [/]." in result.stderr and "[bold]x[/]" in result.stderr
    else:
        summary = json.loads(result.stdout)
        assert summary["answer"] == "[i]Evil[/i] Corp"
        assert summary["steps"][0]["actions"][0]["observation"].startswith(
            "Evil Corp is a [bold red]company[/]"
        )
        assert (
            "\x1b[31m" in summary["steps"][0]["actions"][0]["observation"]
        )  # kept as data, escaped


def test_debug_logs_wiki_requests_without_credentials(cli: Runner, wiki: FakeMediaWiki) -> None:
    secret_wiki = wiki.url.replace("http://", "http://bot:hunter2-secret@")
    with FakeOpenAI(scripted(SEARCH, FINISH_2)) as llm:
        result = cli(
            ["ask", "When?", "--debug"],
            OPENAI_BASE_URL=llm.url,
            REACT_CLI_MODEL="test-model",
            REACT_CLI_WIKI=secret_wiki,
            OPENAI_API_KEY="sk-test-SECRET-42",
        )
    assert result.code == 0, result.stderr
    assert wiki.requests[0]["headers"]["Authorization"].startswith("Basic ")
    gets = [line for line in result.stderr.splitlines() if line.startswith("debug: GET ")]
    assert gets and all(f"{wiki.url}/w/api.php?" in line for line in gets)
    assert all('"User-Agent": "react-cli/' in line and '"Basic ***"' in line for line in gets)
    assert any(line.startswith("debug: HTTP 200 ") for line in result.stderr.splitlines())
    assert any(line.startswith("debug: POST ") for line in result.stderr.splitlines())
    everything = result.stdout + result.stderr + json.dumps(cli.trace())
    assert "hunter2" not in everything and "sk-test-SECRET-42" not in everything
