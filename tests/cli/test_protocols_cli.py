"""Both protocols through the command line, in-process, against an endpoint that speaks both
(``tool_fakes``) and the recorded fake Wikipedia: each loop method's ask, trace, replay
(shown, re-run offline, exported), fork, eval and eval compare; the usage errors; an endpoint
that refuses tools; what ``-v`` shows; ``--constrain``'s grammar and its refusal."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from eval_fakes import HOTPOT, Q, rows_of, summary_of
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, Reply
from inproc import Runner, one_error_line, servers_env
from method_fakes import SCRIPTS, MethodsEndpoint
from tool_fakes import ProtocolsEndpoint, tool_call, tools_script

from react_cli.loop.text.grammar import step_grammar
from react_cli.tools.paper import PAPER_TOOLS


@pytest.fixture(scope="module")
def llm() -> Iterator[FakeOpenAI]:
    tools = {question: tools_script(script) for question, script in SCRIPTS.items()}
    with FakeOpenAI(ProtocolsEndpoint(MethodsEndpoint(SCRIPTS), tools)) as server:
        yield server


# Question 1 (gold: Chief of Protocol): ReAct searches, then answers right; Act answers wrong.
MATRIX = [
    ("tools", "react", "Chief of Protocol", 2),
    ("tools", "act", "Ambassador", 2),
    ("tools", "react+cot-sc", "Chief of Protocol", 2),
    ("tools", "cot", "Ambassador", 1),
    ("text", "react", "Chief of Protocol", 2),
]


@pytest.mark.parametrize(("protocol", "method", "answer", "calls"), MATRIX)
def test_ask_traces_and_reruns_each_method_in_each_protocol(
    cli: Runner,
    llm: FakeOpenAI,
    wiki: FakeMediaWiki,
    tmp_path: Path,
    protocol: str,
    method: str,
    answer: str,
    calls: int,
) -> None:
    trace_path = tmp_path / "t.json"
    llm.requests.clear()
    args = ("--protocol", protocol, "--method", method, "--trace", str(trace_path), "--json")
    result = cli.ask(llm, wiki, *args, question=Q[1])
    assert result.code == 0, result.stderr
    summary = json.loads(result.stdout)
    assert (summary["answer"], summary["protocol"], summary["calls"]) == (answer, protocol, calls)
    bodies = [r.json for r in llm.requests if r.json]
    loops = method != "cot"
    assert all(("tools" in body) == (protocol == "tools" and loops) for body in bodies)
    trace = json.loads(trace_path.read_text(encoding="utf-8"))
    assert trace["config"]["protocol"] == protocol
    steps = trace["steps"]
    if protocol == "tools" and loops:
        (first,) = steps[0]["actions"]
        assert first["call"]["id"] == "call_fake_0"
        assert first["call"]["arguments"] == {"entity": "Kiss and Tell"}
        assert steps[0]["replies"][0]["message"]["tool_calls"][0]["function"]["name"] == "search"
        assert first["action"] == "Search[Kiss and Tell]"
        assert bodies[0]["messages"][0]["role"] == "system"
        assert bodies[1]["messages"][-1]["role"] == "tool"
        assert bodies[1]["messages"][-1]["content"] == first["observation"]
    else:
        assert all("message" not in reply for step in steps for reply in step["replies"])
    rerun = cli(["replay", "--rerun", "--json", str(trace_path)])
    assert rerun.code == 0, rerun.stdout + rerun.stderr
    assert json.loads(rerun.stdout)["reproduced"] is True


@pytest.fixture
def tools_trace(cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki, tmp_path: Path) -> Path:
    path = tmp_path / "tools.json"
    result = cli.ask(llm, wiki, "--protocol", "tools", "--trace", str(path), question=Q[1])
    assert result.code == 0, result.stderr
    return path


def test_a_tools_run_shows_exports_and_forks(
    cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki, tools_trace: Path, tmp_path: Path
) -> None:
    shown = cli(["replay", str(tools_trace)])
    assert shown.code == 0
    lines = shown.stdout.splitlines()
    assert (
        "Action 1: Search[Kiss and Tell]" in lines
        and "Action 2: Finish[Chief of Protocol]" in lines
    )
    assert any(line.startswith("Thought 1: I need to search Kiss and Tell.") for line in lines)
    markdown = cli(["replay", "--format", "markdown", str(tools_trace)])
    assert "**Action 1:** Search\\[Kiss and Tell\\]" in markdown.stdout
    assert "| Protocol | tools |" in markdown.stdout
    page = cli(["replay", "--format", "html", str(tools_trace)])
    assert page.code == 0 and "Search[Kiss and Tell]" in page.stdout
    fork = tmp_path / "fork.json"
    llm.requests.clear()
    forked = cli(
        ["ask", "--from-trace", str(tools_trace), "--from-step", "2", "--trace", str(fork)],
        **servers_env(llm, wiki),
    )
    assert forked.code == 0, forked.stderr
    assert forked.stdout == "Chief of Protocol\n" and len(llm.requests) == 1
    body = llm.requests[0].json
    assert body is not None and body["messages"][-1]["role"] == "tool"  # step 1 replayed
    data = json.loads(fork.read_text(encoding="utf-8"))
    assert data["config"]["protocol"] == "tools" and data["forked_from"]["step"] == 2
    wrong = cli(
        ["ask", "--from-trace", str(tools_trace), "--from-step", "2", "--protocol", "text"],
        **servers_env(llm, wiki),
    )
    assert wrong.code == 2
    assert one_error_line(wrong.stderr) == "Error: a fork continues the trace's protocol, tools"


def test_eval_and_eval_compare_a_text_eval_with_a_tools_eval(
    cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    env = servers_env(llm, wiki)
    outs = {}
    for protocol in ("text", "tools"):
        out = outs[protocol] = tmp_path / protocol
        args = ["eval", str(HOTPOT), "--limit", "3", "--max-steps", "3", "--out", str(out)]
        result = cli([*args, "--protocol", protocol], **env)
        assert result.code == 0, result.stderr
        assert summary_of(out)["config"]["protocol"] == protocol
    text_rows, tools_rows = rows_of(outs["text"]), rows_of(outs["tools"])
    assert [r["em"] for r in text_rows] == [r["em"] for r in tools_rows] == [1.0, 1.0, 0.0]
    trace = json.loads((outs["tools"] / tools_rows[1]["trace"]).read_text(encoding="utf-8"))
    assert trace["steps"][0]["replies"][0]["message"]["role"] == "assistant"
    compared = cli(["eval", "compare", str(outs["text"]), str(outs["tools"]), "--json"])
    assert compared.code == 0, compared.stderr
    data = json.loads(compared.stdout)
    assert data["a"]["label"] == "test-model · hotpotqa"
    assert data["b"]["label"] == "test-model · hotpotqa · tools"
    assert data["paired"] == 3 and data["scores"]["em"]["difference"] == 0
    shown = cli(["eval", "show", str(outs["tools"])])
    assert shown.code == 0 and "tools" in shown.stdout + shown.stderr


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--protocol", "tools", "--api", "completions"), "--protocol tools needs the chat API"),
        (("--protocol", "tools", "--constrain"), "--constrain applies to --protocol text"),
        (("--protocol", "json"), "--protocol must be one of text, tools, not 'json'"),
        (("--prompt", "hotpotqa-tools"), "the prompt 'hotpotqa-tools' is a tools protocol prompt"),
        (("--protocol", "tools", "--prompt", "hotpotqa-act"), "is a act prompt"),
    ],
)
def test_what_cannot_be_asked_is_a_usage_error(
    cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki, args: tuple[str, ...], said: str
) -> None:
    result = cli.ask(llm, wiki, *args)
    assert result.code == 2
    assert said in one_error_line(result.stderr)


def test_the_protocol_is_a_setting_like_the_others(cli: Runner) -> None:
    cli.config(protocol="tools")
    shown = cli(["config", "--json"], REACT_CLI_PROTOCOL="text")
    settings = json.loads(shown.stdout)["settings"]
    assert settings["protocol"] == {"value": "text", "from": "env REACT_CLI_PROTOCOL"}
    assert settings["constrain"] == {"value": False, "from": "default"}
    assert json.loads(cli(["config", "--json"]).stdout)["settings"]["protocol"]["from"] == "file"
    assert "REACT_CLI_PROTOCOL" in cli(["--help"]).stdout


def test_an_endpoint_refusing_tools_is_one_error_line(cli: Runner, wiki: FakeMediaWiki) -> None:
    refusal = json.dumps({"error": {"message": "tools param requires --jinja flag"}})
    with FakeOpenAI([Reply(status=400, body=refusal)]) as llm:
        result = cli.ask(llm, wiki, "--protocol", "tools")
    assert result.code == 2
    line = one_error_line(result.stderr)
    assert "does not accept tools (HTTP 400: tools param requires --jinja flag)" in line
    assert line.endswith("use --protocol text")
    assert cli.trace()["stop_reason"] == "llm_error"


def test_v_shows_the_thought_as_it_streams_and_the_action_once_complete(
    cli: Runner, wiki: FakeMediaWiki
) -> None:
    replies = [
        Reply(
            text="I need to search Arthur's Magazine.",
            tool_calls=[
                tool_call("search", entity="Arthur's Magazine"),
                tool_call("search", entity="First for Women"),
            ],
        ),
        Reply(tool_calls=[tool_call("finish", answer="Arthur's Magazine")], call_deltas="repeat"),
    ]
    with FakeOpenAI(replies) as llm:
        result = cli.ask(llm, wiki, "--protocol", "tools", "-v")
    assert result.code == 0 and result.stdout == "Arthur's Magazine\n"
    labels = ("Thought", "Action", "Observation")
    lines = [line for line in result.stderr.splitlines() if line.startswith(labels)]
    assert [line.split(":")[0] for line in lines] == [
        "Thought 1",
        "Action 1.1",
        "Action 1.2",
        "Observation 1.1",
        "Observation 1.2",
        "Action 2",
    ]
    assert lines[0] == "Thought 1: I need to search Arthur's Magazine."
    assert lines[1] == "Action 1.1: Search[Arthur's Magazine]"
    assert lines[2] == "Action 1.2: Search[First for Women]"
    assert lines[5] == "Action 2: Finish[Arthur's Magazine]"
    assert "stop: finish · 2 steps" in result.stderr  # a reply is a step, whatever its calls


def test_constrain_sends_a_grammar_and_a_refusal_is_one_warning(
    cli: Runner, wiki: FakeMediaWiki
) -> None:
    refused = json.dumps({"error": {"message": "Unrecognized request argument supplied: grammar"}})
    steps = [
        " I search.\nAction 1: Search[Arthur's Magazine]",
        " Done.\nAction 2: Finish[Arthur's Magazine]",
    ]
    with FakeOpenAI(
        [Reply(text=steps[0]), Reply(status=400, body=refused), Reply(text=steps[1])]
    ) as llm:
        result = cli.ask(llm, wiki, "--constrain", "--api", "completions")
    assert result.code == 0, result.stderr
    bodies: list[dict[str, Any]] = [r.json for r in llm.requests if r.json]
    assert bodies[0]["grammar"] == step_grammar(1, PAPER_TOOLS, thoughts=True)
    assert "grammar" in bodies[1] and "grammar" not in bodies[2]
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "the rest of the run is not constrained" in warnings[0]
    assert cli.trace()["config"]["constrain"] is True


def test_an_endpoint_that_ignores_tools_is_said_to_at_the_end(
    cli: Runner, wiki: FakeMediaWiki
) -> None:
    """llama-cpp-python's default chat format answers a request with tools as plain text."""
    with FakeOpenAI([Reply(text="I think the answer is Paris.")]) as llm:
        result = cli.ask(llm, wiki, "--protocol", "tools")
    assert result.code == 1 and len(llm.requests) == 6  # 3 steps, each with its follow-up
    assert one_error_line(result.stderr) == (
        "Error: no answer: the model kept writing no valid action (no reply called a tool: "
        "the endpoint may ignore tools; try --protocol text)"
    )


def test_one_500_to_a_forced_tool_choice_is_retried_and_forcing_goes_on(
    cli: Runner, wiki: FakeMediaWiki
) -> None:
    """A 500 that passes is a fault like any other, not llama-cpp-python's refusal of
    ``required`` (a 500 on every try): the follow-ups after it still force a call."""
    replies = [
        Reply(text="Let me think."),  # no call: the follow-up forces one
        Reply(status=500),
        Reply(tool_calls=[tool_call("search", entity="Arthur's Magazine")]),
        Reply(text="Still thinking."),
        Reply(tool_calls=[tool_call("finish", answer="1844")]),
    ]
    with FakeOpenAI(replies) as llm:
        result = cli.ask(llm, wiki, "--protocol", "tools")
    assert (result.code, result.stdout) == (0, "1844\n"), result.stderr
    chosen = [r.json["tool_choice"] for r in llm.requests if r.json]
    assert chosen == ["auto", "required", "required", "auto", "required"]
