"""The first ten minutes: help, configuration, the errors a newcomer meets, and every hint the
tool prints being a command that works as printed. In-process, against loopback fakes."""

from __future__ import annotations

import json
import re
import shlex
import signal
import threading
from pathlib import Path

import pytest
import requests
from conftest import CliResult
from eval_fakes import PerQuestion, finish, question_of
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, Reply, scripted
from inproc import HANG_S, Runner, one_error_line, retry_notices

from react_cli import __version__
from react_cli.cli.notices import contact_hint
from react_cli.infra.http import user_agent
from react_cli.settings.resolve import ENV_VARS, HOME_ENV, resolve

QUESTION = "Which magazine was started first, Arthur's Magazine or First for Women?"
GOOD_RUN = (
    " I need to search Arthur's Magazine.\nAction 1: Search[Arthur's Magazine]",
    " Arthur's Magazine was started in 1844. I need First for Women.\n"
    "Action 2: Search[First for Women]",
    " First for Women was started in 1989.\nAction 3: Finish[Arthur's Magazine]",
)
HOTPOT = Path(__file__).resolve().parents[1] / "fixtures" / "eval" / "hotpotqa_dev_first6.json"
Q = [row["question"] for row in json.loads(HOTPOT.read_text(encoding="utf-8"))]
NO_KEY = "Error: no API key: set OPENAI_API_KEY, or --base-url for a local server"
COMMANDS = [
    ["ask"],
    ["eval"],
    ["replay"],
    ["traces"],
    ["models"],
    ["config"],
    ["config", "path"],
    ["prompts"],
    ["prompts", "show"],
    ["wiki"],
    ["wiki", "search"],
    ["wiki", "lookup"],
    ["wiki", "build-zim"],
]


def served(cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki, args: list[str]) -> CliResult:
    return cli(args, OPENAI_BASE_URL=llm.url, REACT_CLI_MODEL="test-model", REACT_CLI_WIKI=wiki.url)


# --- help ------------------------------------------------------------------------------------


@pytest.mark.parametrize("group", [[], ["wiki"]])
def test_a_bare_group_prints_its_formatted_help(cli: Runner, group: list[str]) -> None:
    result = cli(group)
    assert result.code == 0 and result.stderr == ""
    assert result.stdout.startswith(f"Usage: react-cli {' '.join(group)}".rstrip() + " [OPTIONS]")
    commands, general = result.stdout.index("\nCommands:\n"), result.stdout.index("\nGeneral:\n")
    assert commands < general  # its commands first, then its options


def test_root_help_lists_commands_in_whole_sentences_and_every_variable(cli: Runner) -> None:
    result = cli(["-h"])
    assert result.code == 0
    commands = result.stdout.split("\nCommands:\n")[1].split("\n\n")[0].splitlines()
    assert {line.split()[0] for line in commands} >= {
        "ask", "eval", "replay", "traces", "models", "config", "prompts", "wiki"
    }  # fmt: skip
    assert all(line.rstrip().endswith(".") and "..." not in line for line in commands), commands
    variables = [HOME_ENV, "REACT_CLI_DEBUG", *(v for names in ENV_VARS.values() for v in names)]
    assert all(variable in result.stdout for variable in variables)
    assert "--install-completion" in result.stdout and "--show-completion" in result.stdout


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_dash_h_works_everywhere_with_one_metavar_style(cli: Runner, command: list[str]) -> None:
    short, long = cli([*command, "-h"]), cli([*command, "--help"])
    assert short.code == 0 and short.stdout == long.stdout and short.stdout.startswith("Usage: ")
    assert not re.search(r"<(?:str|int|float|path|text|integer)>", short.stdout), short.stdout
    assert not re.search(r"\b(?:TEXT|INTEGER|FLOAT)\b", short.stdout)


