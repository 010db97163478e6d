"""Ctrl-C as people press it: during start-up, during the run, and twice. Never a traceback,
always exit 130, and the trace of a run that had started is on disk."""

from __future__ import annotations

import importlib.abc
import json
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, Reply
from inproc import Runner, one_error_line

QUESTION = "Which magazine was started first, Arthur's Magazine or First for Women?"
SEARCH = " I need to search Arthur's Magazine.\nAction 1: Search[Arthur's Magazine]"


def interrupt_main_thread() -> None:
    """What the terminal does on Ctrl-C: SIGINT, handled by the main thread."""
    signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)


def pressing_during_call(n: int) -> Any:
    """A model that answers with a Search, and whose ``n``-th request brings a Ctrl-C."""
    calls = {"n": 0}

    def model(body: dict[str, Any]) -> Reply:
        calls["n"] += 1
        if calls["n"] == n:
            interrupt_main_thread()
            return Reply(text=SEARCH, delay_s=0.2)
        return Reply(text=SEARCH)

    return model


@pytest.fixture
def press_while_writing(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Path]]:
    """Another Ctrl-C as the trace is being written (people press it twice)."""
    from react_cli.traces import trace

    real = trace.write_json_atomic
    written: list[Path] = []

    def write(path: Path, document: dict[str, Any]) -> None:
        interrupt_main_thread()
        real(path, document)
        written.append(path)

    monkeypatch.setattr(trace, "write_json_atomic", write)
    yield written


@pytest.mark.parametrize("call", [1, 2])
def test_double_ctrl_c_still_writes_the_trace(
    cli: Runner, wiki: FakeMediaWiki, press_while_writing: list[Path], call: int
) -> None:
    with FakeOpenAI(pressing_during_call(call)) as llm:
        result = cli(
            ["ask", QUESTION], OPENAI_BASE_URL=llm.url, REACT_CLI_MODEL="m", REACT_CLI_WIKI=wiki.url
        )
    assert result.code == 130 and result.stdout == ""
    line = one_error_line(result.stderr)
    assert line.startswith("Error: interrupted; trace written to ")
    assert len(press_while_writing) == 1
    trace = cli.trace()
    assert trace["stop_reason"] == "interrupted" and trace["question"] == QUESTION
    assert len(trace["steps"]) == call  # the steps before the Ctrl-C are kept


def test_ctrl_c_while_the_trace_of_a_finished_run_is_written(
    cli: Runner, wiki: FakeMediaWiki, press_while_writing: list[Path]
) -> None:
    """The answer is out; the trace is still completed before the command stops with 130."""
    with FakeOpenAI([Reply(text=" Easy.\nAction 1: Finish[Arthur's Magazine]")]) as llm:
        result = cli(
            ["ask", QUESTION], OPENAI_BASE_URL=llm.url, REACT_CLI_MODEL="m", REACT_CLI_WIKI=wiki.url
        )
    assert result.code == 130 and result.stdout == "Arthur's Magazine\n"
    assert one_error_line(result.stderr).startswith("Error: interrupted; trace written to ")
    assert cli.trace()["stop_reason"] == "finish"


@pytest.mark.parametrize(
    "stage",
    [
        "react_cli.settings.resolve.resolve_with_origins",
        "react_cli.loop.prompts.load_prompt",
        "react_cli.session.builders.build_model",
    ],
)
def test_ctrl_c_before_the_run_exits_130_quietly(
    cli: Runner, monkeypatch: pytest.MonkeyPatch, stage: str
) -> None:
    def pressed(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(stage, pressed)
    result = cli(["ask", QUESTION], REACT_CLI_MODEL="m", OPENAI_BASE_URL="http://127.0.0.1:9/v1")
    assert (result.code, result.stdout) == (130, "")
    line = one_error_line(result.stderr)
    if stage.endswith("build_model"):  # the run had started: its trace says so
        assert line.startswith("Error: interrupted; trace written to ")
        assert cli.trace()["stop_reason"] == "interrupted"
    else:
        assert line == "Error: interrupted"


class _InterruptedImport(importlib.abc.MetaPathFinder):
    """Ctrl-C arriving while ``name`` is being imported."""

    def __init__(self, name: str) -> None:
        self.name = name

    def find_spec(self, fullname: str, path: object, target: object = None) -> None:
        if fullname == self.name:
            raise KeyboardInterrupt


@pytest.mark.parametrize("module", ["react_cli.cli", "typer"])
def test_ctrl_c_while_modules_import_exits_130_quietly(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], module: str
) -> None:
    from react_cli.entry import main

    for name in [n for n in sys.modules if n == module or n.startswith(("react_cli.cli", "typer"))]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(sys, "meta_path", [_InterruptedImport(module), *sys.meta_path])
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code == 130
    out, err = capsys.readouterr()
    assert out == "" and err == "Error: interrupted\n"


def test_trace_of_an_interrupted_run_replays(cli: Runner, wiki: FakeMediaWiki) -> None:
    with FakeOpenAI(pressing_during_call(2)) as llm:
        result = cli(
            ["ask", QUESTION], OPENAI_BASE_URL=llm.url, REACT_CLI_MODEL="m", REACT_CLI_WIKI=wiki.url
        )
    assert result.code == 130
    path = next((cli.home / "traces").glob("*.json"))
    shown = cli(["replay", "--json", str(path)])
    assert shown.code == 0 and json.loads(shown.stdout)["stop_reason"] == "interrupted"
