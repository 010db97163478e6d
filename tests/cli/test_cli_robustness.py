"""What a demanding user meets around a run: broken files, unwritable places, Ctrl-C at odd
moments. Each ends with one ``Error:`` line, the documented exit code and no traceback."""

from __future__ import annotations

import errno
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, scripted
from inproc import QUESTION, Runner, one_error_line, only_trace_path

TWO_STEPS = (
    " I need to search Arthur's Magazine.\nAction 1: Search[Arthur's Magazine]",
    " Arthur's Magazine was started in 1844.\nAction 2: Finish[Arthur's Magazine]",
)


@pytest.fixture
def llm() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(scripted(*TWO_STEPS)) as server:
        yield server


def test_config_file_that_is_not_utf8_is_a_usage_error(
    cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki
) -> None:
    (cli.home / "config.toml").write_bytes(b'model = "\xff\xfe"\n')
    result = cli.ask(llm, wiki)
    assert result.code == 2
    assert "config file" in one_error_line(result.stderr) and "UTF-8" in result.stderr
    assert not llm.requests


@pytest.mark.parametrize("where", ["trace-is-a-directory", "traces-is-a-file"])
def test_unwritable_trace_fails_before_the_run(
    cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki, tmp_path: Path, where: str
) -> None:
    if where == "trace-is-a-directory":
        result = cli.ask(llm, wiki, "--trace", str(tmp_path))
    else:
        (cli.home / "traces").write_text("")
        result = cli.ask(llm, wiki)
    assert result.code == 2 and result.stdout == ""
    line = one_error_line(result.stderr)
    assert "cannot write the trace" in line and "--no-trace" in line
    assert not llm.requests  # no tokens paid for a run whose trace would be lost


def test_trace_write_failing_after_the_run_keeps_the_answer(
    cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki, monkeypatch: pytest.MonkeyPatch
) -> None:
    def disk_full(path: Path, document: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("react_cli.traces.trace.write_json_atomic", disk_full)
    result = cli.ask(llm, wiki)
    assert result.stdout == "Arthur's Magazine\n"
    assert result.code == 1
    assert "No space left on device" in one_error_line(result.stderr)


def test_ctrl_c_while_the_run_is_set_up_still_writes_a_trace(
    cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki, monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("react_cli.session.builders.build_backend", interrupted)
    result = cli.ask(llm, wiki)
    assert result.code == 130 and result.stdout == ""
    assert one_error_line(result.stderr).startswith("Error: interrupted; trace written to ")
    path = next((cli.home / "traces").glob("*.json"))
    shown = cli(["replay", str(path)])
    assert shown.code == 0 and "No answer (interrupted)" in shown.stdout
    assert cli(["replay", "--rerun", str(path)]).code == 0  # nothing to re-run: reproduced
    trace = cli.trace()
    assert trace["stop_reason"] == "interrupted" and trace["steps"] == []
    assert trace["question"] == QUESTION and trace["answer"] is None


def test_ctrl_c_typer_catches_is_still_reported(
    cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki, monkeypatch: pytest.MonkeyPatch
) -> None:
    """typer turns a KeyboardInterrupt into a silent exit 130; the user still gets a line."""

    def interrupted(argument: object) -> str:
        raise KeyboardInterrupt

    monkeypatch.setattr("react_cli.cli.ask.read_question", interrupted)
    result = cli.ask(llm, wiki)
    assert result.code == 130 and result.stdout == ""
    assert one_error_line(result.stderr) == "Error: interrupted"


def test_json_and_trace_agree_after_the_trace_moved_out_of_the_run(
    cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki
) -> None:
    result = cli.ask(llm, wiki, "--json")
    assert result.code == 0
    summary = json.loads(result.stdout)
    assert summary["trace"] == str(only_trace_path(cli.home))
    trace = cli.trace()
    assert summary["steps"] == trace["steps"]
    assert trace["stop_reason"] == "finish"


# --- traces with fields of the wrong type ------------------------------------------------------

GOOD_STEP = {"index": 1, "thought": "t", "action": "Search[x]", "observation": "o", "raw": "r"}
BAD_TRACES = {
    "action-is-a-number": {"steps": [{**GOOD_STEP, "action": 5}]},
    "followup-is-a-list": {"steps": [{**GOOD_STEP, "followup_raw": ["x"]}]},
    "details-is-a-list": {"steps": [{**GOOD_STEP, "details": [1, 2]}]},
    "latency-is-text": {"steps": [{**GOOD_STEP, "latency_s": "abc"}]},
    "latency-is-infinite": {"steps": [{**GOOD_STEP, "latency_s": 1e400}]},
    "duration-is-nan": {"duration_s": float("nan")},
    "version-is-true": {"version": True},
    "version-is-a-float": {"version": 1.0},
}


@pytest.mark.parametrize("name", sorted(BAD_TRACES))
@pytest.mark.parametrize("command", [[], ["--json"], ["--rerun"]])
def test_trace_with_wrong_field_types_is_one_line_exit_1(
    cli: Runner, tmp_path: Path, name: str, command: list[str]
) -> None:
    document = {"version": 1, "question": "q", "stop_reason": "max_steps", "steps": []}
    document.update(BAD_TRACES[name])
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(document), encoding="utf-8")  # NaN/Infinity as Python writes them
    result = cli(["replay", str(path), *command])
    assert result.code == 1 and result.stdout == "", result.stdout
    assert one_error_line(result.stderr).startswith(f"Error: {path}: ")
    assert "internal error" not in result.stderr


def test_odd_usage_numbers_from_a_server_count_as_zero() -> None:
    from react_cli.core.records import Usage

    assert Usage.from_json({"prompt_tokens": "12", "completion_tokens": 3}) == Usage(0, 3)
    assert Usage.from_json({"prompt_tokens": float("nan"), "completion_tokens": -1}) == Usage()
    assert Usage.from_json({"prompt_tokens": True, "completion_tokens": 2.0}) == Usage(0, 2)


def test_unterminated_osc_does_not_swallow_the_rest_of_the_text() -> None:
    from react_cli.display.terminal import plain

    assert plain("Could not find [Ed\x1b]. Similar: ['Ed Wood'].") == (
        "Could not find [Ed. Similar: ['Ed Wood']."
    )
    assert plain("a\x1b]0;title\x07b \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ c") == "ab link c"


def test_empty_prompt_option_is_a_clear_usage_error(
    cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki
) -> None:
    result = cli.ask(llm, wiki, "--prompt", "")
    assert result.code == 2
    assert "the prompt is empty" in one_error_line(result.stderr)


def test_help_shows_exit_codes_and_argument_names(cli: Runner) -> None:
    root = cli(["--help"])
    assert root.code == 0 and "Exit codes: 0 answered" in root.stdout
    assert "[QUESTION]" in cli(["ask", "--help"]).stdout
    assert "[TRACE]" in cli(["replay", "--help"]).stdout