def test_choices_and_metavars_in_help(cli: Runner) -> None:
    ask, evaluate = cli(["ask", "-h"]).stdout, cli(["eval", "-h"]).stdout
    for shown in ("--api [chat|completions]", "--max-steps N", "--timeout SECONDS", "--wiki URL"):
        assert shown in ask
    assert "--trace PATH" in ask and "--from-trace TRACE" in ask and "[QUESTION]" in ask
    assert "--format [hotpotqa|fever|jsonl]" in evaluate and "--resume DIR" in evaluate
    assert "[DATASET]" in evaluate
    lookup = cli(["wiki", "lookup", "-h"]).stdout
    assert "{ENTITY} {KEYWORD}" in lookup and "-n N" in lookup


def test_ask_eval_and_config_take_the_same_run_options(cli: Runner) -> None:
    """One declaration (``cli.run_options.RunOptions``): each command's help lists all of it."""
    from dataclasses import fields

    from react_cli.cli.run_options import RunOptions

    flags = {f"--{option.name.replace('_', '-')}" for option in fields(RunOptions)}
    assert len(flags) == 32  # --method, the 3 sampling options, --otel, --protocol, --constrain,
    # --tools-from, --mcp, --no-wiki, --tool-timeout, --max-cost, --max-no-progress, --cache,
    # --allow-tool, --deny-tool, --service-tier
    for command in (["ask"], ["eval", "run"], ["config"]):
        shown = set(re.findall(r"(--[a-z-]+)", cli([*command, "-h"]).stdout))
        assert flags <= shown, (command, flags - shown)


def test_shell_completion_script(cli: Runner) -> None:
    result = cli(["--show-completion", "bash"], _TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION="1")
    assert result.code == 0 and "_REACT_CLI_COMPLETE" in result.stdout


def test_prompt_descriptions_end_at_a_word(cli: Runner) -> None:
    result = cli(["prompts"])
    assert result.code == 0
    for line in result.stdout.splitlines():
        name, _, _, _, description = line.split("\t")
        first_line = cli(["prompts", "show", name]).stdout.strip().splitlines()[0]
        shown = description.removesuffix(" …")
        assert first_line.startswith(shown)
        assert shown == first_line or first_line[len(shown)] == " "


# --- configuration ----------------------------------------------------------------------------


def test_config_shows_each_setting_and_its_source(cli: Runner, home: Path) -> None:
    cli.config(max_steps=5)
    result = cli(
        ["config", "-m", "from-flag"],
        OPENAI_API_KEY="sk-SECRET-123",
        OPENAI_BASE_URL="http://alice:pw-SECRET@127.0.0.1:9/v1?key=QUERY-SECRET",
    )
    assert result.code == 0, result.stderr
    assert f"home         {home}\n" in result.stdout
    assert f"config file  {home / 'config.toml'}\n" in result.stdout
    rows = {line.split()[0]: line.split()[1:] for line in result.stdout.splitlines()[3:]}
    assert rows["model"] == ["from-flag", "flag"]
    assert rows["api_key"] == ["***", "env", "OPENAI_API_KEY"]
    assert rows["base_url"] == ["http://127.0.0.1:9/v1", "env", "OPENAI_BASE_URL"]
    assert rows["max_steps"] == ["5", "file"] and rows["max_tokens"] == ["256", "default"]
    assert "SECRET" not in result.stdout
    as_json = json.loads(cli(["config", "--json"], OPENAI_API_KEY="sk-SECRET").stdout)
    assert as_json["settings"]["api_key"] == {"value": "***", "from": "env OPENAI_API_KEY"}
    assert as_json["config_file"] == str(home / "config.toml")
    assert cli(["config", "path"]).stdout == f"{home / 'config.toml'}\n"


def test_an_unknown_config_key_suggests_the_closest(cli: Runner, home: Path) -> None:
    (home / "config.toml").write_text('modle = "x"\nmax_step = 3\n', encoding="utf-8")
    result = cli(["config"])
    assert result.code == 2
    line = one_error_line(result.stderr)
    assert "modle (did you mean model?)" in line and "max_step (did you mean max_steps?)" in line


