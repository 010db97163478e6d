"""Fault injection at the model endpoint, through ``react-cli ask`` as a user runs it.

Each fault has one expected behaviour: retried and the run succeeds, or exit 1 with a one-line
``Error: ...``, a trace whose ``stop_reason`` says why, and no traceback. Retries are bounded in
count (``retries`` in the config) and in time (asserted per test). The fake server speaks real
HTTP on loopback (``support/fake_openai.py``); the wiki is the recorded fake
(``support/fake_mediawiki.py``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fake_mediawiki import FakeMediaWiki
from fake_openai import TRANSIENT_FAILURES, FakeOpenAI, Reply, scripted
from inproc import GOOD_RUN, HANG_S, QUESTION, CliResult, Runner, one_error_line, servers_env

RETRIES = 2  # FAST_CONFIG
KEY = "sk-test-SECRET-0123456789"
TRANSIENT = {
    **TRANSIENT_FAILURES,
    "503-retry-after": Reply(status=503, headers={"Retry-After": "0"}),
}
BOTH_MODES = pytest.mark.parametrize("stream", [True, False], ids=["stream", "no-stream"])


def ask(
    cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki, *args: str, stream: bool = True
) -> CliResult:
    return cli.ask(llm, wiki, *([] if stream else ["--no-stream"]), *args)


def assert_answered(cli: Runner, result: CliResult) -> dict[str, Any]:
    assert result.code == 0, result.stderr
    assert result.stdout == "Arthur's Magazine\n"
    trace = cli.trace()
    assert trace["stop_reason"] == "finish"
    return trace


def assert_failed(cli: Runner, result: CliResult, *fragments: str) -> dict[str, Any]:
    assert result.code == 1
    assert result.stdout == ""
    line = one_error_line(result.stderr)
    assert line.startswith("Error: no answer: ")
    for fragment in fragments:
        assert fragment in line, line
    trace = cli.trace()
    assert trace["stop_reason"] == "llm_error"
    assert trace["error"] and trace["error"] in line
    assert trace["steps"][-1]["error"] == trace["error"]
    return trace


# --- retried, then the run succeeds -------------------------------------------------------------


@BOTH_MODES
@pytest.mark.parametrize("failure", list(TRANSIENT.values()), ids=list(TRANSIENT))
def test_transient_status_is_retried_and_the_run_answers(
    cli: Runner, wiki: FakeMediaWiki, failure: Reply, stream: bool
) -> None:
    with FakeOpenAI([failure, *scripted(*GOOD_RUN)]) as llm:
        result = ask(cli, llm, wiki, stream=stream)
    trace = assert_answered(cli, result)
    assert trace["steps"][0]["retries"] == 1
    assert [s["retries"] for s in trace["steps"][1:]] == [0, 0]
    assert len(llm.requests) == 4


def test_retry_after_is_honoured_but_capped(cli: Runner, wiki: FakeMediaWiki) -> None:
    """A server asking for an hour is waited on for max_retry_after_s (0.05 s here), no more."""
    cli.config(max_retry_after_s=0.05)
    replies = [Reply(status=429, headers={"Retry-After": "3600"}), *scripted(*GOOD_RUN)]
    with FakeOpenAI(replies) as llm:
        result = ask(cli, llm, wiki)
    assert_answered(cli, result)
    assert 0.05 <= cli.elapsed_s < HANG_S


@pytest.mark.parametrize("fault", ["cut_stream", "stall_stream"])
def test_broken_stream_is_reissued_and_shown_once(
    cli: Runner, wiki: FakeMediaWiki, fault: str
) -> None:
    """An SSE body cut before [DONE], or one that stalls past the read timeout mid-answer."""
    cli.config(timeout_s=0.2)  # the stalled attempt's wait; the answers come in milliseconds
    replies = [Reply(GOOD_RUN[0], fault=fault), *scripted(*GOOD_RUN)]
    with FakeOpenAI(replies) as llm:
        result = ask(cli, llm, wiki, "-v")
    trace = assert_answered(cli, result)
    assert trace["steps"][0]["retries"] == 1
    assert result.stderr.count("I need to search Arthur's Magazine") == 1
    assert cli.elapsed_s < HANG_S


def test_stop_rejected_is_dropped_and_the_cut_happens_client_side(
    cli: Runner, wiki: FakeMediaWiki
) -> None:
    rejection = json.dumps(
        {"error": {"message": "Unsupported parameter: 'stop' is not supported with this model."}}
    )
    invented = GOOD_RUN[0] + "\nObservation 1: Arthur's Magazine began in 2020.\nThought 2: x"
    replies = [Reply(status=400, body=rejection), Reply(invented), *scripted(*GOOD_RUN[1:])]
    with FakeOpenAI(replies) as llm:
        result = ask(cli, llm, wiki)
    trace = assert_answered(cli, result)
    assert "stop" in llm.requests[0].json and all("stop" not in r.json for r in llm.requests[1:])
    assert "2020" not in json.dumps(trace["steps"][0]["replies"])
    assert "2020" not in llm.requests[2].json["messages"][0]["content"]


@BOTH_MODES
def test_answer_far_longer_than_max_tokens_is_cut(
    cli: Runner, wiki: FakeMediaWiki, stream: bool
) -> None:
    """A server ignoring max_tokens: the client stops reading at 16 characters per token."""
    rambling = " I will think about magazines. " * 7000  # 217 000 characters, no action
    replies = [Reply(rambling), Reply(" Finish[Arthur's Magazine]")]
    with FakeOpenAI(replies, chunk_size=64) as llm:
        result = ask(cli, llm, wiki, "--max-tokens", "20", stream=stream)
    assert result.code == 0, result.stderr
    step = cli.trace()["steps"][0]
    assert len(step["replies"][0]["text"]) == 20 * 16
    assert step["actions"][0]["action"] == "Finish[Arthur's Magazine]"  # from "Action 1:"
    assert len(llm.requests[1].json["messages"][0]["content"]) < 10_000
    assert cli.elapsed_s < HANG_S


def test_body_far_larger_than_any_answer_is_refused(cli: Runner, wiki: FakeMediaWiki) -> None:
    huge = json.dumps({"choices": [{"message": {"content": "x" * 2_000_000}}]})
    with FakeOpenAI([Reply(body=huge)]) as llm:
        result = ask(cli, llm, wiki, stream=False)
    assert_failed(cli, result, "answered HTTP 200 with a body larger than")
    assert len(llm.requests) == 1


# --- fails: one line, exit 1, a trace that says why ----------------------------------------------


@pytest.mark.parametrize("status", [429, 500, 502, 503])
def test_persistent_status_fails_after_bounded_retries(
    cli: Runner, wiki: FakeMediaWiki, status: int
) -> None:
    cli.config(max_retry_after_s=0.05)
    with FakeOpenAI([Reply(status=status, headers={"Retry-After": "1"})]) as llm:
        result = ask(cli, llm, wiki)
    assert_failed(cli, result, f"kept failing with HTTP {status} after {RETRIES} retries")
    assert len(llm.requests) == RETRIES + 1
    assert cli.elapsed_s < HANG_S  # two waits capped at 0.05 s


def test_connection_refused(cli: Runner, wiki: FakeMediaWiki) -> None:
    with FakeOpenAI(scripted("unused")) as closed:
        pass  # its port is closed now
    result = ask(cli, closed, wiki)
    assert_failed(cli, result, "cannot reach", "connection refused")
    assert cli.elapsed_s < HANG_S


def test_no_answer_within_the_read_timeout(cli: Runner, wiki: FakeMediaWiki) -> None:
    cli.config(timeout_s=0.1)  # every attempt times out: no answer is cut short
    with FakeOpenAI([Reply(GOOD_RUN[0], delay_s=30)]) as llm:
        result = ask(cli, llm, wiki)
        received = llm.received(RETRIES + 1, within_s=HANG_S)  # the last may not be read yet
    trace = assert_failed(cli, result, "timed out waiting for the answer")
    # The client's own count of its attempts: on a busy machine an attempt can time out before
    # its request has left the client, so the fake may have seen fewer, never more.
    assert trace["steps"][-1]["retries"] == RETRIES
    assert 1 <= received == len(llm.requests) <= RETRIES + 1
    assert cli.elapsed_s < HANG_S  # 3 attempts of 0.1 s


def test_stream_that_keeps_stalling_mid_answer(cli: Runner, wiki: FakeMediaWiki) -> None:
    cli.config(timeout_s=0.1)  # every attempt stalls: no answer is cut short
    with FakeOpenAI([Reply(GOOD_RUN[0], fault="stall_stream")]) as llm:
        result = ask(cli, llm, wiki)
    assert_failed(cli, result, "broke off", f"after {RETRIES} re-issued requests")
    assert len(llm.requests) == RETRIES + 1
    assert cli.elapsed_s < HANG_S


def test_stream_that_keeps_ending_before_done(cli: Runner, wiki: FakeMediaWiki) -> None:
    with FakeOpenAI([Reply(GOOD_RUN[0], fault="cut_stream")]) as llm:
        result = ask(cli, llm, wiki)
    assert_failed(cli, result, "a stream that ended before [DONE]")
    assert len(llm.requests) == RETRIES + 1


@BOTH_MODES
def test_malformed_json(cli: Runner, wiki: FakeMediaWiki, stream: bool) -> None:
    with FakeOpenAI([Reply(body='{"choices": [oops')]) as llm:
        result = ask(cli, llm, wiki, stream=stream)
    assert_failed(cli, result, "answered HTTP 200 with malformed JSON")
    assert len(llm.requests) == 1


def test_malformed_stream_chunk(cli: Runner, wiki: FakeMediaWiki) -> None:
    body = 'data: {"choices": [{"delta": {"content": "hi"}}]}\n\ndata: {broken\n\n'
    replies = [Reply(body=body, headers={"Content-Type": "text/event-stream"})]
    with FakeOpenAI(replies) as llm:
        result = ask(cli, llm, wiki)
    assert_failed(cli, result, "malformed stream chunk")


@BOTH_MODES
def test_empty_choices(cli: Runner, wiki: FakeMediaWiki, stream: bool) -> None:
    with FakeOpenAI([Reply(fault="empty_choices")]) as llm:
        result = ask(cli, llm, wiki, stream=stream)
    assert_failed(cli, result, "answered HTTP 200 with")


@pytest.mark.parametrize("status", [401, 403])
@pytest.mark.parametrize("given_key", [True, False])
def test_401_names_the_fix_and_never_the_key(
    cli: Runner, wiki: FakeMediaWiki, given_key: bool, status: int
) -> None:
    """A configuration error: exit 2 with the server's message (not "no answer")."""
    echoed = KEY if given_key else "none"  # servers quote the key they were sent
    body = json.dumps({"error": {"message": f"Incorrect API key provided: {echoed}"}})
    args = ["--api-key", KEY, "--debug"] if given_key else []
    with FakeOpenAI([Reply(status=status, body=body)]) as llm:
        result = ask(cli, llm, wiki, *args)
    assert result.code == 2 and result.stdout == ""
    error = [line for line in result.stderr.splitlines() if line.startswith("Error: ")]
    assert len(error) == 1 and "Traceback" not in result.stderr
    assert not error[0].startswith("Error: no answer")
    expected = "rejected the API key" if given_key else "requires an API key"
    assert expected in error[0] and "OPENAI_API_KEY" in error[0] and f"HTTP {status}" in error[0]
    assert "Incorrect API key provided: " in error[0]
    trace = cli.trace()
    assert trace["stop_reason"] == "llm_error"
    assert KEY not in result.stderr + json.dumps(trace)
    assert len(llm.requests) == 1


