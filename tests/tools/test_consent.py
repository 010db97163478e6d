"""Consent for Python tools, through the real CLI without a terminal (piped, in-process): a
``@tool(needs_consent=True)`` refused and the run going on, in both protocols, in the trace,
``-v`` and ``--json``; a piped chat; allow and deny rules from flags and the config file
(deny wins, any case, globs); ``react-cli tools``; rules that are none; a refusal replayed
(``--rerun`` offline, ``--live-tools`` under today's rules) and recorded refusals a newer
react-cli wrote; the glob matcher against ``fnmatch``. MCP servers' tools:
``tools/mcp/test_mcp_consent.py``; on a terminal: ``cli/test_consent_pty.py``."""

from __future__ import annotations

import fnmatch
import json
from pathlib import Path
from typing import Any

import pytest
from eval_fakes import PerQuestion
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, Reply, scripted
from hypothesis import given
from hypothesis import strategies as st
from inproc import Runner, actions, edit_json, one_error_line, servers_env
from tool_fakes import tool_call

from react_cli.tools.consent import matches

QUESTION = "What should I remember?"
NOTES = '''
from react_cli import tool


@tool(needs_consent=True)
def remember(text: str) -> str:
    """Write the text into the notes file."""
    with open({path!r}, "a", encoding="utf-8") as notes:
        notes.write(text + "\\n")
    return "remembered " + text


@tool
def shout(text: str) -> str:
    """Say the text in capitals."""
    return text.upper()
'''
TEXT_RUN = (
    " Shout first.\nAction 1: Shout[hi]",
    " Now remember it.\nAction 2: Remember[milk]",
    " Done.\nAction 3: Finish[done]",
)
REFUSED = (
    "The user did not allow Remember (it needs consent, and there was no terminal to ask): "
    "the call did not run. Do without it: use another tool, or finish with what you know."
)


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    """Where the tool writes (it must not exist after a refused call)."""
    return tmp_path / "notes.txt"


@pytest.fixture
def tools_file(tmp_path: Path, notes: Path) -> Path:
    path = tmp_path / "notes_tools.py"
    path.write_text(NOTES.format(path=str(notes)), encoding="utf-8")
    return path


def native_run() -> list[Reply]:
    return [
        Reply(text="Shout first.", tool_calls=[tool_call("shout", text="hi")]),
        Reply(text="Now remember it.", tool_calls=[tool_call("remember", text="milk")]),
        Reply(text="Done.", tool_calls=[tool_call("finish", answer="done")]),
    ]


@pytest.mark.parametrize("protocol", ["text", "tools"])
def test_a_tool_that_needs_consent_is_refused_without_a_terminal_and_the_run_goes_on(
    cli: Runner, wiki: FakeMediaWiki, tools_file: Path, notes: Path, protocol: str
) -> None:
    replies = scripted(*TEXT_RUN) if protocol == "text" else native_run()
    args = ("--tools-from", str(tools_file), "--protocol", protocol, "-v", "--json")
    with FakeOpenAI(replies) as llm:
        result = cli.ask(llm, wiki, *args, question=QUESTION)
    assert result.code == 0, result.stderr
    assert not notes.exists()  # nothing ran
    summary = json.loads(result.stdout)
    assert summary["answer"] == "done" and summary["refused_calls"] == 1
    steps = actions(summary)
    assert [step.get("refused") for step in steps] == [None, "no_terminal", None]
    assert steps[0]["observation"] == "HI" and steps[1]["observation"] == REFUSED
    assert "error" not in steps[1]  # no tool failed: none ran
    assert "Observation 2: The user did not allow Remember" in result.stderr
    assert "refused: no terminal to ask" in result.stderr  # -v: the step's line
    assert "1 refused tool call" in result.stderr  # and the run's
    told = llm.requests[2].json
    assert told is not None and REFUSED in json.dumps(told)  # the model is told
    trace = cli.trace()
    assert trace["steps"][1]["actions"][0]["refused"] == "no_terminal"
    declared = {spec["name"]: spec for spec in trace["config"]["tools"]}
    assert declared["Remember"]["needs_consent"] is True
    assert "needs_consent" not in declared["Shout"] and "needs_consent" not in declared["Search"]


