"""``react-cli chat`` with piped stdin and ``ask -c``, in-process against the fake model and the
recorded fake Wikipedia: one answer line per question, the earlier turns on the wire (text
block and chat messages), the page carried over for a follow-up's Lookup, the budget, every
method, the trace's ``conversation``, ``traces``/``replay --conversation``, re-runs and forks
of a turn offline. (The terminal, through a real pseudo-terminal: ``test_chat_pty.py``.)"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from chat_fakes import BORN, DIED, FOLLOW_UP
from conftest import cli_env, run_cli
from eval_fakes import PerQuestion, Q, finish, prompt_of, question_of, search
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, Reply
from inproc import CliResult, Runner, one_error_line, servers_env, sourceless
from method_fakes import SCRIPTS, MethodsEndpoint

WHERE = "Where did he work?"
UNSURE = "What is this?"
SCRIPT: dict[str, list[str | Reply]] = {
    **FOLLOW_UP,
    WHERE: [search("Chess"), finish("Bern", 2)],
    UNSURE: [" hmm"],  # never an action: no answer
}
EARLIER_BORN = (
    "Action 3: Finish[yes]\nEarlier in this conversation:\n"
    f"Question: {BORN}\nAnswer: 14 March 1879\nQuestion: {DIED}\nThought 1:"
)


@pytest.fixture(scope="module")
def llm() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(PerQuestion(SCRIPT)) as server:
        yield server


def chat(
    cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki, lines: list[str], *args: str, **env: str
) -> CliResult:
    """``react-cli chat ARGS`` with ``lines`` piped in, one a line."""
    llm.requests.clear()
    stdin = "".join(f"{line}\n" for line in lines)
    return cli(["chat", *args], stdin, **servers_env(llm, wiki), **env)


def first_prompt(llm: FakeOpenAI, question: str) -> str:
    """The prompt of the first request the model got for ``question``."""
    return next(
        prompt_of(r.json or {}) for r in llm.requests if question_of(r.json or {}) == question
    )


def traces(home: Path) -> list[dict[str, Any]]:
    """The traces written, oldest first."""
    paths = sorted((home / "traces").glob("*.json"))
    return [json.loads(path.read_text(encoding="utf-8")) for path in paths]


def test_piped_questions_get_an_answer_line_each_and_a_follow_up_its_earlier_turns(
    cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "prompt_toolkit", None)  # any import of it: ImportError
    result = chat(cli, llm, wiki, [BORN, "", DIED])
    assert "hint:" not in result.stderr  # no prompt is made for a pipe (nor prompt_toolkit)
    assert (result.code, result.stdout) == (0, "14 March 1879\n18 April 1955\n"), result.stderr
    assert "Earlier in this conversation" not in first_prompt(llm, BORN)
    assert first_prompt(llm, DIED).endswith(EARLIER_BORN)  # the second question, on the wire
    # the follow-up's Lookup read the page the first question's Search loaded (fetched again)
    first, second = traces(cli.home)
    assert second["steps"][0]["actions"][0]["action"] == "Lookup[1955]"
    looked = second["steps"][0]["actions"][0]["observation"]
    assert looked.startswith("(Result 1 / 1) Albert Einstein (")
    assert second["sources"][0]["title"] == "Albert Einstein"
    conversation = second["conversation"]
    assert conversation["id"] == first["conversation"]["id"]
    assert (first["conversation"]["turn"], conversation["turn"]) == (1, 2)
    assert conversation["carried"] == {"page": "Albert Einstein"}
    (earlier,) = conversation["earlier"]
    assert (earlier["question"], earlier["answer"]) == (BORN, "14 March 1879")
    search_step = earlier["steps"][0]  # a turn's steps are its calls
    assert search_step["call"]["name"] == "Search" and search_step["observation"].endswith(" …")
    assert len(search_step["observation"]) <= 120  # cut to a line here, whole in its own trace
    assert len(first["steps"][0]["actions"][0]["observation"]) > 800


def test_a_follow_up_that_searches_first_never_fetches_the_carried_page(
    cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki
) -> None:
    chat(cli, llm, wiki, [BORN, WHERE])
    titles = [r["params"]["titles"] for r in wiki.requests if "titles" in r["params"]]
    assert "Albert Einstein" in titles[0] and all("Albert Einstein" not in t for t in titles[1:])


def test_a_question_without_an_answer_is_an_empty_line_and_one_error(
    cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki
) -> None:
    result = chat(cli, llm, wiki, [UNSURE, BORN], "--max-steps", "2")
    assert (result.code, result.stdout) == (1, "\n14 March 1879\n")
    assert one_error_line(sourceless(result.stderr)).startswith("Error: no answer: ")
    assert "Earlier in this conversation" not in first_prompt(llm, BORN)  # no answer to give


def test_json_lines_new_and_trace_commands(
    cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki
) -> None:
    result = chat(cli, llm, wiki, [BORN, "/trace", "/new", DIED, "quit", WHERE], "--json")
    out = [json.loads(line) for line in result.stdout.splitlines()]  # every line JSON
    assert result.code == 0 and len(out) == 4, result.stderr  # quit ends: WHERE never asked
    assert out[0]["answer"] == "14 March 1879"
    assert out[0]["conversation"]["turn"] == 1
    assert out[1] == out[0]["trace"]  # /trace: the last trace's path
    assert out[2] is None  # /new: its line, null
    assert "Earlier in this conversation" not in first_prompt(llm, DIED)  # /new: a new one
    assert out[3]["steps"][0]["actions"][0]["observation"].startswith("No page is loaded yet")
    ids = {trace["conversation"]["id"] for trace in traces(cli.home)}
    assert len(ids) == 2 and not any(question_of(r.json or {}) == WHERE for r in llm.requests)


@pytest.mark.parametrize("as_json", [False, True])
def test_every_piped_line_gets_one_stdout_line_a_command_too(
    cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki, as_json: bool
) -> None:
    """A reader pairing lines with answers stays in step: /trace before any trace, a line that
    starts with / and is no command, /new, a line too long: one line each (empty, or null
    with --json), their errors on stderr; exit 1 for the lines that failed."""
    lines = ["/trace", BORN, "/nope please", "/trace", "/new", "x" * (1 << 20) + "y", WHERE]
    result = chat(cli, llm, wiki, lines, *(["--json"] if as_json else []))
    out = result.stdout.split("\n")
    assert out.pop() == "" and len(out) == len(lines), result.stdout[:300]
    path = str(sorted((cli.home / "traces").glob("*.json"))[0])
    if as_json:
        read = [json.loads(line) for line in out]
        assert [read[i] for i in (0, 2, 3, 4, 5)] == [None, None, path, None, None]
        assert (read[1]["answer"], read[6]["answer"]) == ("14 March 1879", "Bern")
    else:
        assert out == ["", "14 March 1879", "", path, "", "", "Bern"]
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert errors[0] == "Error: no trace yet: ask a question first"
    assert errors[1].startswith("Error: no command '/nope': /new starts")
    assert errors[2:] == ["Error: the question is larger than 1 MiB"] and result.code == 1


def test_the_newest_turns_are_kept_within_max_history_tokens(
    cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki
) -> None:
    # the heading is 8 tokens; each turn's two lines 14 to 17: 30 holds one turn, not two
    chat(cli, llm, wiki, [BORN, WHERE, DIED], "--max-history-tokens", "30")
    prompt = first_prompt(llm, DIED)
    assert prompt.endswith(
        f"Earlier in this conversation:\nQuestion: {WHERE}\nAnswer: Bern\n"
        f"Question: {DIED}\nThought 1:"
    )
    chat(cli, llm, wiki, [BORN, DIED], REACT_CLI_MAX_HISTORY_TOKENS="0")
    assert "Earlier in this conversation" not in first_prompt(llm, DIED)
    refused = cli(["chat", "--max-history-tokens", "-1"], **servers_env(llm, wiki))
    assert refused.code == 2 and one_error_line(refused.stderr) == (
        "Error: --max-history-tokens must be ≥ 0"
    )
    shown = cli(["config", "--json"], REACT_CLI_MAX_HISTORY_TOKENS="50")
    setting = json.loads(shown.stdout)["settings"]["max_history_tokens"]
    assert setting == {"value": 50, "from": "env REACT_CLI_MAX_HISTORY_TOKENS"}


@pytest.mark.parametrize(
    "method", ["standard", "cot", "cot-sc", "act", "react", "react+cot-sc", "cot-sc+react"]
)
def test_every_method_gives_each_of_its_calls_the_earlier_turns(
    cli: Runner, wiki: FakeMediaWiki, method: str
) -> None:
    """Question 1 backs off in both hybrids (ReAct answers at step 2, CoT-SC's vote is weak)."""
    with FakeOpenAI(MethodsEndpoint(SCRIPTS)) as llm:
        result = chat(cli, llm, wiki, [Q[0], Q[1]], "--method", method, "--samples", "3")
    assert result.code == 0 and result.stdout.splitlines()[0] == "yes", result.stderr
    block = f"Earlier in this conversation:\nQuestion: {Q[0]}\nAnswer: yes\nQuestion: {Q[1]}\n"
    second = [prompt_of(r.json or {}) for r in llm.requests if question_of(r.json or {}) == Q[1]]
    assert second and all(block in prompt for prompt in second)


def test_the_tools_protocol_is_given_the_earlier_messages(cli: Runner, wiki: FakeMediaWiki) -> None:
    def call(name: str, **arguments: str) -> dict[str, str]:
        return {"name": name, "arguments": json.dumps(arguments)}

    replies = [
        Reply(text="I search.", tool_calls=[call("search", entity="Albert Einstein")]),
        Reply(text="Found.", tool_calls=[call("finish", answer="14 March 1879")]),
        Reply(text="Loaded.", tool_calls=[call("lookup", keyword="1955")]),
        Reply(text="", tool_calls=[call("finish", answer="18 April 1955")]),
    ]
    with FakeOpenAI(replies) as llm:
        result = chat(cli, llm, wiki, [BORN, DIED], "--protocol", "tools")
    assert (result.code, result.stdout) == (0, "14 March 1879\n18 April 1955\n"), result.stderr
    messages = (llm.requests[2].json or {})["messages"]
    observation = messages[3]["content"]
    assert observation.startswith("Albert Einstein ( ; ; 14 March 1879") and len(observation) <= 120
    assert messages[1:] == [
        {"role": "user", "content": f"Question: {BORN}"},
        {
            "role": "assistant",
            "content": "I search.",
            "tool_calls": [tool_call("earlier_1_1", "search", '{"entity": "Albert Einstein"}')],
        },
        {"role": "tool", "tool_call_id": "earlier_1_1", "content": observation},
        {
            "role": "assistant",
            "content": "Found.",
            "tool_calls": [tool_call("earlier_1_2", "finish", '{"answer": "14 March 1879"}')],
        },
        {"role": "tool", "tool_call_id": "earlier_1_2", "content": "14 March 1879"},
        {"role": "user", "content": f"Question: {DIED}"},
    ]
    lookup = (llm.requests[3].json or {})["messages"][-1]["content"]
    assert lookup.startswith("(Result 1 / 1) Albert Einstein (")  # the carried page
    rerun = cli(["replay", "--rerun", "-n", "1"])  # offline, its earlier messages recorded
    assert (rerun.code, rerun.stdout) == (0, "18 April 1955\n"), rerun.stderr


def tool_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def test_ask_continue_after_ask_and_a_given_conversation(
    cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki
) -> None:
    assert cli.ask(llm, wiki, question=BORN).stdout == "14 March 1879\n"
    llm.requests.clear()
    result = cli.ask(llm, wiki, "-c", question=DIED)
    assert (result.code, result.stdout) == (0, "18 April 1955\n"), result.stderr
    assert first_prompt(llm, DIED).endswith(EARLIER_BORN)
    first, second = traces(cli.home)
    conversation = first["conversation"]["id"]
    assert second["conversation"]["id"] == conversation and second["conversation"]["turn"] == 2
    cli.ask(llm, wiki, question=WHERE)  # a new conversation, now the latest
    llm.requests.clear()
    again = cli.ask(llm, wiki, "--conversation", conversation, "--no-trace", question=DIED)
    assert again.stdout == "18 April 1955\n"
    prompt = first_prompt(llm, DIED)
    assert f"Question: {DIED}\nAnswer: 18 April 1955\nQuestion: {DIED}\nThought 1:" in prompt
    kept = json.loads((cli.home / "conversations" / f"{conversation}.json").read_text("utf-8"))
    assert len(kept["turns"]) == 2  # --no-trace keeps no turn either


def test_two_follow_ups_at_once_keep_both_turns_in_the_order_they_end(
    cli: Runner, wiki: FakeMediaWiki
) -> None:
    """While ``ask -c`` runs its follow-up, another ``ask -c`` (a process of its own, as from
    another terminal) goes on the same conversation and ends first: it is turn 2, and the
    one still running is kept as turn 3, its trace saying so; neither is lost."""
    cli.config(timeout_s=30.0)  # the first follow-up's request waits for the whole other run
    script, others = PerQuestion(SCRIPT), []

    def answer(body: dict[str, Any]) -> Reply:
        if question_of(body) == DIED and not others:
            env = cli_env(cli.home, **servers_env(llm, wiki))
            others.append(run_cli(["ask", "-c", WHERE], env))
        return script(body)

    with FakeOpenAI(answer) as llm:
        assert cli.ask(llm, wiki, question=BORN).code == 0
        result = cli.ask(llm, wiki, "-c", question=DIED)
    (other,) = others
    assert (other.code, other.stdout) == (0, "Bern\n"), other.stderr
    assert (result.code, result.stdout) == (0, "18 April 1955\n"), result.stderr
    assert "this one is its turn 3" in result.stderr
    by_question = {trace["question"]: trace["conversation"] for trace in traces(cli.home)}
    assert [by_question[q]["turn"] for q in (BORN, WHERE, DIED)] == [1, 2, 3]
    (conversation,) = {record["id"] for record in by_question.values()}
    kept = json.loads((cli.home / "conversations" / f"{conversation}.json").read_text("utf-8"))
    assert [turn["question"] for turn in kept["turns"]] == [BORN, WHERE, DIED]
    assert [turn["question"] for turn in by_question[DIED]["earlier"]] == [BORN]  # as given


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--conversation", "0123456789ab"], "Error: no conversation 0123456789ab in "),
        (["--conversation", "../config"], "Error: --conversation takes a conversation's id"),
        (["-c", "--conversation", "ab"], "Error: -c/--continue and --conversation contradict"),
    ],
)
def test_a_conversation_that_cannot_be_continued_is_a_usage_error(
    cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki, args: list[str], said: str
) -> None:
    result = cli.ask(llm, wiki, *args, question=DIED)
    assert result.code == 2 and one_error_line(result.stderr).startswith(said)
    assert not (cli.home / "traces").exists()


