"""Hostile trace files through ``replay`` (shown, ``--json``, ``--rerun``), ``traces`` and
``ask --from-trace``: each is shown or refused with one ``Error: <file>: ...`` line and exit 1,
never a traceback, never a control character on the terminal, within a bound; a bad file in
the listing is one ``broken`` row among the good ones."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hostile import cli_fuzz, mutated
from hypothesis import given
from hypothesis import strategies as st
from inproc import Runner, one_error_line

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "traces"
EXAMPLE = EXAMPLES / "arthurs-magazine.json"
GOOD: dict[str, Any] = json.loads(EXAMPLE.read_text(encoding="utf-8"))
# A hybrid method's run: samples, votes, branch, a back-off to ReAct (version 2).
HYBRID: dict[str, Any] = json.loads(
    (EXAMPLES / "kiss-and-tell-cot-sc-react.json").read_text(encoding="utf-8")
)
# Native tool calls: a reply of two calls, the raw assistant messages, the tools protocol.
TOOLS: dict[str, Any] = json.loads(
    (EXAMPLES / "arthurs-magazine-tools.json").read_text(encoding="utf-8")
)
# Today's version (3): a reply of two native calls as one step, replies and actions.
NOW: dict[str, Any] = json.loads(
    (Path(__file__).resolve().parents[1] / "fixtures" / "traces" / "now" / "tools.json").read_text(
        encoding="utf-8"
    )
)
BOUND_S = 10.0  # a hang detector: each command takes well under a second
FUZZ = cli_fuzz(15)


def assert_shown_or_refused(cli: Runner, args: list[str], path: Path, codes: str = "01") -> None:
    """Exit 0, or one ``Error:`` line with exit 1 (or 2 where ``codes`` allows it)."""
    result = cli(args)
    assert cli.elapsed_s < BOUND_S, args
    assert str(result.code) in codes, (args, result)
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr, result.stderr
    assert "\x1b" not in result.stdout + result.stderr  # no escape sequence reaches the terminal
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error: ")]
    if result.code == 0:
        assert errors == [], result.stderr
        return
    assert len(result.stderr.splitlines()) == 1 and len(errors) == 1, result.stderr
    if "--rerun" not in args:
        assert errors[0].startswith(f"Error: {path}: "), errors


@FUZZ
@given(data=mutated(GOOD))
def test_any_trace_file_is_shown_or_refused_in_one_line(
    cli: Runner, tmp_path_factory: pytest.TempPathFactory, data: bytes
) -> None:
    path = tmp_path_factory.mktemp("trace") / "run.json"
    path.write_bytes(data)
    for mode in ([], ["--json"], ["--rerun"]):
        assert_shown_or_refused(cli, ["replay", *mode, str(path)], path)


@cli_fuzz(10)
@pytest.mark.parametrize("kind", ["hybrid", "tools", "now"])
@given(data=st.data())
def test_any_method_or_tools_trace_is_shown_re_run_or_refused_in_one_line(
    cli: Runner, tmp_path_factory: pytest.TempPathFactory, kind: str, data: st.DataObject
) -> None:
    path = tmp_path_factory.mktemp("trace") / f"{kind}.json"
    path.write_bytes(data.draw(mutated({"hybrid": HYBRID, "tools": TOOLS, "now": NOW}[kind])))
    for mode in ([], ["--json"], ["--rerun"]):
        assert_shown_or_refused(cli, ["replay", *mode, str(path)], path)
    if kind != "hybrid":  # the native calls and assistant messages, exported
        assert_shown_or_refused(cli, ["replay", "--format", "markdown", str(path)], path)
        return
    derived = ["replay", "--rerun", "--method", "react+cot-sc", str(path)]
    assert_shown_or_refused(cli, derived, path, codes="012")  # 2: the trace cannot give it


@cli_fuzz(10)
@given(data=mutated(GOOD))
def test_one_bad_trace_never_breaks_the_listing(cli: Runner, data: bytes) -> None:
    folder = cli.home / "traces"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    shutil.copy(EXAMPLE, folder / "a-good.json")
    (folder / "b-hostile.json").write_bytes(data)
    listed = cli(["traces", "--json"])
    assert listed.code == 0 and listed.stderr == "" and cli.elapsed_s < BOUND_S
    rows = {Path(row["path"]).name: row for row in json.loads(listed.stdout)}
    assert set(rows) == {"a-good.json", "b-hostile.json"}
    assert "error" not in rows["a-good.json"]
    table = cli(["traces"])
    assert table.code == 0 and table.stderr == "" and "\x1b" not in table.stdout
    assert len(table.stdout.splitlines()) == 3  # the header and one line per file
    broken = "error" in rows["b-hostile.json"]
    assert ("broken" in table.stdout) == broken


@cli_fuzz(8)
@given(data=mutated(GOOD))
def test_a_fork_of_any_trace_starts_or_is_refused(
    cli: Runner, tmp_path_factory: pytest.TempPathFactory, data: bytes
) -> None:
    """Forking from step 1 reads the trace and asks its question live; the endpoint is a closed
    port, so a fork that starts ends with exit 1 and a trace of its own."""
    path = tmp_path_factory.mktemp("fork") / "run.json"
    path.write_bytes(data)
    result = cli(
        ["ask", "--from-trace", str(path), "--from-step", "1", "--no-trace"],
        OPENAI_BASE_URL="http://127.0.0.1:9/v1",
        REACT_CLI_MODEL="m",
        REACT_CLI_WIKI="http://127.0.0.1:9",
    )
    assert cli.elapsed_s < BOUND_S
    assert result.code in (1, 2), result
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    lines = [one_error_line(result.stderr)]
    if result.code == 2 or "cannot reach" not in lines[0]:
        assert lines[0].startswith(f"Error: {path}: ") or "--from-step" in lines[0], lines