def test_a_config_key_named_as_its_option_suggests_the_setting_the_option_sets(
    cli: Runner, home: Path
) -> None:
    """``timeout`` is --timeout's: the whole run's ``run_timeout_s``, not one request's
    ``timeout_s`` (the closest name)."""
    (home / "config.toml").write_text("timeout = 60\nno_wiki = true\n", encoding="utf-8")
    line = one_error_line(cli(["config"]).stderr)
    assert "no_wiki (did you mean wiki_tools = false? --no-wiki sets it)" in line
    assert "timeout (did you mean run_timeout_s? --timeout sets it)" in line


def test_a_home_that_is_a_file_says_so(cli: Runner, tmp_path: Path) -> None:
    home = tmp_path / "home-file"
    home.write_text("")
    for args in (["ask", "q", "--no-trace"], ["config"], ["data", "get", "hotpotqa-dev"]):
        result = cli(args, REACT_CLI_HOME=str(home))
        assert result.code == 2, args
        assert one_error_line(result.stderr) == (
            f"Error: the home directory {home} is a file, not a folder: set REACT_CLI_HOME to "
            "a folder (react-cli keeps its config, traces and data there), or move the file away"
        )


def test_a_bad_environment_value_names_the_variable(cli: Runner) -> None:
    result = cli(["ask", "q", "-m", "m"], REACT_CLI_API="foo")
    assert result.code == 2
    assert one_error_line(result.stderr) == (
        "Error: environment variable REACT_CLI_API must be one of chat, completions, not 'foo'"
    )


def test_the_config_file_prices_a_run(cli: Runner, wiki: FakeMediaWiki) -> None:
    cli.config(price_input=1.0, price_output=2.0)
    with FakeOpenAI(scripted(*GOOD_RUN)) as llm:
        result = served(cli, llm, wiki, ["ask", QUESTION, "-v", "--json"])
    usage = cli.trace()["usage"]
    expected = (usage["prompt_tokens"] + 2 * usage["completion_tokens"]) / 1e6
    cost = json.loads(result.stdout)["cost"]
    assert cost == {"amount": pytest.approx(expected, abs=1e-6), "estimated": False}
    assert f"cost {cost['amount']:.6f}".rstrip("0") in result.stderr.splitlines()[-1]


def test_a_prices_table_by_model_wins_and_estimates_are_marked(
    cli: Runner, wiki: FakeMediaWiki, home: Path
) -> None:
    (home / "config.toml").write_text(
        'price_input = 100.0\n[prices]\n"test-model" = { input = 1.0, output = 1.0 }\n',
        encoding="utf-8",
    )
    with FakeOpenAI([Reply(text, usage=False) for text in GOOD_RUN]) as llm:
        result = served(cli, llm, wiki, ["ask", QUESTION, "--json", "-v"])
    cost = json.loads(result.stdout)["cost"]
    assert cost["estimated"] is True
    assert cost["amount"] == pytest.approx(cli.trace()["usage"]["total_tokens"] / 1e6, abs=1e-6)
    assert "(estimated)" in result.stderr.splitlines()[-1].split("cost ~")[1]


def test_eval_reports_the_cost(cli: Runner, wiki: FakeMediaWiki, tmp_path: Path) -> None:
    cli.config(price_input=1000.0, price_output=1000.0)
    out = tmp_path / "out"
    with FakeOpenAI(PerQuestion({}, default=[finish("yes")])) as llm:
        result = served(cli, llm, wiki, ["eval", str(HOTPOT), "--limit", "2", "--out", str(out)])
    assert result.code == 0, result.stderr
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["total_cost"] == pytest.approx(sum(row["cost"] for row in rows), abs=1e-6)
    assert summary["total_cost"] == pytest.approx(
        sum(row["tokens"] for row in rows) / 1000, abs=1e-6
    )
    assert re.search(r"│ cost +│ \d+\.\d+ ", result.stderr)


# --- the errors a newcomer meets ---------------------------------------------------------------