def test_continue_with_no_conversation_yet_starts_one(
    cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki
) -> None:
    result = cli.ask(llm, wiki, "-c", question=BORN)
    assert result.code == 0 and result.stdout == "14 March 1879\n"
    assert "warning: no conversation to continue yet: this starts one" in result.stderr


def test_traces_and_replay_show_the_conversation_and_a_turn_reruns_offline(
    cli: Runner, wiki: FakeMediaWiki
) -> None:
    with FakeOpenAI(PerQuestion(SCRIPT)) as llm:
        assert chat(cli, llm, wiki, [BORN, DIED]).code == 0
        wire = first_prompt(llm, DIED)
    rows = json.loads(cli(["traces", "--json"]).stdout)
    conversation = rows[0]["conversation"]["id"]
    assert [row["conversation"] for row in rows] == [
        {"id": conversation, "turn": 2},
        {"id": conversation, "turn": 1},
    ]
    listing = cli(["traces"]).stdout
    assert f"{conversation} #2" in listing and f"{conversation} #1" in listing
    shown = cli(["replay", "--conversation", "-n", "1"])
    assert shown.code == 0 and shown.stdout.index(BORN) < shown.stdout.index(DIED)
    assert shown.stdout.count("== ") == 2
    # the model is gone: the turn re-runs from its trace alone, the context included
    rerun = cli(["replay", "--rerun", "-n", "1"])
    assert (rerun.code, rerun.stdout) == (0, "18 April 1955\n"), rerun.stderr
    turn = rows[0]["path"]
    with FakeOpenAI(PerQuestion(SCRIPT)) as llm:
        fork = cli(["ask", "--from-trace", turn, "--from-step", "1"], **servers_env(llm, wiki))
        assert fork.code == 0 and first_prompt(llm, DIED) == wire  # the same prompt, live


