"""`react-cli ask` end to end, in-process against local fake model and wiki servers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import ROOT
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, Reply, scripted
from inproc import GOOD_RUN, QUESTION, Runner, actions, only_trace_path, servers_env

from react_cli.loop.text.protocol import STOP_SEQUENCES


@pytest.mark.parametrize("api", ["chat", "completions"])
@pytest.mark.parametrize("stream", [True, False])
def test_answers_end_to_end(cli: Runner, wiki: FakeMediaWiki, api: str, stream: bool) -> None:
    with FakeOpenAI(scripted(*GOOD_RUN)) as llm:
        result = cli.ask(llm, wiki, "--api", api, *([] if stream else ["--no-stream"]))
    assert result.code == 0, result.stderr
    assert result.stdout == "Arthur's Magazine\n"
    assert result.stderr.startswith("Sources:\n[1] Arthur's Magazine — ")  # and nothing else
    assert len(result.stderr.splitlines()) == 3
    path = "/v1/chat/completions" if api == "chat" else "/v1/completions"
    assert [r.path for r in llm.requests] == [path] * 3
    assert all(r.json["stream"] is stream for r in llm.requests)
    assert all(r.json["stop"] == list(STOP_SEQUENCES) for r in llm.requests)
    trace = cli.trace()
    assert trace["version"] == 3
    assert trace["answer"] == "Arthur's Magazine" and trace["stop_reason"] == "finish"
    assert (trace["method"], trace["branch"], trace["calls"]) == ("react", "react", 3)
    assert [a["action"] for a in actions(trace)] == [
        "Search[Arthur's Magazine]",
        "Search[First for Women]",
        "Finish[Arthur's Magazine]",
    ]
    assert "American literary periodical" in trace["steps"][0]["actions"][0]["observation"]
    assert "started in 1989" in trace["steps"][1]["actions"][0]["observation"]
    assert trace["config"]["api"] == api and trace["config"]["model"] == "test-model"
    assert trace["prompt_template"].startswith("Solve a question answering task")
    assert trace["usage"]["total_tokens"] > 0
    for step in trace["steps"]:
        assert step["latency_s"] > 0 and set(step["usage"]) >= {"prompt_tokens"}
    # The steps' times are parts of the run's (each rounded to 0.1 ms, the run's to 1 ms).
    spent = sum(step["latency_s"] for step in trace["steps"])
    spent += sum(action["latency_s"] for action in actions(trace))
    assert spent <= trace["duration_s"] + 0.001


def test_chat_sends_the_whole_prompt_as_one_user_message(cli: Runner, wiki: FakeMediaWiki) -> None:
    with FakeOpenAI(scripted(*GOOD_RUN)) as llm:
        assert cli.ask(llm, wiki).code == 0
    messages = llm.requests[0].json["messages"]
    assert len(messages) == 1 and messages[0]["role"] == "user"
    assert messages[0]["content"].endswith(f"Question: {QUESTION}\nThought 1:")


def test_prompt_grows_append_only(cli: Runner, wiki: FakeMediaWiki) -> None:
    with FakeOpenAI(scripted(*GOOD_RUN)) as llm:
        assert cli.ask(llm, wiki, "--api", "completions").code == 0
    prompts = [r.json["prompt"] for r in llm.requests]
    for k in range(2):
        assert prompts[k + 1].startswith(prompts[k] + GOOD_RUN[k] + f"\nObservation {k + 1}: ")


def test_server_ignoring_stop_cannot_inject_observations(cli: Runner, wiki: FakeMediaWiki) -> None:
    invented = GOOD_RUN[0] + "\nObservation 1: Arthur's Magazine was founded in 2020.\nThought 2:"
    replies = [Reply(invented, ignore_stop=True), *scripted(*GOOD_RUN[1:])]
    with FakeOpenAI(replies) as llm:
        result = cli.ask(llm, wiki, "-v")
    assert result.code == 0
    trace = cli.trace()
    assert "2020" not in trace["steps"][0]["replies"][0]["text"]
    assert "2020" not in llm.requests[1].json["messages"][0]["content"]
    assert "2020" not in result.stderr


def test_json_output(cli: Runner, wiki: FakeMediaWiki) -> None:
    with FakeOpenAI(scripted(*GOOD_RUN)) as llm:
        result = cli.ask(llm, wiki, "--json")
    data = json.loads(result.stdout)
    assert data["answer"] == "Arthur's Magazine"
    assert data["stop_reason"] == "finish"
    assert len(data["steps"]) == 3
    assert data["trace"] == str(only_trace_path(cli.home))
    assert data["usage"] == cli.trace()["usage"] and data["usage"]["total_tokens"] > 0


def test_verbose_trajectory_goes_to_stderr(cli: Runner, wiki: FakeMediaWiki) -> None:
    with FakeOpenAI(scripted(*GOOD_RUN)) as llm:
        result = cli.ask(llm, wiki, "-v")
    assert result.stdout == "Arthur's Magazine\n"
    for k in (1, 2, 3):
        assert f"Thought {k}:" in result.stderr
    assert "Observation 1: Arthur's Magazine (1844-" in result.stderr
    assert "Answer: Arthur's Magazine" in result.stderr
    assert "stop: finish · 3 steps" in result.stderr
    assert "\x80" not in result.stderr  # C1 control characters from the page are removed


def test_question_from_stdin(cli: Runner, wiki: FakeMediaWiki) -> None:
    for args in (["ask"], ["ask", "-"]):
        with FakeOpenAI(scripted(*GOOD_RUN)) as llm:
            result = cli(args, QUESTION + "\n", **servers_env(llm, wiki))
        assert result.code == 0, result.stderr
        assert QUESTION in llm.requests[0].json["messages"][0]["content"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["ask", "   "], "the question is empty"),
        (["ask", "q", "--api", "rpc"], "--api must be one of chat, completions, not 'rpc'"),
        (["ask", "q", "--max-steps", "0"], "--max-steps must be at least 1"),
        (["ask", "q", "--max-steps", "many"], "Invalid value for '--max-steps'"),
        (["ask", "q", "--prompt", "nope"], "no prompt named 'nope'"),
        (["ask", "q", "--base-url", "ftp://x"], "--base-url must be an http(s) URL"),
        (["ask", "q", "--wiki", "gopher://x"], "wiki"),
        (["ask", "q", "--bogus"], "No such option"),
    ],
)
def test_usage_errors_exit_2_with_one_line(cli: Runner, args: list[str], message: str) -> None:
    result = cli(args, REACT_CLI_MODEL="m", OPENAI_API_KEY="sk-test")
    assert result.code == 2, result.stderr
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    assert message in lines[0]


def test_endpoint_down_exits_1_and_keeps_the_trace(cli: Runner, wiki: FakeMediaWiki) -> None:
    with FakeOpenAI(scripted("unused")) as closed:
        url = closed.url  # the port is closed once the server stops
    cli.config_text("")  # the defaults a new user has: 4 retries, none spent on a refusal
    result = cli(["ask", "q"], OPENAI_BASE_URL=url, REACT_CLI_MODEL="m", REACT_CLI_WIKI=wiki.url)
    assert result.code == 1
    assert result.stdout == ""
    assert result.stderr == (
        f"Error: no answer: cannot reach {url}/chat/completions: connection refused; is the "
        "model server started? ('react-cli models' lists what it serves)\n"
    )
    # no retry notice above it: issue 32 (it retried 4 times, with backoff)
    assert cli.trace()["stop_reason"] == "llm_error"


def test_step_limit_exits_1(cli: Runner, wiki: FakeMediaWiki) -> None:
    loop = [f" t\nAction {i}: Search[Page {i}]" for i in range(1, 4)]
    with FakeOpenAI(scripted(*loop)) as llm:
        result = cli.ask(llm, wiki, "--max-steps", "3", question="q")
    assert result.code == 1
    assert result.stderr == "Error: no answer: the step limit (3) was reached\n"
    assert cli.trace()["stop_reason"] == "max_steps"


def test_secrets_never_leave_the_process(cli: Runner, wiki: FakeMediaWiki) -> None:
    secret = "sk-test-SECRET-0123456789"
    with FakeOpenAI(scripted(*GOOD_RUN)) as llm:
        result = cli.ask(llm, wiki, "-v", "--json", "--debug", "--api-key", secret)
    assert result.code == 0
    assert llm.requests[0].headers["authorization"] == f"Bearer {secret}"
    trace_text = json.dumps(cli.trace())
    for text in (result.stdout, result.stderr, trace_text):
        assert secret not in text
    assert "Bearer ***" in result.stderr  # the debug log shows the header, redacted


def test_trace_options(cli: Runner, wiki: FakeMediaWiki, tmp_path: Path) -> None:
    target = tmp_path / "sub" / "run.json"
    with FakeOpenAI(scripted(*GOOD_RUN, *GOOD_RUN)) as llm:
        assert cli.ask(llm, wiki, "--trace", str(target)).code == 0
        assert json.loads(target.read_text())["answer"] == "Arthur's Magazine"
        assert cli.ask(llm, wiki, "--no-trace").code == 0
    assert not (cli.home / "traces").exists()


def test_flag_beats_env_beats_config_file(cli: Runner, wiki: FakeMediaWiki) -> None:
    cli.config_text('model = "from-config"\nmax_steps = 5\n')
    with FakeOpenAI(scripted(*GOOD_RUN * 3)) as llm:
        env = {"OPENAI_BASE_URL": llm.url, "REACT_CLI_WIKI": wiki.url}
        cli(["ask", QUESTION], **env)
        cli(["ask", QUESTION], **env, REACT_CLI_MODEL="from-env")
        cli(["ask", QUESTION, "-m", "from-flag"], **env, REACT_CLI_MODEL="from-env")
    models = [r.json["model"] for r in llm.requests]
    assert models == ["from-config"] * 3 + ["from-env"] * 3 + ["from-flag"] * 3


def test_broken_config_file_is_a_usage_error(cli: Runner) -> None:
    cli.config_text("model = \n")
    result = cli(["ask", "q"])
    assert result.code == 2
    assert result.stderr.startswith("Error: config file ")


def test_prompts_commands(cli: Runner) -> None:
    listed = cli(["prompts"])
    assert listed.code == 0 and listed.stderr == ""
    assert [line.split("\t")[:4] for line in listed.stdout.splitlines()] == [
        ["fever", "react", "fever", "text"],
        ["fever-act", "act", "fever", "text"],
        ["fever-act-tools", "act", "fever", "tools"],
        ["fever-cot", "cot", "fever", "text"],
        ["fever-standard", "standard", "fever", "text"],
        ["fever-tools", "react", "fever", "tools"],
        ["general", "react", "hotpotqa", "text"],
        ["general-act", "act", "hotpotqa", "text"],
        ["general-act-tools", "act", "hotpotqa", "tools"],
        ["general-tools", "react", "hotpotqa", "tools"],
        ["hotpotqa", "react", "hotpotqa", "text"],
        ["hotpotqa-act", "act", "hotpotqa", "text"],
        ["hotpotqa-act-tools", "act", "hotpotqa", "tools"],
        ["hotpotqa-cot", "cot", "hotpotqa", "text"],
        ["hotpotqa-standard", "standard", "hotpotqa", "text"],
        ["hotpotqa-tools", "react", "hotpotqa", "tools"],
        ["hotpotqa-zh", "react", "hotpotqa", "text"],
    ]
    shown = cli(["prompts", "show", "hotpotqa"])
    assert shown.code == 0
    file = (ROOT / "prompts" / "hotpotqa.txt").read_text(encoding="utf-8")
    assert file.startswith("---\nmethod: react\ntask: hotpotqa\n---\n")
    assert shown.stdout == file.split("---\n", 2)[2]  # as it is sent: front matter left out
