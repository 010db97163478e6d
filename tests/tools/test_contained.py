"""A Python tool runs in react-cli's process: what it does there is kept from react-cli's own
streams and paths, through the real CLI (``tools.contained``).

- It changes the working directory (in its call, and while its file loads): ``--trace
  run.json``, ``eval --out ev`` and a relative ``REACT_CLI_HOME`` still land where the command
  was started, nothing is written in the tool's folder, and the folder is put back.
- It prints (``print``, ``sys.stdout`` and its buffer, ``sys.stderr``, descriptor 1 by
  ``os.write`` and by a subprocess, escape sequences among it): stdout holds only the answer
  or the one JSON object (``ask --json``, ``eval --json``) or a piped chat's one line a
  question; ``-v`` shows the output cleaned on stderr, without ``-v`` it is dropped.
- It reads its stdin: it reads nothing, so a piped chat's next question is still asked.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest
from eval_fakes import PerQuestion
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, scripted
from inproc import Runner, actions, servers_env, sourceless

from react_cli import tool as tool_mark
from react_cli.infra.deadline import Deadline
from react_cli.infra.redaction import Redactor
from react_cli.tools.base import ToolResult
from react_cli.tools.functions import declare
from react_cli.tools.origin import OriginKind, ToolOrigin

TOOLS = '''
import os
import subprocess
import sys

from react_cli import tool

os.chdir(os.environ["WANDER_TO"])  # while the file loads
print("loading \\x1b[2J")


@tool
def wander(folder: str) -> str:
    """Go to another folder."""
    os.chdir(folder)
    return "went"


@tool
def noisy(text: str) -> str:
    """Say things everywhere."""
    print("hello \\x1b[31mred\\x1b[0m from print")
    sys.stdout.write("written\\n")
    sys.stdout.buffer.write(b"bytes \\xff\\n")
    print("to stderr \\x07", file=sys.stderr)
    sys.stdout.flush()
    os.write(1, b"descriptor one\\n")
    subprocess.run(["echo", "from a subprocess"], check=True)
    return "said"


@tool
def reader(text: str) -> str:
    """Read the input."""
    return f"read {len(sys.stdin.read())} characters"
'''
PRINTED = ("hello red from print", "written", "bytes \ufffd", "to stderr ")
FROM_DESCRIPTOR_1 = ("descriptor one", "from a subprocess")
QUESTION = "Where did it go?"


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The folder the command is started in; ``elsewhere``, where the tools go, holds a
    ``run.json`` and an ``ev`` of its own that must stay as they are."""
    folder = tmp_path / "work"
    folder.mkdir()
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "ev").mkdir(parents=True)
    (elsewhere / "run.json").write_text("not yours")
    (folder / "tools.py").write_text(TOOLS, encoding="utf-8")
    monkeypatch.chdir(folder)
    monkeypatch.setenv("WANDER_TO", str(tmp_path / "loaded"))
    (tmp_path / "loaded").mkdir()
    return folder


def elsewhere_untouched(work: Path) -> None:
    elsewhere = work.parent / "elsewhere"
    assert sorted(p.name for p in elsewhere.iterdir()) == ["ev", "run.json"]
    assert (elsewhere / "run.json").read_text() == "not yours"
    assert (
        list((elsewhere / "ev").iterdir()) == [] and list((work.parent / "loaded").iterdir()) == []
    )


def test_a_tool_that_changes_folder_moves_no_trace(
    cli: Runner, wiki: FakeMediaWiki, work: Path
) -> None:
    script = (
        " Go.\nAction 1: wander[../elsewhere]",
        " Again.\nAction 2: wander[../elsewhere]",
        " Done.\nAction 3: Finish[there]",
    )
    with FakeOpenAI(scripted(*script)) as llm:
        args = ("--tools-from", "tools.py", "--trace", "run.json")
        result = cli.ask(llm, wiki, *args, question=QUESTION)
    assert (result.code, result.stdout) == (0, "there\n"), result.stderr
    assert Path.cwd() == work  # put back after every call
    trace = json.loads((work / "run.json").read_text(encoding="utf-8"))
    assert [action["observation"] for action in actions(trace)[:2]] == ["went", "went"]
    elsewhere_untouched(work)