def test_a_piped_chat_asks_nobody_and_answers_every_line(
    cli: Runner, wiki: FakeMediaWiki, tools_file: Path, notes: Path
) -> None:
    scripts: dict[str, list[str | Reply]] = {
        "Remember milk.": [" Keep it.\nAction 1: Remember[milk]", " Done.\nAction 2: Finish[no]"],
        "Shout hi.": [" Loud.\nAction 1: Shout[hi]", " Done.\nAction 2: Finish[HI]"],
    }
    with FakeOpenAI(PerQuestion(scripts)) as llm:
        args = ["chat", "--tools-from", str(tools_file)]
        result = cli(args, "Remember milk.\nShout hi.\n", **servers_env(llm, wiki))
    assert (result.code, result.stdout) == (0, "no\nHI\n"), result.stderr
    assert not notes.exists()
    traces = [json.loads(p.read_text()) for p in sorted((cli.home / "traces").glob("*.json"))]
    refused = {t["question"]: t["steps"][0]["actions"][0].get("refused") for t in traces}
    assert refused == {"Remember milk.": "no_terminal", "Shout hi.": None}


def test_allow_and_deny_rules_from_flags_and_the_config_file(
    cli: Runner, wiki: FakeMediaWiki, tools_file: Path, notes: Path
) -> None:
    def ask(*args: str, config: str = "") -> tuple[FakeOpenAI, dict[str, Any]]:
        cli.config_text(f'tools_from = ["{tools_file}"]\n{config}')
        with FakeOpenAI(scripted(*TEXT_RUN)) as llm:
            result = cli.ask(llm, wiki, *args, question=QUESTION)
        assert result.code == 0, result.stderr
        return llm, cli.trace()

    _, trace = ask("--allow-tool", "remember")  # any case: the tool is Remember
    assert notes.read_text(encoding="utf-8") == "milk\n"
    assert [action.get("refused") for action in actions(trace)] == [None, None, None]
    _, trace = ask(config='[tools]\nallow = ["REM*"]\n')  # a glob in the config file
    assert notes.read_text(encoding="utf-8") == "milk\nmilk\n"
    # deny wins: over an allow rule of the command line, and of the config file
    for args, config in (
        (("--allow-tool", "Remember"), '[tools]\ndeny = ["rem?mber"]\n'),
        (("--deny-tool", "*member"), '[tools]\nallow = ["*"]\n'),
    ):
        llm, trace = ask(*args, config=config)
        prompt = json.dumps(llm.requests[0].json)
        assert "Remember[" not in prompt and "Shout[text]" in prompt  # never shown it
        names = [spec["name"] for spec in trace["config"]["tools"]]
        assert names == ["Search", "Lookup", "Shout", "Finish"]
        step = trace["steps"][1]
        assert step["error"] == "parse_error" and "refused" not in step["actions"][0]  # no tool
    assert notes.read_text(encoding="utf-8") == "milk\nmilk\n"
    with FakeOpenAI(native_run()) as llm:  # nor declared as a native function
        args = ("--tools-from", str(tools_file), "--protocol", "tools", "--deny-tool", "REMEMBER")
        assert cli.ask(llm, wiki, *args, question=QUESTION).code == 0
    declared = [tool["function"]["name"] for tool in llm.requests[0].json["tools"]]
    assert declared == ["search", "lookup", "shout", "finish"]
    assert notes.read_text(encoding="utf-8") == "milk\nmilk\n"


def test_tools_lists_whether_each_tool_needs_consent_and_its_rule(
    cli: Runner, tools_file: Path
) -> None:
    cli.config_text('[tools]\nallow = ["rem*"]\n')
    args = ["tools", "--tools-from", str(tools_file), "--deny-tool", "lookup"]
    shown = cli(args)
    assert shown.code == 0, shown.stderr
    consent = {line.split()[0]: line for line in shown.stdout.splitlines()}
    assert "built in" in consent["Search[entity]"] and " no consent " in consent["Search[entity]"]
    assert " denied (lookup) " in consent["Lookup[keyword]"]  # the listing still names it
    assert " allowed (rem*) " in consent["Remember[text]"]
    assert " no consent " in consent["Shout[text]"]
    listed = {tool["name"]: tool for tool in json.loads(cli([*args, "--json"]).stdout)}
    facts = {name: (t["needs_consent"], t["rule"], t["pattern"]) for name, t in listed.items()}
    assert facts == {
        "Search": (False, None, None),
        "Lookup": (False, "deny", "lookup"),
        "Remember": (True, "allow", "rem*"),
        "Shout": (False, None, None),
        "Finish": (False, None, None),
    }
    assert cli(["tools", "--tools-from", str(tools_file), "--deny-tool", "*"]).code == 0
    config = json.loads(cli(["config", "--json", "--allow-tool", "x"]).stdout)["settings"]
    assert config["tool_allow"] == {"value": ["rem*", "x"], "from": "flag"}  # added together