def test_no_trace_keeps_nothing_but_the_chat_still_follows_up(
    cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki
) -> None:
    result = chat(cli, llm, wiki, [BORN, DIED], "--no-trace")
    assert result.stdout == "14 March 1879\n18 April 1955\n"
    assert first_prompt(llm, DIED).endswith(EARLIER_BORN)
    assert sorted(path.name for path in cli.home.iterdir()) == ["config.toml"]


def test_a_refused_key_ends_the_chat_at_the_first_question(
    cli: Runner, wiki: FakeMediaWiki
) -> None:
    with FakeOpenAI([Reply(status=401)]) as llm:
        result = chat(cli, llm, wiki, [BORN, DIED])
        assert len(llm.requests) == 1
    assert (result.code, result.stdout) == (2, "\n")
    assert one_error_line(result.stderr).startswith("Error: ")


def test_a_line_too_long_is_one_error_and_the_chat_goes_on(
    cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki
) -> None:
    stdin = b"x" * (1 << 20) + b"y\n" + BORN.encode() + b"\n\xff\x1b[2J\n"
    llm.requests.clear()
    result = cli(["chat"], stdin, **servers_env(llm, wiki))
    assert result.stdout == "\n14 March 1879\nunknown\n", result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert errors == ["Error: the question is larger than 1 MiB"] and result.code == 1
    assert "\x1b" not in result.stdout + result.stderr
    assert traces(cli.home)[-1]["question"] == "\ufffd\x1b[2J"  # as asked, any bytes


