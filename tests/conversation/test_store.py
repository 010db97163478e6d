"""The conversations kept in the home directory, read back as untrusted input: a file that is
corrupt, huge, a FIFO, a directory, another conversation's, or full of control characters is
one ``Error:`` line (exit 1) when ``ask -c`` would continue it, or is continued safely."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from eval_fakes import PerQuestion, finish, prompt_of, search
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI
from hostile import cli_fuzz, mutated
from hypothesis import given
from inproc import Runner, one_error_line

from react_cli.conversation.store import MAX_CONVERSATION_BYTES

BORN = "When was Albert Einstein born?"
DIED = "When did he die?"
ID = "0123456789ab"


def stored(question: str = BORN, answer: str = "14 March 1879") -> dict[str, Any]:
    """A conversation file as ``ask`` writes one: a turn that searched Albert Einstein."""
    step = {
        "thought": "I search.",
        "call": {"name": "Search", "argument": "Albert Einstein", "id": None},
        "observation": "Albert Einstein ( ; ; 14 March 1879 – 18 April 1955) was …",
        "reply": 1,
    }
    turn = {
        "question": question,
        "answer": answer,
        "steps": [step],
        "carried": {"page": "Albert Einstein"},
        "trace": None,
        "created": "2026-12-01T12:00:00+00:00",
    }
    return {"version": 1, "id": ID, "created": "2026-12-01T12:00:00+00:00", "turns": [turn]}


GOOD = stored()


@pytest.fixture(scope="module")
def llm() -> Iterator[FakeOpenAI]:
    scripts = {
        BORN: [finish("14 March 1879")],
        DIED: [" Loaded.\nAction 1: Lookup[1955]", finish("18 April 1955", 2)],
    }
    with FakeOpenAI(PerQuestion(scripts, default=[search("Albert Einstein")])) as server:
        yield server


@pytest.fixture
def store(home: Path) -> Path:
    folder = home / "conversations"
    folder.mkdir()
    return folder / f"{ID}.json"


def test_a_kept_conversation_is_continued_with_its_page(
    cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki, store: Path
) -> None:
    store.write_text(json.dumps(GOOD), encoding="utf-8")
    llm.requests.clear()
    result = cli.ask(llm, wiki, "-c", question=DIED)
    assert (result.code, result.stdout) == (0, "18 April 1955\n"), result.stderr
    assert f"Question: {BORN}\nAnswer: 14 March 1879\nQuestion: {DIED}\n" in prompt_of(
        llm.requests[0].json or {}
    )
    kept = json.loads(store.read_text(encoding="utf-8"))
    assert [turn["question"] for turn in kept["turns"]] == [BORN, DIED]
    assert kept["turns"][1]["carried"] == {"page": "Albert Einstein"}


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"{not json", "not a react-cli conversation: not JSON"),
        (b'{"version": 1, "id": "0123456789ab", "turns": [', "truncated JSON"),
        (b"\xff\xfe\x00", "cannot read the conversation: not UTF-8 text"),
        (b'{"version": 7}', "version is 7, not 1"),
        (json.dumps({**GOOD, "id": "ba9876543210"}).encode(), "holds conversation ba9876543210"),
        (json.dumps({**GOOD, "turns": [{"answer": 1}]}).encode(), "turn 1: question is"),
        (b" " * (MAX_CONVERSATION_BYTES + 1), "larger than 16 MiB"),
    ],
)
def test_a_broken_conversation_file_is_one_error_line(
    cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki, store: Path, content: bytes, said: str
) -> None:
    store.write_bytes(content)
    result = cli.ask(llm, wiki, "-c", question=DIED)
    line = one_error_line(result.stderr)
    assert result.code == 1 and line.startswith(f"Error: {store}: ") and said in line, line
    assert not (cli.home / "traces").exists()


@pytest.mark.timeout(10)
def test_a_fifo_or_a_directory_is_never_opened(
    cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki, store: Path
) -> None:
    os.mkfifo(store)
    result = cli.ask(llm, wiki, "--conversation", ID, question=DIED)
    assert result.code == 1
    assert one_error_line(result.stderr) == (
        f"Error: {store}: cannot read the conversation: is a FIFO, not a regular file"
    )
    latest = cli.ask(llm, wiki, "-c", question=BORN)  # -c passes it by: only files count
    assert latest.code == 0 and "no conversation to continue yet" in latest.stderr
    store.unlink()
    store.mkdir()
    result = cli.ask(llm, wiki, "--conversation", ID, question=DIED)
    assert result.code == 1 and "Is a directory" in one_error_line(result.stderr)


def test_control_characters_in_a_kept_conversation_reach_no_terminal(
    cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki, store: Path
) -> None:
    store.write_text(json.dumps(stored(BORN + "\x1b[2J\x07", "14\u009b March\x1b]0;x\x07")))
    result = cli.ask(llm, wiki, "-c", "-v", question=DIED)
    assert result.code == 0, result.stderr
    for said in (result.stdout, result.stderr):
        assert "\x1b" not in said and "\x07" not in said and "\u009b" not in said
    listing = cli(["traces"])
    assert listing.code == 0 and "\x1b" not in listing.stdout


def test_a_conversation_that_cannot_be_saved_is_a_warning_after_the_answer(
    cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki, home: Path
) -> None:
    (home / "conversations").write_text("a file where the folder goes")
    result = cli.ask(llm, wiki, question=BORN)
    assert (result.code, result.stdout) == (0, "14 March 1879\n")
    warning = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(warning) == 1 and "cannot save the conversation" in warning[0]


@cli_fuzz(15)
@given(data=mutated(GOOD))
def test_any_damaged_conversation_is_continued_or_one_error_line(
    cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki, data: bytes
) -> None:
    folder = cli.home / "conversations"
    folder.mkdir(exist_ok=True)
    (folder / f"{ID}.json").write_bytes(data)
    result = cli.ask(llm, wiki, "--conversation", ID, "--no-trace", question=DIED)
    if result.code == 0:
        assert result.stdout.strip() and "\x1b" not in result.stdout + result.stderr
    else:
        assert result.code == 1 and one_error_line(result.stderr).startswith("Error: ")