@pytest.mark.parametrize("command", [["ask", "q", "-m", "gpt-4o-mini"], ["models"]])
def test_no_key_for_openai_fails_at_once(cli: Runner, command: list[str]) -> None:
    result = cli(command)
    assert (result.code, result.stdout) == (2, "")
    assert one_error_line(result.stderr) == NO_KEY
    assert cli.elapsed_s < HANG_S


def test_models_lists_the_endpoint_s_models(cli: Runner) -> None:
    with FakeOpenAI([Reply()], models=("gemma-3-270m", "qwen2.5")) as llm:
        result = cli(["models", "--base-url", llm.url, "--api-key", "sk-test"])
        as_json = cli(["models", "--json"], OPENAI_BASE_URL=llm.url)
    assert (result.code, result.stdout, result.stderr) == (0, "gemma-3-270m\nqwen2.5\n", "")
    assert [model["id"] for model in json.loads(as_json.stdout)] == ["gemma-3-270m", "qwen2.5"]
    assert llm.requests[0].path == "/v1/models"
    assert llm.requests[0].headers["authorization"] == "Bearer sk-test"


@pytest.mark.parametrize(
    ("reply", "code", "said"),
    [
        (Reply(status=401, body='{"error": {"message": "Invalid key"}}'), 2, "Invalid key"),
        (Reply(status=404), 2, "check the base URL"),
        (Reply(status=503), 1, "kept failing with HTTP 503 after 2 retries"),
    ],
    ids=["401", "404", "503"],
)
def test_models_fails_like_ask(cli: Runner, reply: Reply, code: int, said: str) -> None:
    with FakeOpenAI([reply]) as llm:
        result = cli(["models"], OPENAI_BASE_URL=llm.url)
    assert (result.code, result.stdout) == (code, "")
    assert said in one_error_line(result.stderr)
    assert len(retry_notices(result.stderr)) == (2 if reply.status == 503 else 0)


