"""Local model servers out of the box: default max_tokens, length stops, usage estimates, cost.

Everything runs through ``react-cli`` in-process against loopback fakes; the fake model server
can behave like llama-cpp-python (16 tokens when a request sends no ``max_tokens``, no usage
when streaming).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import CliResult
from eval_fakes import PerQuestion, finish
from fake_mediawiki import FakeMediaWiki, Fault
from fake_openai import FakeOpenAI, Reply, scripted
from inproc import Runner, retry_notices, sourceless

QUESTION = "Which magazine was started first, Arthur's Magazine or First for Women?"
# Thoughts of a real length: each far longer than 16 tokens (64 characters).
GOOD_RUN = (
    " Arthur's Magazine and First for Women are both magazines, so I need to search each of"
    " them and compare the years they were started.\nAction 1: Search[Arthur's Magazine]",
    " Arthur's Magazine was started in 1844, a long time ago. Now I need to search First for"
    " Women to find out when it was started.\nAction 2: Search[First for Women]",
    " First for Women was started in 1989, and 1844 comes before 1989, so Arthur's Magazine"
    " was started first.\nAction 3: Finish[Arthur's Magazine]",
)
EVAL_DATA = Path(__file__).resolve().parents[1] / "fixtures" / "eval" / "hotpotqa_dev_first6.json"


def ask(cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki, *args: str) -> CliResult:
    return cli(
        ["ask", QUESTION, *args],
        OPENAI_BASE_URL=llm.url,
        REACT_CLI_MODEL="test-model",
        REACT_CLI_WIKI=wiki.url,
    )


# --- max_tokens -----------------------------------------------------------------------------


@pytest.mark.parametrize("api", ["completions", "chat"])
def test_a_server_defaulting_to_16_tokens_gets_whole_thoughts(
    cli: Runner, wiki: FakeMediaWiki, api: str
) -> None:
    """llama-cpp-python answers 16 tokens when a request sends no max_tokens: with react-cli's
    defaults no Thought is cut and no follow-up "Action k:" call is made."""
    with FakeOpenAI(scripted(*GOOD_RUN), default_max_tokens=16) as llm:
        result = ask(cli, llm, wiki, "--api", api)
    assert result.code == 0, result.stderr
    assert result.stdout == "Arthur's Magazine\n" and sourceless(result.stderr) == ""
    assert [r.json["max_tokens"] for r in llm.requests] == [256] * 3
    key = "prompt" if api == "completions" else "messages"
    prompts = [str(r.json[key]) for r in llm.requests]
    assert all(re.search(r"Thought \d:\W*$", p) for p in prompts)  # no "Action k:" call
    steps = cli.trace()["steps"]
    assert [[reply["text"] for reply in s["replies"]] for s in steps] == [[t] for t in GOOD_RUN]
    assert not any("max_tokens_reached" in reply for s in steps for reply in s["replies"])


def test_max_tokens_from_the_flag_the_environment_and_the_config_file(
    cli: Runner, wiki: FakeMediaWiki
) -> None:
    cli.config(max_tokens=300)
    sent = []
    for args, env in (
        ([], {}),
        ([], {"REACT_CLI_MAX_TOKENS": "400"}),
        (["--max-tokens", "500"], {"REACT_CLI_MAX_TOKENS": "400"}),
    ):
        with FakeOpenAI(scripted(GOOD_RUN[2])) as llm:
            result = cli(
                ["ask", QUESTION, "--no-trace", *args],
                OPENAI_BASE_URL=llm.url,
                REACT_CLI_MODEL="m",
                REACT_CLI_WIKI=wiki.url,
                **env,
            )
        assert result.code == 0, result.stderr
        sent.append(llm.requests[0].json["max_tokens"])
    assert sent == [300, 400, 500]


def test_a_reply_stopped_by_max_tokens_warns_once_and_is_recorded(
    cli: Runner, wiki: FakeMediaWiki
) -> None:
    """--max-tokens 8 cuts every thought (32 characters): one warning line for the run, and
    each cut step says so in the trace and in -v."""
    with FakeOpenAI(
        [*scripted(*GOOD_RUN), Reply(" Finish[Arthur's Magazine]")] * 3, default_max_tokens=16
    ) as llm:
        result = ask(cli, llm, wiki, "--max-tokens", "8", "--max-steps", "2", "-v")
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == ["warning: the model stopped at max_tokens=8; raise --max-tokens"]
    assert "stopped at max_tokens" in result.stderr.split("warning:")[0]
    cut, _ = cli.trace()["steps"][0]["replies"]  # the cut thought cost an extra call
    assert cut["max_tokens_reached"] is True and len(cut["text"]) == 32


def test_eval_warns_once_for_all_questions(
    cli: Runner, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    script = PerQuestion({}, default=[" " + "I think about this question at length. " * 4])
    with FakeOpenAI(script, default_max_tokens=16) as llm:
        result = cli(
            [
                *("eval", str(EVAL_DATA), "--limit", "3", "--max-steps", "1"),
                *("--max-tokens", "4", "--out", str(tmp_path / "out"), "--concurrency", "1"),
            ],
            OPENAI_BASE_URL=llm.url,
            REACT_CLI_MODEL="m",
            REACT_CLI_WIKI=wiki.url,
        )
    assert result.code == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == [
        "warning: the model stopped at max_tokens=4 in 3 questions; raise --max-tokens"
    ]


# --- usage estimates ------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [True, False])
def test_no_reported_usage_is_estimated_and_marked(
    cli: Runner, wiki: FakeMediaWiki, stream: bool
) -> None:
    replies = [Reply(text, usage=False) for text in GOOD_RUN]
    args = ["-v", "--json"] + ([] if stream else ["--no-stream"])
    with FakeOpenAI(replies) as llm:
        result = ask(cli, llm, wiki, *args)
    assert result.code == 0, result.stderr
    trace = cli.trace()
    usage = trace["usage"]
    assert usage["estimated"] is True and usage["total_tokens"] > 1000
    assert all(s["usage"]["estimated"] and s["usage"]["total_tokens"] > 0 for s in trace["steps"])
    prompt_chars = sum(len(r.json["messages"][0]["content"]) for r in llm.requests)
    assert usage["prompt_tokens"] == pytest.approx(prompt_chars / 4, abs=3)
    assert json.loads(result.stdout)["usage"] == usage
    shown = f"~{usage['total_tokens']:,} tokens (estimated)"
    assert shown in result.stderr.splitlines()[-1]
    assert " 0 tokens" not in result.stderr


def test_reported_usage_is_shown_as_reported(cli: Runner, wiki: FakeMediaWiki) -> None:
    with FakeOpenAI(scripted(*GOOD_RUN)) as llm:
        result = ask(cli, llm, wiki, "-v")
    usage = cli.trace()["usage"]
    assert usage["estimated"] is False
    last = sourceless(result.stderr).splitlines()[-1]
    assert f" {usage['total_tokens']:,} tokens" in last and "estimated" not in last


def test_eval_rows_and_summary_mark_estimates(
    cli: Runner, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    script = PerQuestion({}, default=[Reply(finish("yes"), usage=False)])
    out = tmp_path / "out"
    with FakeOpenAI(script) as llm:
        result = cli(
            ["eval", str(EVAL_DATA), "--limit", "2", "--out", str(out)],
            OPENAI_BASE_URL=llm.url,
            REACT_CLI_MODEL="m",
            REACT_CLI_WIKI=wiki.url,
        )
    assert result.code == 0, result.stderr
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert all(r["usage"]["estimated"] and r["tokens"] == r["usage"]["total_tokens"] for r in rows)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["tokens_estimated"] is True
    assert re.search(r"avg tokens\W+~[\d,]+ \(estimated\)", result.stderr)


# --- retries are shown as they start ----------------------------------------------------------


def test_each_model_retry_is_announced_on_stderr(cli: Runner, wiki: FakeMediaWiki) -> None:
    """Not only with -v: a 429 twice, then the run answers."""
    with FakeOpenAI([Reply(status=429), Reply(status=429), *scripted(*GOOD_RUN)]) as llm:
        result = ask(cli, llm, wiki)
    assert result.code == 0 and result.stdout == "Arthur's Magazine\n"
    assert sourceless(result.stderr).splitlines() == [
        "retrying in 0.0 s: HTTP 429 (1/2)",
        "retrying in 0.0 s: HTTP 429 (2/2)",
    ]
    assert cli.trace()["steps"][0]["retries"] == 2


def test_a_broken_stream_reissue_is_announced(cli: Runner, wiki: FakeMediaWiki) -> None:
    with FakeOpenAI([Reply(GOOD_RUN[0], fault="cut_stream"), *scripted(*GOOD_RUN)]) as llm:
        result = ask(cli, llm, wiki)
    assert result.code == 0, result.stderr
    assert retry_notices(result.stderr) == ["retrying in 0.0 s: the stream was cut off (1/2)"]


def test_wikipedia_retries_and_maxlag_waits_are_announced(cli: Runner, wiki: FakeMediaWiki) -> None:
    wiki.faults.extend([Fault(status=503), Fault(api_error="maxlag", headers={"Retry-After": "0"})])
    with FakeOpenAI(scripted(*GOOD_RUN)) as llm:
        result = ask(cli, llm, wiki)
    assert result.code == 0, result.stderr
    assert sourceless(result.stderr).splitlines() == [
        "retrying in 0.0 s: HTTP 503 (1/2)",
        "retrying in 0.0 s: 127.0.0.1 is lagging (maxlag) (1/3)".replace(
            "127.0.0.1", wiki.url.split("//")[1]
        ),
    ]
    assert cli.trace()["steps"][0]["actions"][0]["retries"] == 2


def test_a_failure_is_printed_once_with_the_time_it_took(cli: Runner, wiki: FakeMediaWiki) -> None:
    """-v: the retries, the failed step with its real model time and retries, one Error line."""
    with FakeOpenAI([Reply(status=503, headers={"Retry-After": "1"})]) as llm:
        result = ask(cli, llm, wiki, "-v")
    assert result.code == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error: ")]
    assert len(errors) == 1 and result.stderr.endswith(errors[0] + "\n")
    message = errors[0].removeprefix("Error: no answer: ")
    assert result.stderr.count("kept failing with HTTP 503") == 1, result.stderr
    assert len(retry_notices(result.stderr)) == 2
    meta = re.search(r"\(model (\d+\.\d+) s · 2 retries · failed\)", result.stderr)
    assert meta and float(meta.group(1)) >= 0.4  # two waits of 0.2 s (Retry-After, capped)
    assert "No answer (llm_error)\n" in result.stderr
    trace = cli.trace()
    assert trace["steps"][0]["latency_s"] >= 0.4 and trace["error"] == message
    assert trace["steps"][0]["retries"] == 2  # as the notices said


def test_text_the_parser_ignores_is_dimmed_never_a_step(cli: Runner, wiki: FakeMediaWiki) -> None:
    """A base model writes the next step itself (a server that ignores stop): -v shows it as
    (ignored), the loop runs one Search only, and the trace keeps it in raw."""
    invented = "\nThought 2: It was 1844.\nAction 2: Finish[1844]"
    replies = [Reply(GOOD_RUN[0] + invented, ignore_stop=True), *scripted(*GOOD_RUN[1:])]
    with FakeOpenAI(replies) as llm:
        result = ask(cli, llm, wiki, "-v")
    assert result.code == 0 and result.stdout == "Arthur's Magazine\n", result.stderr
    assert (
        "Action 1: Search[Arthur's Magazine]\n(ignored) Thought 2: It was 1844.\n" in result.stderr
    )
    assert "Action 2: Finish[1844]\nObservation 1:" in result.stderr  # dimmed, then the tool
    step = cli.trace()["steps"][0]
    assert step["replies"][0]["text"].endswith(invented)
    assert step["replies"][0]["ignored"] == invented
    assert step["actions"][0]["action"] == "Search[Arthur's Magazine]"
    assert "Thought 2: It was 1844" not in llm.requests[1].json["messages"][0]["content"]
