"""SIGTERM and SIGHUP where only a real process shows them: a chat on a terminal, at its
prompt (prompt_toolkit reads keys in raw mode there; the MCP servers' side of these signals is
``tools/mcp/test_mcp_lifecycle.py``'s)."""

from __future__ import annotations

import os
import signal
import termios
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from chat_fakes import FOLLOW_UP
from eval_fakes import PerQuestion
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI
from inproc import HANG_S
from test_chat_pty import terminal

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def llm() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(PerQuestion(dict(FOLLOW_UP))) as server:
        yield server


def cooked_modes(fd: int) -> int:
    """The terminal's local modes once line editing is back on (or the last read, after
    ``HANG_S``): the pty's master reads them even after the program closed its side."""
    deadline = time.monotonic() + HANG_S
    modes = termios.tcgetattr(fd)[3]
    while not modes & termios.ICANON and time.monotonic() < deadline:
        time.sleep(0.01)
        modes = termios.tcgetattr(fd)[3]
    return modes


def test_sigterm_at_a_chat_s_prompt_ends_it_with_the_terminal_given_back(
    home: Path, llm: FakeOpenAI, wiki: FakeMediaWiki
) -> None:
    chat = terminal(home, llm, wiki)
    try:
        chat.ready()
        assert not termios.tcgetattr(chat.fd)[3] & termios.ICANON  # the prompt reads keys
        os.kill(chat.pid, signal.SIGTERM)
        chat.expect(rb"Error: interrupted by SIGTERM")
        modes = cooked_modes(chat.fd)  # given back as the program ends: before or after its line
        assert chat.wait() == 128 + signal.SIGTERM
    finally:
        chat.close()
    assert modes & termios.ICANON and modes & termios.ECHO  # cooked again, as it was given
    assert "Traceback" not in chat.screen
