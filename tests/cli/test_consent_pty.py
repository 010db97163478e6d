"""The consent question on a real pseudo-terminal, as a person answers it: ``ask -v`` with the
SDK-written MCP server's unmarked ``write_note`` (no, an answer that is none then yes, always,
and no question after always; the arguments shown cleaned, the API key masked, the question
on a line of its own after the trajectory's); Ctrl-C at the question of a Python tool's call
(the run stopped, its trace kept, exit 130); and a chat with prompt_toolkit's prompt, where
"always" lasts for the conversation (``/new`` asks again). Three sessions, each about a
second (``PROMPT_TOOLKIT_NO_CPR=1``: no wait for a cursor-position answer)."""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

import pytest
from conftest import cli_env
from eval_fakes import PerQuestion
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, Reply, scripted
from inproc import FAST_CONFIG, actions, servers_env, toml_value
from mcp_fixtures import Servers
from terminal import CTRL_C, CTRL_D, Terminal

pytest_plugins = ["mcp_zygotes"]  # servers: one zygote a run
pytestmark = pytest.mark.timeout(60)
KEY = "sk-consent-test-0123456789abcdef"
THINKING_S = 0.3
QUESTION = rb"Run it\? \[y\]es / \[n\]o / \[a\]lways this tool"
REMEMBER = '''
from react_cli import tool


@tool(needs_consent=True)
def remember(text: str) -> str:
    """Write the text into the notes file."""
    with open({path!r}, "a", encoding="utf-8") as notes:
        notes.write(text + "\\n")
    return "remembered " + text
'''


def terminal(home: Path, llm: FakeOpenAI, wiki: FakeMediaWiki, config: str, *args: str) -> Terminal:
    """``react-cli ARGS`` on a terminal, with ``config`` after the quick settings."""
    settings = "".join(f"{k} = {toml_value(v)}\n" for k, v in FAST_CONFIG.items())
    (home / "config.toml").write_text(settings + config, encoding="utf-8")
    env = cli_env(
        home,
        **servers_env(llm, wiki),
        OPENAI_API_KEY=KEY,
        TERM="xterm-256color",
        PROMPT_TOOLKIT_NO_CPR="1",
    )
    env.pop("COLUMNS")
    start = "import sys\nfrom react_cli.entry import main\nsys.argv[0] = 'react-cli'\nmain()"
    return Terminal([sys.executable, "-c", start, *args], env)


def write(note: Path, step: int, text: str) -> str:
    call = json.dumps({"path": str(note), "text": text})
    return f" Note it.\nAction {step}: write_note[{call}]"


def test_ask_asks_before_each_call_of_an_unmarked_tool_until_always(
    home: Path, wiki: FakeMediaWiki, servers: Servers, tmp_path: Path
) -> None:
    note = tmp_path / "note.txt"
    hostile = f"first \x1b(0\x07\u202e{KEY}"  # a charset switch, a bell, a bidi override, the key
    script = [
        write(note, 1, hostile),
        write(note, 2, "second"),
        write(note, 3, "third"),
        write(note, 4, "fourth"),
        " Done.\nAction 5: Finish[done]",
    ]
    config = f'[mcp.notes]\nurl = "{servers.url}"\n'
    with FakeOpenAI(scripted(*script)) as llm:
        ask = terminal(home, llm, wiki, config, "ask", "What is in my notes?", "-v")
        try:
            ask.expect(rb"Action 1: write_note\[.*\]\r?\nConsent needed: write_note ")
            origin = rb"(?s)from MCP server notes \(http.*?; demo 1\.2\.3\) would run with:"
            shown = ask.expect(origin + rb"\r?\n(.*?)" + QUESTION)
            time.sleep(THINKING_S)  # the person thinks: that time is not the tool's
            ask.send(b"n\r")
            ask.expect(rb"Observation 1: The user did not allow write_note: the call did not")
            ask.expect(rb"refused by the user")
            ask.expect(QUESTION)
            ask.send(b"maybe\r")  # no answer: asked again
            ask.expect(rb"Answer y \(yes\), n \(no\) or a \(always this tool\)\.\r?\n" + QUESTION)
            ask.send(b"YES\r")
            ask.expect(rb"Observation 2: wrote 6 characters to ")
            ask.expect(QUESTION)
            ask.send(b"a\r")
            ask.expect(rb"Observation 4: wrote 6 characters to ")  # asked no more
            ask.expect(rb"\ndone\r?\n")
            assert ask.wait() == 0
        finally:
            ask.close()
    lines = shown.group(1).decode().splitlines()
    assert lines == [f"  path: {note}", "  text: first (0***"]  # cleaned, the key masked
    question = ask.raw.split(b"Consent needed")[1].split(b"Observation 1")[0]
    planted = (b"\x1b(0", b"\x07", "\u202e".encode())
    assert not [sequence for sequence in planted if sequence in question]
    assert ask.screen.count("Consent needed") == 3
    assert note.read_text(encoding="utf-8") == "second\nthird\nfourth\n"
    traces = list((home / "traces").glob("*.json"))
    trace = json.loads(traces[0].read_text(encoding="utf-8"))
    assert [action.get("refused") for action in actions(trace)] == ["user", None, None, None, None]
    assert trace["steps"][0]["actions"][0]["latency_s"] < THINKING_S