def test_a_home_where_no_trace_can_go_is_said_before_the_first_question(
    cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki
) -> None:
    (cli.home / "traces").write_text("a file where the folder goes")
    result = chat(cli, llm, wiki, [BORN])
    assert result.code == 2 and not llm.requests
    line = one_error_line(result.stderr)
    assert line.startswith("Error: cannot write the trace to ") and line.endswith(
        "(give --no-trace, or another REACT_CLI_HOME)"
    )


CALCULATOR = Path(__file__).resolve().parents[2] / "examples" / "tools" / "calculator.py"
SIX_TIMES = "What is six times seven?"
AND_HALF = "And half of that?"


def test_a_chat_has_the_tools_and_the_cache_of_ask(
    cli: Runner, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    """``chat --tools-from`` gives every question the file's tools; ``--cache`` answers a
    second identical chat with no request."""
    script: dict[str, list[str | Reply]] = {
        SIX_TIMES: [" I multiply.\nAction 1: Calculate[6 * 7]", " It is 42.\nAction 2: Finish[42]"],
        AND_HALF: [" Half of 42.\nAction 1: calculate[42 / 2]", " So 21.\nAction 2: Finish[21]"],
    }
    args = ("--tools-from", str(CALCULATOR), "--cache")
    with FakeOpenAI(PerQuestion(script)) as server:
        first = chat(cli, server, wiki, [SIX_TIMES, AND_HALF], *args)
        paid = len(server.requests)
        again = chat(cli, server, wiki, [SIX_TIMES, AND_HALF], *args)  # a new conversation
    assert (first.code, first.stdout) == (0, "42\n21\n"), first.stderr
    assert paid == 4
    observed = [t["steps"][0]["actions"][0]["observation"] for t in traces(cli.home)]
    assert observed[:2] == ["42", "21"]  # the calculator answered, in both questions
    assert (again.code, again.stdout) == (0, "42\n21\n"), again.stderr
    assert not server.requests  # every call of the second chat came from the cache