def test_404_model(cli: Runner, wiki: FakeMediaWiki) -> None:
    """A configuration error: exit 2 with the server's message and what to run."""
    body = json.dumps({"error": {"message": "The model `test-model` does not exist"}})
    with FakeOpenAI([Reply(status=404, body=body)]) as llm:
        result = ask(cli, llm, wiki)
    assert result.code == 2 and result.stdout == ""
    line = one_error_line(result.stderr)
    for fragment in ("not found (HTTP 404)", "'test-model'", "check the model name"):
        assert fragment in line
    assert "'react-cli models' lists them" in line and "does not exist" in line
    assert cli.trace()["stop_reason"] == "llm_error"
    assert len(llm.requests) == 1


def test_a_base_url_without_v1_is_told_to_add_it(cli: Runner, wiki: FakeMediaWiki) -> None:
    """The fake serves /v1/...: a base URL without it gets a 404 at /chat/completions."""
    with FakeOpenAI(scripted("unused")) as llm:
        root = llm.url.removesuffix("/v1")
        result = cli(
            ["ask", "q"], OPENAI_BASE_URL=root, REACT_CLI_MODEL="m", REACT_CLI_WIKI=wiki.url
        )
        models = cli(["models"], OPENAI_BASE_URL=root + "/")
    assert result.code == 2
    hint = f"the base URL has no /v1: try --base-url {root}/v1 (then check the model name"
    assert hint in one_error_line(result.stderr)
    assert models.code == 2 and hint in one_error_line(models.stderr)