def test_an_eval_whose_tool_changes_folder_keeps_every_result(
    cli: Runner, wiki: FakeMediaWiki, work: Path
) -> None:
    questions = [f"Question {n}?" for n in range(4)]
    rows = "".join(json.dumps({"question": q, "answer": "there"}) + "\n" for q in questions)
    (work / "data.jsonl").write_text(rows, encoding="utf-8")
    steps = [
        " Go.\nAction 1: wander[../elsewhere]",
        " Talk.\nAction 2: noisy[x]",
        " Done.\nAction 3: Finish[there]",
    ]
    with FakeOpenAI(PerQuestion({q: list(steps) for q in questions})) as llm:
        args = ["eval", "data.jsonl", "--out", "ev", "--tools-from", "tools.py"]
        result = cli([*args, "--concurrency", "2", "--json"], **servers_env(llm, wiki))
    assert result.code == 0, result.stderr
    summary = json.loads(result.stdout)  # stdout: the one JSON object, nothing the tools said
    assert summary["n"] == 4 and summary["em"] == 1.0
    kept = (work / "ev" / "results.jsonl").read_text(encoding="utf-8").splitlines()
    assert sorted(json.loads(line)["question"] for line in kept) == questions
    assert len(list((work / "ev" / "traces").iterdir())) == 4
    assert not any(text in result.stderr for text in PRINTED)  # no -v: dropped
    assert Path.cwd() == work
    elsewhere_untouched(work)


def test_a_relative_home_stays_where_the_chat_started(
    cli: Runner, wiki: FakeMediaWiki, work: Path
) -> None:
    home = work / "home"
    home.mkdir()
    (home / "config.toml").write_text((cli.home / "config.toml").read_text())
    script = {
        q: [" Go.\nAction 1: wander[../elsewhere]", " Done.\nAction 2: Finish[there]"]
        for q in ("One?", "Two?")
    }
    with FakeOpenAI(PerQuestion(script)) as llm:
        env = {**servers_env(llm, wiki), "REACT_CLI_HOME": "home"}
        result = cli(["chat", "--tools-from", "tools.py"], "One?\nTwo?\n", **env)
    assert (result.code, result.stdout) == (0, "there\nthere\n"), result.stderr
    assert len(list((home / "traces").glob("*.json"))) == 2
    (conversation,) = (home / "conversations").glob("*.json")
    assert len(json.loads(conversation.read_text(encoding="utf-8"))["turns"]) == 2
    assert Path.cwd() == work
    elsewhere_untouched(work)


@pytest.mark.parametrize("verbose", [False, True])
def test_what_a_tool_prints_never_reaches_stdout(
    cli: Runner, wiki: FakeMediaWiki, work: Path, verbose: bool
) -> None:
    script = (" Talk.\nAction 1: noisy[x]", " Done.\nAction 2: Finish[said]")
    with FakeOpenAI(scripted(*script)) as llm:
        args = ["--tools-from", "tools.py", "--json", *(["-v"] if verbose else [])]
        result = cli.ask(llm, wiki, *args, question=QUESTION)
    assert result.code == 0, result.stderr
    summary = json.loads(result.stdout)  # one JSON object, alone
    assert summary["answer"] == "said"
    assert summary["steps"][0]["actions"][0]["observation"] == "said"
    said = sourceless(result.stderr)
    assert "\x1b" not in said and "\x07" not in said and "loading" not in said
    shown = [text in said for text in PRINTED + FROM_DESCRIPTOR_1]
    assert shown == [verbose] * len(shown), said
    if verbose:
        assert "(Noisy printed:)" in said and said.index("(Noisy printed:)") < said.index(
            "Observation 1: said"
        )


def test_a_tool_that_reads_its_input_leaves_a_piped_chat_its_questions(
    cli: Runner, wiki: FakeMediaWiki, work: Path
) -> None:
    script = {
        "First?": [
            " Read.\nAction 1: reader[x]",
            " Talk.\nAction 2: noisy[x]",
            " Done.\nAction 3: Finish[one]",
        ],
        "Second?": [" Done.\nAction 1: Finish[two]"],
    }
    with FakeOpenAI(PerQuestion(script)) as llm:
        env = servers_env(llm, wiki)
        result = cli(["chat", "--tools-from", "tools.py"], "First?\nSecond?\n", **env)
    assert (result.code, result.stdout) == (0, "one\ntwo\n"), result.stderr
    traces = sorted((cli.home / "traces").glob("*.json"))
    first = json.loads(traces[0].read_text(encoding="utf-8"))
    assert first["steps"][0]["actions"][0]["observation"] == "read 0 characters"
    assert os.getcwd() == str(work)


def test_calls_on_threads_at_once_each_keep_what_they_printed() -> None:
    """Two calls running at the same time (an eval's workers): each result holds its own
    call's prints, none of the other's, and nothing reaches the real stdout."""
    barrier = threading.Barrier(2, timeout=10)

    def shout(word: str) -> str:
        """Print a word many times."""
        barrier.wait()  # both calls are running now
        for _ in range(200):
            print(word)
        barrier.wait()
        return word

    tool = declare(tool_mark(shout), ToolOrigin(OriginKind.FILE), "test").tool(
        10.0, 1000, Redactor()
    )
    results: dict[str, ToolResult] = {}

    def call(word: str) -> None:
        results[word] = tool.call(word, deadline=Deadline.after(None))

    threads = [threading.Thread(target=call, args=(word,)) for word in ("left", "right")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    for word, other in (("left", "right"), ("right", "left")):
        printed = results[word].printed
        assert printed.count(word) == 200 and other not in printed