def test_ctrl_c_at_the_question_stops_the_run_and_keeps_its_trace(
    home: Path, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    note = tmp_path / "notes.txt"
    tools = tmp_path / "notes_tools.py"
    tools.write_text(REMEMBER.format(path=str(note)), encoding="utf-8")
    config = f"tools_from = [{toml_value(str(tools))}]\n"
    with FakeOpenAI(scripted(" Note it.\nAction 1: Remember[milk]")) as llm:
        ask = terminal(home, llm, wiki, config, "ask", "What should I remember?")
        try:
            ask.expect(rb"Consent needed: Remember from file .*notes_tools\.py would run with:")
            ask.expect(rb"  text: milk\r?\n" + QUESTION)
            ask.send(CTRL_C)
            ask.expect(rb"\^C\r?\nError: interrupted; trace written to .+\.json")
            assert ask.wait() == 130
        finally:
            ask.close()
    assert not note.exists() and "Traceback" not in ask.screen
    trace = json.loads(next((home / "traces").glob("*.json")).read_text(encoding="utf-8"))
    assert trace["stop_reason"] == "interrupted"


def test_in_a_chat_always_lasts_for_the_conversation(
    home: Path, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    note = tmp_path / "notes.txt"
    tools = tmp_path / "notes_tools.py"
    tools.write_text(REMEMBER.format(path=str(note)), encoding="utf-8")
    first, second, third = "Remember a and b.", "Remember c.", "Remember d."
    scripts: dict[str, list[str | Reply]] = {
        first: [
            " One.\nAction 1: Remember[a]",
            " Two.\nAction 2: Remember[b]",
            " Done.\nAction 3: Finish[ab]",
        ],
        second: [" One.\nAction 1: Remember[c]", " Done.\nAction 2: Finish[c]"],
        third: [" One.\nAction 1: Remember[d]", " Done.\nAction 2: Finish[d]"],
    }
    config = f"tools_from = [{toml_value(str(tools))}]\n"
    with FakeOpenAI(PerQuestion(scripts)) as llm:
        chat = terminal(home, llm, wiki, config, "chat")
        try:
            chat.ready()
            chat.send(first.encode() + b"\r")
            chat.expect(rb"Action 1: Remember\[a\]\r?\nConsent needed: Remember ")
            chat.expect(QUESTION)
            chat.send(b"a\r")
            chat.expect(rb"Observation 2: remembered b[\s\S]*\nab\r?\n")  # not asked again
            chat.ready()
            chat.send(second.encode() + b"\r")
            chat.expect(rb"Observation 1: remembered c[\s\S]*\nc\r?\n")  # the conversation's
            chat.ready()
            chat.send(b"/new\r")
            chat.expect(rb"\(a new conversation: ")
            chat.ready()
            chat.send(third.encode() + b"\r")
            chat.expect(rb"Action 1: Remember\[d\]\r?\nConsent needed: Remember ")
            chat.expect(QUESTION)
            chat.send(CTRL_C)
            chat.expect(rb"Error: interrupted; trace written to .+\.json")
            chat.ready()  # the chat goes on, its prompt drawn again
            chat.send(CTRL_D)
            assert chat.wait() == 0
        finally:
            chat.close()
    assert chat.screen.count("Consent needed") == 2
    assert note.read_text(encoding="utf-8") == "a\nb\nc\n"
    history = (home / "chat_history").read_text(encoding="utf-8")
    assert "+a" not in history.splitlines()  # the answer is no question of the history
    assert "Traceback" not in chat.screen and re.search(r"Answer: ab\b", chat.screen)


def test_the_question_shows_a_long_value_cut_and_masks_every_secret_in_what_it_shows() -> None:
    """In-process, through the question's own seams (a console on a buffer, typed lines): the
    display's bounds, which no terminal session needs to show."""
    import io

    from react_cli.cli.consent import MAX_VALUE_CHARS, MAX_VALUE_LINES, TerminalQuestion
    from react_cli.display.terminal import make_console
    from react_cli.infra.redaction import Redactor
    from react_cli.tools.base import ToolSpec
    from react_cli.tools.consent import Answer

    schema = {
        "type": "object",
        "properties": {"path": {"type": "string"}, "text": {"type": "string"}},
    }
    spec = ToolSpec("write_note", "path, text", "Write.", schema, needs_consent=True)
    straddling = 2 * MAX_VALUE_CHARS - len(KEY) // 2  # a key cut where the cleaning stops
    text = f"{KEY} " + "x" * (straddling - len(KEY) - 1) + KEY + "y" * 5_000
    lines = "\n".join(f"line {n}" for n in range(100))
    argument = json.dumps({"path": lines, "text": text})
    answers = iter(["what?\n", "A\n", ""])
    shown = io.StringIO()
    question = TerminalQuestion(make_console(shown), Redactor([KEY]), read=lambda: next(answers))
    assert question(spec, argument) is Answer.ALWAYS  # after an answer that is none
    assert question(spec, argument) is Answer.NO  # Ctrl-D: the end of input
    said = shown.getvalue()
    assert KEY[:8] not in said and said.count("***") == 2  # masked; the cut one never shown
    assert f"line {MAX_VALUE_LINES - 1}" in said and f"line {MAX_VALUE_LINES}\n" not in said
    assert "more characters not shown" in said and "x" * MAX_VALUE_CHARS not in said
    assert said.count("Answer y (yes), n (no) or a (always this tool).") == 1
