"""`react-cli ask` end to end, as a user runs it, against local fake model and wiki servers."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT, cli_env, only_trace, run_cli
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, Reply, scripted

from react_cli.agent import STOP_SEQUENCES

QUESTION = "Which magazine was started first, Arthur's Magazine or First for Women?"
GOOD_RUN = (
    " I need to search Arthur's Magazine and First for Women.\nAction 1: Search[Arthur's Magazine]",
    " Arthur's Magazine was started in 1844. I need to search First for Women next.\n"
    "Action 2: Search[First for Women]",
    " First for Women was started in 1989. 1844 < 1989.\nAction 3: Finish[Arthur's Magazine]",
)


def env_for(home: Path, llm: FakeOpenAI, wiki: FakeMediaWiki, **extra: str) -> dict[str, str]:
    return cli_env(
        home,
        OPENAI_BASE_URL=llm.url,
        REACT_CLI_MODEL="test-model",
        REACT_CLI_WIKI=wiki.url,
        **extra,
    )


@pytest.mark.parametrize("api", ["chat", "completions"])
@pytest.mark.parametrize("stream", [True, False])
def test_answers_end_to_end(home: Path, wiki: FakeMediaWiki, api: str, stream: bool) -> None:
    with FakeOpenAI(scripted(*GOOD_RUN)) as llm:
        args = ["ask", QUESTION, "--api", api] + ([] if stream else ["--no-stream"])
        result = run_cli(args, env_for(home, llm, wiki))
    assert result.code == 0, result.stderr
    assert result.stdout == "Arthur's Magazine\n"
    assert result.stderr == ""
    path = "/v1/chat/completions" if api == "chat" else "/v1/completions"
    assert [r.path for r in llm.requests] == [path] * 3
    assert all(r.json["stream"] is stream for r in llm.requests)
    assert all(r.json["stop"] == STOP_SEQUENCES for r in llm.requests)
    trace = only_trace(home)
    assert trace["version"] == 1
    assert trace["answer"] == "Arthur's Magazine" and trace["stop_reason"] == "finish"
    assert [s["action"] for s in trace["steps"]] == [
        "Search[Arthur's Magazine]",
        "Search[First for Women]",
        "Finish[Arthur's Magazine]",
    ]
    assert "American literary periodical" in trace["steps"][0]["observation"]
    assert "started in 1989" in trace["steps"][1]["observation"]
    assert trace["config"]["api"] == api and trace["config"]["model"] == "test-model"
    assert trace["prompt_template"].startswith("Solve a question answering task")
    assert trace["usage"]["total_tokens"] > 0
    for step in trace["steps"]:
        assert step["latency_s"] >= 0 and set(step["usage"]) >= {"prompt_tokens"}


def test_chat_sends_the_whole_prompt_as_one_user_message(home: Path, wiki: FakeMediaWiki) -> None:
    with FakeOpenAI(scripted(*GOOD_RUN)) as llm:
        run_cli(["ask", QUESTION], env_for(home, llm, wiki))
    messages = llm.requests[0].json["messages"]
    assert len(messages) == 1 and messages[0]["role"] == "user"
    assert messages[0]["content"].endswith(f"Question: {QUESTION}\nThought 1:")


def test_prompt_grows_append_only(home: Path, wiki: FakeMediaWiki) -> None:
    with FakeOpenAI(scripted(*GOOD_RUN)) as llm:
        run_cli(["ask", QUESTION, "--api", "completions"], env_for(home, llm, wiki))
    prompts = [r.json["prompt"] for r in llm.requests]
    for k in range(2):
        assert prompts[k + 1].startswith(prompts[k] + GOOD_RUN[k] + f"\nObservation {k + 1}: ")


def test_server_ignoring_stop_cannot_inject_observations(home: Path, wiki: FakeMediaWiki) -> None:
    invented = GOOD_RUN[0] + "\nObservation 1: Arthur's Magazine was founded in 2020.\nThought 2:"
    replies = [Reply(invented, ignore_stop=True), *scripted(*GOOD_RUN[1:])]
    with FakeOpenAI(replies) as llm:
        result = run_cli(["ask", QUESTION, "-v"], env_for(home, llm, wiki))
    assert result.code == 0
    trace = only_trace(home)
    assert "2020" not in trace["steps"][0]["raw"]
    assert "2020" not in llm.requests[1].json["messages"][0]["content"]
    assert "2020" not in result.stderr


def test_endpoint_rejecting_stop_is_retried_without_it(home: Path, wiki: FakeMediaWiki) -> None:
    rejection = json.dumps(
        {"error": {"message": "Unsupported parameter: 'stop' is not supported with this model."}}
    )
    replies = [Reply(status=400, body=rejection), *scripted(*GOOD_RUN)]
    with FakeOpenAI(replies) as llm:
        result = run_cli(["ask", QUESTION], env_for(home, llm, wiki))
    assert result.code == 0, result.stderr
    assert "stop" in llm.requests[0].json
    assert all("stop" not in r.json for r in llm.requests[1:])


def test_rate_limit_then_success(home: Path, wiki: FakeMediaWiki) -> None:
    replies = [Reply(status=429, headers={"Retry-After": "0"}), *scripted(*GOOD_RUN)]
    with FakeOpenAI(replies) as llm:
        result = run_cli(["ask", QUESTION], env_for(home, llm, wiki))
    assert result.code == 0, result.stderr
    assert only_trace(home)["steps"][0]["retries"] >= 1


def test_json_output(home: Path, wiki: FakeMediaWiki) -> None:
    with FakeOpenAI(scripted(*GOOD_RUN)) as llm:
        result = run_cli(["ask", QUESTION, "--json"], env_for(home, llm, wiki))
    data = json.loads(result.stdout)
    assert data["answer"] == "Arthur's Magazine"
    assert data["stop_reason"] == "finish"
    assert len(data["steps"]) == 3
    assert data["usage"]["total_tokens"] > 0
    assert Path(data["trace"]).exists()


def test_verbose_trajectory_goes_to_stderr(home: Path, wiki: FakeMediaWiki) -> None:
    with FakeOpenAI(scripted(*GOOD_RUN)) as llm:
        result = run_cli(["ask", QUESTION, "-v"], env_for(home, llm, wiki))
    assert result.stdout == "Arthur's Magazine\n"
    for k in (1, 2, 3):
        assert f"Thought {k}:" in result.stderr
    assert "Observation 1: Arthur's Magazine (1844-" in result.stderr
    assert "Answer: Arthur's Magazine" in result.stderr
    assert "stop: finish · 3 steps" in result.stderr
    assert "\x80" not in result.stderr  # C1 control characters from the page are removed


def test_untrusted_text_is_printed_literally(home: Path) -> None:
    page = (
        "Evil Corp is a [bold red]company[/] \x1b[31mred\x1b[0m \x1b]0;title\x07 in Ohio. It sells."
    )
    wiki = FakeMediaWiki({"Evil Corp": page})
    script = scripted(
        " [blink]x[/blink]\nAction 1: Search[Evil Corp]", " ok\nAction 2: Finish[[b]x[/b]]"
    )
    with wiki, FakeOpenAI(script) as llm:
        result = run_cli(["ask", "What is Evil Corp?", "-v"], env_for(home, llm, wiki))
    assert result.code == 0
    assert "[bold red]company[/]" in result.stderr
    assert "[blink]x[/blink]" in result.stderr
    assert "\x1b" not in result.stderr + result.stdout and "\x07" not in result.stderr
    assert result.stdout == "[b]x[/b]\n"


def test_question_from_stdin(home: Path, wiki: FakeMediaWiki) -> None:
    for args in (["ask"], ["ask", "-"]):
        with FakeOpenAI(scripted(*GOOD_RUN)) as llm:
            result = run_cli(args, env_for(home, llm, wiki), stdin=QUESTION + "\n")
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
def test_usage_errors_exit_2_with_one_line(home: Path, args: list[str], message: str) -> None:
    result = run_cli(args, cli_env(home, REACT_CLI_MODEL="m", OPENAI_API_KEY="sk-test"))
    assert result.code == 2, result.stderr
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    assert message in lines[0]


def test_no_model_configured_is_a_usage_error(home: Path) -> None:
    result = run_cli(["ask", "q"], cli_env(home))
    assert result.code == 2
    assert result.stderr.startswith("Error: no model configured")


def test_endpoint_down_exits_1_and_keeps_the_trace(home: Path, wiki: FakeMediaWiki) -> None:
    with FakeOpenAI(scripted("unused")) as closed:
        url = closed.url  # the port is closed once the server stops
    env = cli_env(home, OPENAI_BASE_URL=url, REACT_CLI_MODEL="m", REACT_CLI_WIKI=wiki.url)
    (home / "config.toml").write_text("retry_backoff_s = 0.01\n")  # refused at once: no waiting
    result = run_cli(["ask", "q"], env)
    assert result.code == 1
    assert result.stdout == ""
    notices = [rf"retrying in 0\.\d s: connection refused \({k}/4\)\n" for k in range(1, 5)]
    error = re.escape(f"Error: no answer: cannot reach {url}/chat/completions: connection refused")
    assert re.fullmatch("".join(notices) + error + "\n", result.stderr), result.stderr
    assert only_trace(home)["stop_reason"] == "llm_error"


def test_step_limit_exits_1(home: Path, wiki: FakeMediaWiki) -> None:
    loop = [f" t\nAction {i}: Search[Page {i}]" for i in range(1, 4)]
    with FakeOpenAI(scripted(*loop)) as llm:
        result = run_cli(["ask", "q", "--max-steps", "3"], env_for(home, llm, wiki))
    assert result.code == 1
    assert result.stderr == "Error: no answer: the step limit (3) was reached\n"
    assert only_trace(home)["stop_reason"] == "max_steps"


def test_secrets_never_leave_the_process(home: Path, wiki: FakeMediaWiki) -> None:
    secret = "sk-test-SECRET-0123456789"
    with FakeOpenAI(scripted(*GOOD_RUN)) as llm:
        result = run_cli(
            ["ask", QUESTION, "-v", "--json", "--debug", "--api-key", secret],
            env_for(home, llm, wiki),
        )
    assert result.code == 0
    assert llm.requests[0].headers["authorization"] == f"Bearer {secret}"
    trace_text = next((home / "traces").glob("*.json")).read_text()
    for text in (result.stdout, result.stderr, trace_text):
        assert secret not in text
    assert "Bearer ***" in result.stderr  # the debug log shows the header, redacted


def test_trace_options(home: Path, wiki: FakeMediaWiki, tmp_path: Path) -> None:
    target = tmp_path / "sub" / "run.json"
    with FakeOpenAI(scripted(*GOOD_RUN, *GOOD_RUN)) as llm:
        run_cli(["ask", QUESTION, "--trace", str(target)], env_for(home, llm, wiki))
        assert json.loads(target.read_text())["answer"] == "Arthur's Magazine"
        run_cli(["ask", QUESTION, "--no-trace"], env_for(home, llm, wiki))
    assert not (home / "traces").exists()


def test_flag_beats_env_beats_config_file(home: Path, wiki: FakeMediaWiki) -> None:
    (home / "config.toml").write_text('model = "from-config"\nmax_steps = 5\n')
    with FakeOpenAI(scripted(*GOOD_RUN * 3)) as llm:
        env = env_for(home, llm, wiki)
        del env["REACT_CLI_MODEL"]
        run_cli(["ask", QUESTION], env)
        run_cli(["ask", QUESTION], {**env, "REACT_CLI_MODEL": "from-env"})
        run_cli(["ask", QUESTION, "-m", "from-flag"], {**env, "REACT_CLI_MODEL": "from-env"})
    models = [r.json["model"] for r in llm.requests]
    assert models == ["from-config"] * 3 + ["from-env"] * 3 + ["from-flag"] * 3


def test_broken_config_file_is_a_usage_error(home: Path) -> None:
    (home / "config.toml").write_text("model = \n")
    result = run_cli(["ask", "q"], cli_env(home))
    assert result.code == 2
    assert result.stderr.startswith("Error: config file ")


def test_ctrl_c_writes_the_trace_and_exits_130(home: Path, wiki: FakeMediaWiki) -> None:
    replies = [*scripted(GOOD_RUN[0]), Reply(GOOD_RUN[1], delay_s=30)]
    with FakeOpenAI(replies) as llm:
        proc = subprocess.Popen(
            [sys.executable, "-m", "react_cli", "ask", QUESTION],
            env=env_for(home, llm, wiki),
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 20
        while len(llm.requests) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=20)
    assert proc.returncode == 130, stderr
    assert stdout == ""
    assert stderr.startswith("Error: interrupted")
    assert "Traceback" not in stderr
    trace = only_trace(home)
    assert trace["stop_reason"] == "interrupted"
    assert trace["steps"][0]["action"] == "Search[Arthur's Magazine]"


def test_prompts_commands() -> None:
    listed = subprocess.run(
        [sys.executable, "-m", "react_cli", "prompts"], capture_output=True, text=True, check=True
    ).stdout
    assert [line.split("\t")[0] for line in listed.splitlines()] == [
        "fever",
        "hotpotqa",
        "hotpotqa-zh",
    ]
    shown = subprocess.run(
        [sys.executable, "-m", "react_cli", "prompts", "show", "hotpotqa"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert shown == (ROOT / "prompts" / "hotpotqa.txt").read_text(encoding="utf-8")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_full_disk_on_stdout_is_one_error_line() -> None:
    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            [sys.executable, "-m", "react_cli", "prompts", "show", "hotpotqa"],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
    assert proc.returncode == 1
    assert proc.stderr == "Error: cannot write the output: No space left on device\n"
