"""``react-cli chat`` on a real pseudo-terminal, as a person uses it: line editing, the history
file (kept across chats, hostile entries shown clean), a follow-up that looks up the earlier
page, Ctrl-C during a run (its trace kept) and at the empty prompt, Ctrl-D; and without
prompt_toolkit, a plain prompt with one hint. Few sessions, each a fraction of a second
(``PROMPT_TOOLKIT_NO_CPR=1``: no wait for a cursor-position answer no test terminal gives)."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from chat_fakes import BORN, DIED, FOLLOW_UP
from conftest import cli_env
from eval_fakes import PerQuestion, search
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, Reply
from inproc import FAST_CONFIG, servers_env, toml_value
from terminal import CTRL_A, CTRL_C, CTRL_D, UP, Terminal

SLOW = "Who directed Rebel Without a Cause?"
SCRIPT: dict[str, list[str | Reply]] = {
    **FOLLOW_UP,
    SLOW: [search("Nicholas Ray"), Reply(text=" never mind", delay_s=30)],  # Ctrl-C'd
}
pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def llm() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(PerQuestion(SCRIPT)) as server:
        yield server


def terminal(
    home: Path, llm: FakeOpenAI, wiki: FakeMediaWiki, *args: str, code: str = ""
) -> Terminal:
    """``react-cli chat ARGS`` on a terminal (``code`` run first, in the same interpreter)."""
    (home / "config.toml").write_text(
        "".join(f"{k} = {toml_value(v)}\n" for k, v in FAST_CONFIG.items())
    )
    env = cli_env(home, **servers_env(llm, wiki), TERM="xterm-256color", PROMPT_TOOLKIT_NO_CPR="1")
    env.pop("COLUMNS")  # the terminal's own size
    start = (
        f"import sys\n{code}\nfrom react_cli.entry import main\nsys.argv[0] = 'react-cli'\nmain()"
    )
    return Terminal([sys.executable, "-c", start, "chat", *args], env)


def test_a_person_chats_edits_recalls_interrupts_and_leaves(
    home: Path, llm: FakeOpenAI, wiki: FakeMediaWiki
) -> None:
    history = home / "chat_history"
    history.write_bytes(b"\n# 2026-12-01\n+an \x1b[31mold\x1b[0m question\x07\n")
    chat = terminal(home, llm, wiki)
    try:
        chat.ready()
        chat.send(b"Albert Einstein born?" + CTRL_A + b"When was \r")  # Ctrl-A: to the start
        chat.expect(rb"14 March 1879\r?\nSources:")
        chat.ready()
        chat.send(UP)
        chat.expect(re.escape(BORN.encode()))
        chat.send(UP)
        chat.expect(rb"an old question")  # the file's entry, without its escape sequences
        chat.send(CTRL_C)  # with text typed: the line is cleared (the prompt still reads)
        chat.send(DIED.encode() + b"\r")
        chat.expect(rb"Lookup\[1955\][\s\S]*\(Result 1 / 1\) Albert Einstein[\s\S]*18 April 1955")
        chat.ready()
        chat.send(SLOW.encode() + b"\r")
        chat.expect(rb"Observation 1: Nicholas Ray")  # running: the model call of step 2 hangs
        chat.send(CTRL_C)
        chat.expect(rb"Error: interrupted; trace written to .+\.json")
        chat.expect(rb"\(Ctrl-C again to leave")
        chat.ready()
        chat.send(CTRL_C)  # the second Ctrl-C, at the empty prompt: the chat ends
        assert chat.wait() == 130
    finally:
        chat.close()
    assert chat.screen.rstrip().endswith("Error: interrupted")
    assert "Traceback" not in chat.screen and "(Ctrl-C again" not in chat.screen.split(DIED)[0]
    entries = [line for line in history.read_text().splitlines() if line.startswith("+")]
    assert entries[1:] == [f"+{BORN}", f"+{DIED}", f"+{SLOW}"]
    traces = sorted((home / "traces").glob("*.json"))
    slow = json.loads(traces[-1].read_text())
    assert slow["question"] == SLOW and slow["stop_reason"] == "interrupted"
    assert (
        slow["conversation"]["turn"] == 3
        and slow["steps"][0]["actions"][0]["action"] == "Search[Nicholas Ray]"
    )
    # the next chat goes on the same conversation (-c), with the history of the last one
    again = terminal(home, llm, wiki, "-c", "--quiet")
    try:
        again.ready()
        again.send(UP)
        again.expect(re.escape(SLOW.encode()))
        again.send(CTRL_C)
        again.send(DIED.encode() + b"\r")
        again.expect(rb"18 April 1955\r?\n")
        again.ready()
        again.send(CTRL_D)
        assert again.wait() == 0
    finally:
        again.close()
    assert "Thought 1" not in again.screen  # --quiet
    assert "conversation " + slow["conversation"]["id"] + " (turn 4 next)" in again.screen


def test_without_prompt_toolkit_a_plain_prompt_and_one_hint(
    home: Path, llm: FakeOpenAI, wiki: FakeMediaWiki
) -> None:
    chat = terminal(home, llm, wiki, "-q", code="sys.modules['prompt_toolkit'] = None")
    try:
        chat.expect(
            rb"hint: line editing and history need prompt_toolkit: pip install 'react-cli\[chat\]'"
        )
        chat.ready(drawn=False)
        chat.send(BORN.encode() + b"\r")
        chat.expect(rb"14 March 1879")
        chat.ready(drawn=False)
        chat.send(CTRL_D)
        assert chat.wait() == 0
    finally:
        chat.close()
    assert not (home / "chat_history").exists()


def test_a_link_planted_as_the_history_file_is_neither_read_nor_written_through(
    home: Path, llm: FakeOpenAI, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    """``<home>/chat_history`` pointing at another file: its lines are not recalled, the typed
    ones never appended to it; the link is replaced by a history file of the chat's own."""
    victim = tmp_path / "victim"
    victim.write_bytes(b"\n# 2026-12-01\n+a line of the victim's\n")
    before = victim.read_bytes()
    history = home / "chat_history"
    history.symlink_to(victim)
    chat = terminal(home, llm, wiki, "-q")
    try:
        chat.ready()
        chat.send(UP)  # nothing to recall: the link is not read
        chat.send(BORN.encode() + b"\r")
        chat.expect(rb"14 March 1879\r?\n")
        chat.ready()
        chat.send(CTRL_D)
        assert chat.wait() == 0
    finally:
        chat.close()
    assert "victim" not in chat.screen
    assert victim.read_bytes() == before
    assert not history.is_symlink() and f"\n+{BORN}\n" in history.read_text(encoding="utf-8")