def test_other_400_is_not_retried(cli: Runner, wiki: FakeMediaWiki) -> None:
    body = json.dumps({"error": {"message": "temperature must be\nat most 2"}})
    with FakeOpenAI([Reply(status=400, body=body)]) as llm:
        result = ask(cli, llm, wiki)
    assert_failed(cli, result, "rejected the request (HTTP 400)", "temperature must be at most 2")
    assert len(llm.requests) == 1


def test_failure_after_progress_keeps_the_earlier_steps(cli: Runner, wiki: FakeMediaWiki) -> None:
    with FakeOpenAI([*scripted(GOOD_RUN[0]), Reply(status=500)]) as llm:
        result = ask(cli, llm, wiki, "--json")
    assert result.code == 1
    summary = json.loads(result.stdout)
    assert summary["stop_reason"] == "llm_error" and summary["answer"] is None
    assert summary["steps"][0]["actions"][0]["action"] == "Search[Arthur's Magazine]"
    assert "HTTP 500" in summary["steps"][1]["error"]
    one_error_line(result.stderr)
    assert cli.trace()["steps"][0]["actions"][0]["observation"].startswith(
        "Arthur's Magazine (1844"
    )


@pytest.mark.parametrize("credentials", ["in the URL", "in ~/.netrc"])
def test_the_api_key_is_sent_whatever_else_names_credentials(
    cli: Runner, wiki: FakeMediaWiki, tmp_path: Path, credentials: str
) -> None:
    """requests would replace a plain Authorization header with Basic auth taken from
    ``user:password@`` in the URL or from a netrc entry for the host: the key must still go."""
    netrc = tmp_path / "netrc"
    netrc.write_text("machine 127.0.0.1 login bob password netrcpw\n", encoding="utf-8")
    with FakeOpenAI(scripted(GOOD_RUN[-1])) as llm:
        env = {**servers_env(llm, wiki), "OPENAI_API_KEY": "sk-test-key", "NETRC": str(netrc)}
        if credentials == "in the URL":
            env["OPENAI_BASE_URL"] = llm.url.replace("http://", "http://alice:hunter2pw@")
        result = cli(["ask", QUESTION], **env)
    assert result.code == 0, result.stderr
    assert llm.requests[0].headers["authorization"] == "Bearer sk-test-key"


@pytest.mark.parametrize("fault", ["refused", "500"])
def test_url_credentials_and_query_never_shown(
    cli: Runner, wiki: FakeMediaWiki, fault: str
) -> None:
    """http://user:pass@host/v1?key=... : neither the password nor the query string reaches
    the error line, the debug log or the trace; the query stays on the request URL."""
    with FakeOpenAI([Reply(status=500)]) as llm:
        if fault == "refused":
            llm.stop()
        url = llm.url.replace("http://", "http://alice:hunter2pw@") + "?key=QUERYSECRET"
        env = {**servers_env(llm, wiki), "OPENAI_BASE_URL": url}
        result = cli(["ask", QUESTION, "--debug"], **env)
    assert result.code == 1 and result.stdout == ""
    assert "Error: no answer: " in result.stderr and "Traceback" not in result.stderr
    trace_text = json.dumps(cli.trace())
    for text in (result.stderr, trace_text):
        assert "hunter2pw" not in text and "QUERYSECRET" not in text and "alice" not in text
    if fault == "500":
        assert llm.requests[0].path == "/v1/chat/completions?key=QUERYSECRET"
        assert llm.requests[0].headers["authorization"].startswith("Basic ")