def test_eval_stops_at_the_first_rejected_key(
    cli: Runner, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    body = '{"error": {"message": "Incorrect API key provided"}}'
    with FakeOpenAI([Reply(status=401, body=body)]) as llm:
        result = served(
            cli,
            llm,
            wiki,
            ["eval", str(HOTPOT), "--out", str(tmp_path / "o"), "--concurrency", "1"],
        )
    assert result.code == 2
    assert len(llm.requests) == 1  # not 5 questions, not 6
    last = result.stderr.splitlines()[-1]
    assert last.startswith("Error: the endpoint requires an API key (HTTP 401)")
    assert "Incorrect API key provided" in last


def test_from_step_without_from_trace_says_so(cli: Runner) -> None:
    result = cli(["ask", "q", "--from-step", "2", "-m", "m"], OPENAI_API_KEY="sk")
    assert result.code == 2
    assert one_error_line(result.stderr) == (
        "Error: --from-step forks a saved run: give --from-trace TRACE too"
    )


def test_an_unknown_language_is_refused_at_once(cli: Runner) -> None:
    result = cli(["ask", "q", "-m", "m", "--lang", "xx"], OPENAI_API_KEY="sk")
    assert result.code == 2 and cli.elapsed_s < HANG_S
    assert "--lang xx is not a Wikipedia language" in one_error_line(result.stderr)
    assert resolve({"wiki": "https://simple.wikipedia.org"}, {}).wiki  # not every code is 2 letters


def test_a_wiki_api_url_is_taken_as_its_host(cli: Runner, wiki: FakeMediaWiki) -> None:
    with FakeOpenAI(scripted(*GOOD_RUN)) as llm:
        result = served(cli, llm, wiki, ["ask", QUESTION, "--wiki", f"{wiki.url}/w/api.php"])
    assert result.code == 0 and result.stdout == "Arthur's Magazine\n", result.stderr
    assert cli.trace()["config"]["wiki"] == wiki.url


def test_unquoted_words_are_one_question(cli: Runner, wiki: FakeMediaWiki) -> None:
    with FakeOpenAI(scripted(*GOOD_RUN)) as llm:
        result = served(cli, llm, wiki, ["ask", *QUESTION.split(), "-v"])
    assert result.code == 0, result.stderr
    assert cli.trace()["question"] == QUESTION
    assert f"Question: {QUESTION}\n" in result.stderr


def test_ask_json_names_the_question_model_and_endpoint(cli: Runner, wiki: FakeMediaWiki) -> None:
    with FakeOpenAI(scripted(GOOD_RUN[2])) as llm:
        url = llm.url.replace("http://", "http://user:PASSWORD@") + "?key=QUERYSECRET"
        result = cli(["ask", QUESTION, "--json"], OPENAI_BASE_URL=url, REACT_CLI_MODEL="m1")
    summary = json.loads(result.stdout)
    assert (summary["question"], summary["model"], summary["endpoint"]) == (QUESTION, "m1", llm.url)
    assert "PASSWORD" not in result.stdout and "QUERYSECRET" not in result.stdout


def test_one_step_is_singular(cli: Runner, wiki: FakeMediaWiki) -> None:
    with FakeOpenAI(scripted(GOOD_RUN[2])) as llm:
        result = served(cli, llm, wiki, ["ask", QUESTION, "-v"])
    assert re.search(r"^stop: finish · 1 step · [\d,]+ tokens · ", result.stderr, re.MULTILINE)


def test_the_user_agent_invents_no_url_and_a_hint_asks_for_contact_once(home: Path) -> None:
    agent = user_agent()
    assert agent == f"react-cli/{__version__} requests/{requests.__version__}"
    assert user_agent("me@example.org").startswith(f"react-cli/{__version__} (me@example.org) ")
    live = resolve({"wiki": "https://de.wikipedia.org"}, {}, home / "none.toml")
    first = contact_hint(live, home)
    assert first and 'contact = "you@example.org"' in first and str(home / "config.toml") in first
    assert contact_hint(live, home) is None  # once per home directory
    assert contact_hint(live, home / "other") is not None
    local = resolve({"wiki": "http://127.0.0.1:8080"}, {}, home / "none.toml")
    given = resolve({"wiki": "https://en.wikipedia.org", "contact": "me"}, {}, home / "none.toml")
    assert contact_hint(local, home / "third") is None and contact_hint(given, home / "4") is None


# --- replay -----------------------------------------------------------------------------------


def test_replay_shows_several_traces_in_turn(cli: Runner) -> None:
    traces = sorted(
        str(p) for p in (Path(__file__).resolve().parents[2] / "examples" / "traces").iterdir()
    )
    result = cli(["replay", *traces[:2]])
    assert result.code == 0, result.stderr
    headers = [line for line in result.stdout.splitlines() if line.startswith("== ")]
    assert headers == [f"== {path}" for path in traces[:2]]
    assert result.stdout.count("Question: ") == 2
    listed = json.loads(cli(["replay", *traces[:2], "--json"]).stdout)
    assert [doc["question"] for doc in listed] == [
        json.loads(Path(p).read_text())["question"] for p in traces[:2]
    ]


# --- eval: every printed hint works as printed ------------------------------------------------


def run_hint(cli: Runner, stderr: str) -> CliResult:
    """Run the command the last error line ends with, exactly as printed (no env settings)."""
    command = shlex.split(stderr.strip().splitlines()[-1].rsplit(": ", 1)[1])
    assert command[:3] == ["react-cli", "eval", "--resume"], command
    return cli(command[1:])


def test_a_failed_question_s_hint_retries_it(
    cli: Runner, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    """Run with options only (no environment), so the hint must carry the run's settings."""
    out = tmp_path / "run with space"
    failing = {"on": True}

    def model(body: dict[str, object]) -> Reply:
        if question_of(body) == Q[1] and failing["on"]:
            return Reply(status=400)
        return Reply(finish("yes"))

    with FakeOpenAI(model) as llm:
        args = ["eval", str(HOTPOT), "--limit", "3", "--out", str(out), "-m", "test-model"]
        first = cli([*args, "--base-url", llm.url, "--wiki", wiki.url, "--max-steps", "2"])
        assert first.code == 1
        assert (
            first.stderr.strip()
            .splitlines()[-1]
            .endswith(f"retry them with: react-cli eval --resume '{out}' --base-url {llm.url}")
        )
        failing["on"] = False
        before = len(llm.requests)
        again = run_hint(cli, first.stderr)
    assert again.code == 0, again.stderr
    assert [question_of(r.json or {}) for r in llm.requests[before:]] == [Q[1]]
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["n"], summary["failed"], summary["config"]["max_steps"]) == (3, 0, 2)


def test_ctrl_c_before_any_result_shows_no_scores_and_a_working_hint(
    cli: Runner, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    slow = {"delay": 30.0}

    def model(body: dict[str, object]) -> Reply:
        return Reply(finish("yes"), delay_s=slow["delay"])

    with FakeOpenAI(model) as llm:
        # What a terminal does on Ctrl-C: a real SIGINT, which ends the main thread's wait.
        main = threading.main_thread().ident or 0
        timer = threading.Timer(0.5, signal.pthread_kill, (main, signal.SIGINT))
        timer.start()
        args = ["eval", str(HOTPOT), "--limit", "2", "--out", str(out), "-m", "test-model"]
        first = cli([*args, "--base-url", llm.url, "--wiki", wiki.url])
        timer.cancel()
        assert first.code == 130, first.stderr
        table = first.stderr.split("react-cli eval")[1]
        assert re.search(r"│ EM +│ — ", table) and re.search(r"│ avg steps +│ — ", table)
        assert "0.0000" not in table
        assert first.stderr.strip().splitlines()[-1].startswith("Error: interrupted; 0 results")
        slow["delay"] = 0.0
        again = run_hint(cli, first.stderr)
    assert again.code == 0, again.stderr
    assert json.loads((out / "summary.json").read_text())["n"] == 2


def test_models_named_by_their_file_get_a_note_on_stderr(cli: Runner) -> None:
    """llama-cpp-python without --model_alias names its model by the GGUF's path."""
    gguf = "/home/me/models/gemma-3-270m-it-Q4_K_M.gguf"
    with FakeOpenAI([Reply()], models=(gguf,)) as llm:
        result = cli(["models", "--base-url", llm.url])
    assert (result.code, result.stdout) == (0, f"{gguf}\n")  # as -m takes it, for scripts
    assert result.stderr == (
        "note: the server names its model by the file it loaded (llama-cpp-python does without "
        "--model_alias): -m takes that name as printed, or restart the server with "
        "--model_alias gemma-3-270m-it-Q4_K_M and pass -m gemma-3-270m-it-Q4_K_M\n"
    )
    with FakeOpenAI([Reply()], models=("gemma-3-270m", "org/model-7b")) as llm:
        named = cli(["models", "--base-url", llm.url])
    assert named.stderr == ""  # a name with a slash (Hugging Face's org/model) is no file


def test_a_question_starting_with_a_dash_is_told_about_the_double_dash(cli: Runner) -> None:
    result = cli(["ask", "-5 degrees, is that cold?"])
    assert result.code == 2
    assert one_error_line(result.stderr) == (
        "Error: No such option: -5 (a question starting with '-' goes after '--': "
        "react-cli ask -- '-5…')"
    )
    typo = cli(["ask", "--modle", "x", "q"])  # a typo of an option gets click's suggestion only
    assert "Possible options" in typo.stderr and "'--'" not in typo.stderr
    assert "'--'" not in cli(["models", "-x"]).stderr  # models takes no argument


def test_an_unknown_prompt_name_suggests_the_closest(cli: Runner) -> None:
    result = cli(["ask", "q", "-m", "m", "--prompt", "hotpotqa-z"], OPENAI_API_KEY="sk-x")
    assert result.code == 2
    assert "no prompt named 'hotpotqa-z' (did you mean hotpotqa-zh?)" in one_error_line(
        result.stderr
    )