@pytest.mark.parametrize(
    ("config", "args", "said"),
    [
        ("", ("--allow-tool", "rm -rf"), "--allow-tool: 'rm -rf' is no tool name or glob"),
        ("", ("--deny-tool", "x" * 129), "is no tool name or glob"),
        ("", ("--deny-tool", ""), "--deny-tool: '' is no tool name or glob"),
        ("[tools]\nallow = 'notes.*'\n", (), "[tools]: allow is a list of tool names or globs"),
        ("[tools]\nallow = [3]\n", (), "[tools] allow: 3 is no tool name or glob"),
        ("[tools]\npermit = []\n", (), "unknown key(s) 'permit' (use allow and deny)"),
        ("tools = 1\n", (), "[tools]: a table such as"),
        ("tool_allow = ['x']\n", (), "unknown setting(s): tool_allow"),
    ],
)
def test_a_rule_that_is_none_is_one_error_line(
    cli: Runner, config: str, args: tuple[str, ...], said: str
) -> None:
    cli.config_text(config)
    result = cli(["tools", *args])
    assert result.code == 2 and said in one_error_line(result.stderr), result.stderr


def test_a_refusal_replays_offline_and_live_tools_follow_today_s_rules(
    cli: Runner, wiki: FakeMediaWiki, tools_file: Path, notes: Path, tmp_path: Path
) -> None:
    path = cli.record(wiki, *TEXT_RUN, args=("--tools-from", str(tools_file)))
    rerun = cli(["replay", str(path), "--rerun", "-v"])
    assert rerun.code == 0 and rerun.stdout == "done\n", rerun.stderr
    assert "refused: no terminal to ask" in rerun.stderr
    shown = cli(["replay", str(path)])
    assert "refused: no terminal to ask" in shown.stdout
    live = ["replay", str(path), "--live-tools", "--tools-from", str(tools_file)]
    assert cli(live, **servers_env(wiki, wiki)).code == 0  # refused again: the same run
    assert not notes.exists()
    denied = cli([*live, "--deny-tool", "remember", "-v"], **servers_env(wiki, wiki))
    assert denied.code == 1 and "refused by a deny rule" in denied.stderr  # listed, refused
    assert "step 2 observation" in denied.stdout and not notes.exists()
    allowed = cli([*live, "--allow-tool", "remember"], **servers_env(wiki, wiki))
    assert allowed.code == 1 and "+ remembered milk" in allowed.stdout  # it ran: it differs
    assert notes.read_text(encoding="utf-8") == "milk\n"
    offline = cli(["replay", str(path), "--rerun", "--allow-tool", "x"])
    assert offline.code == 2 and "apply to --live-tools only" in one_error_line(offline.stderr)
    # who refused, as a newer react-cli may record it: kept as text; a wrong type is refused
    edit_json(path, lambda trace: trace["steps"][1]["actions"][0].update(refused="robot"))
    assert "refused (robot)" in cli(["replay", str(path)]).stdout
    edit_json(path, lambda trace: trace["steps"][1]["actions"][0].update(refused=5))
    broken = cli(["replay", str(path)])
    assert broken.code == 1 and "refused is 5, not text" in one_error_line(broken.stderr)


def test_needs_consent_must_be_true_or_false(cli: Runner, tmp_path: Path) -> None:
    path = tmp_path / "odd.py"
    path.write_text(
        "from react_cli import tool\n\n@tool(needs_consent='yes')\n"
        "def odd(x: str) -> str:\n    'Odd.'\n    return x\n",
        encoding="utf-8",
    )
    result = cli(["tools", "--tools-from", str(path)])
    said = one_error_line(result.stderr)
    assert result.code == 2 and "@tool(needs_consent=...) is True or False, not 'yes'" in said


@given(
    st.text(alphabet="ab.*?-", max_size=12),
    st.text(alphabet="abAB.-_", max_size=12),
)
def test_a_glob_matches_as_fnmatch_does_in_any_case(pattern: str, name: str) -> None:
    assert matches(pattern, name) == fnmatch.fnmatchcase(name.casefold(), pattern.casefold())
