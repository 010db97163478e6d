"""The share commands through the CLI: ``replay --format``, ``eval show|report|compare``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import CliResult
from inproc import ODD_WIDTHS, Runner, glyphs, one_error_line

from react_cli.display.terminal import MAX_WIDTH

pytest_plugins = ["share_evals"]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "traces"
TRACE = EXAMPLES / "arthurs-magazine.json"
OTHER = EXAMPLES / "gemma-einstein.json"


def usage_error(result: CliResult, wanted: str) -> None:
    assert result.code == 2 and result.stdout == ""
    assert wanted in one_error_line(result.stderr), result.stderr


def test_replay_exports_markdown_to_stdout_and_several_traces_as_one_document(
    cli: Runner,
) -> None:
    one = cli(["replay", str(TRACE), "--format", "markdown"])
    assert (one.code, one.stderr) == (0, "")
    assert one.stdout.startswith("# ReAct run") and "### Step 3" in one.stdout
    both = cli(["replay", str(TRACE), str(OTHER), "--format", "markdown"])
    assert both.code == 0 and both.stdout.count("# ReAct run\n") == 2
    assert both.stdout.startswith(one.stdout) and "\n---\n" in both.stdout


def test_replay_writes_an_html_page_with_o(cli: Runner, tmp_path: Path) -> None:
    out = tmp_path / "run.html"
    result = cli(["replay", str(TRACE), "--format", "html", "-o", str(out)])
    assert (result.code, result.stdout, result.stderr) == (0, "", "")
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "Content-Security-Policy" in page
    assert "Arthur&#x27;s Magazine" in page or "Arthur's Magazine" in page


@pytest.mark.parametrize(
    ("args", "wanted"),
    [
        (["--format", "pdf"], "--format must be terminal, markdown or html, not 'pdf'"),
        (["-o", "x.md"], "-o/--output applies to --format markdown or html"),
        (["--format", "html", "--json"], "--format markdown/html goes with none of"),
        (["--format", "markdown", "--rerun"], "--format markdown/html goes with none of"),
        (["--format", "html", str(OTHER)], "--format html takes one TRACE at a time"),
    ],
)
def test_replay_export_usage_errors(cli: Runner, args: list[str], wanted: str) -> None:
    usage_error(cli(["replay", str(TRACE), *args]), wanted)


def test_replay_export_never_replaces_a_fifo(cli: Runner, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    usage_error(cli(["replay", str(TRACE), "--format", "html", "-o", str(fifo)]), "is a FIFO")


def test_replay_export_of_a_broken_trace_is_exit_1(cli: Runner, tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"version": 1', encoding="utf-8")
    result = cli(["replay", str(broken), "--format", "markdown"])
    assert result.code == 1 and result.stdout == ""
    assert "truncated JSON" in one_error_line(result.stderr)


def test_eval_show_prints_the_summary_and_the_wrong_answers(cli: Runner, eval_a: Path) -> None:
    plain = cli(["eval", "show", str(eval_a)])
    assert plain.code == 0 and "EM" in plain.stdout and "questions" in plain.stdout
    wrong = cli(["eval", "show", str(eval_a), "--wrong"])
    rows = [json.loads(line) for line in (eval_a / "results.jsonl").read_text().splitlines()]
    missed = [row for row in rows if row["em"] < 1]
    assert wrong.code == 0 and len(wrong.stdout) > len(plain.stdout)
    for row in missed:
        assert row["question"][:20] in wrong.stdout


def test_eval_report_writes_the_page(cli: Runner, eval_a: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    result = cli(["eval", "report", str(eval_a), "-o", str(out)])
    assert result.code == 0 and result.stdout.strip() == str(out)
    page = out.read_text(encoding="utf-8")
    assert page.count("<svg") == 0 and page.count("data:image/svg+xml") >= 3


def test_eval_compare_text_json_and_flips(cli: Runner, eval_a: Path, eval_b: Path) -> None:
    text = cli(["eval", "compare", str(eval_a), str(eval_b), "--list", "flips"])
    assert (
        text.code == 0 and "McNemar exact p" in text.stdout and "flipped questions" in text.stdout
    )
    data = json.loads(cli(["eval", "compare", str(eval_a), str(eval_b), "--json"]).stdout)
    again = json.loads(cli(["eval", "compare", str(eval_a), str(eval_b), "--json"]).stdout)
    other = json.loads(
        cli(["eval", "compare", str(eval_a), str(eval_b), "--json", "--seed", "7"]).stdout
    )
    assert data == again and data != other  # the bootstrap interval follows --seed


def test_eval_compare_refusals(cli: Runner, eval_a: Path, eval_fever: Path, tmp_path: Path) -> None:
    usage_error(cli(["eval", "compare", str(eval_a), str(tmp_path)]), "summary.json")
    result = cli(["eval", "compare", str(eval_a), str(eval_fever)])
    assert result.code == 2 and result.stderr.startswith("Error: ")
    usage_error(
        cli(["eval", "compare", str(eval_a), str(eval_a), "--list", "all"]), "--list must be"
    )


def test_eval_without_a_command_word_still_runs_a_dataset(cli: Runner) -> None:
    """``eval DATASET`` is ``eval run DATASET``: a missing file is its error, not a command."""
    usage_error(cli(["eval", "nosuch.json", "-m", "m"]), "no such dataset file: nosuch.json")
    assert cli(["eval", "-h"]).stdout == cli(["eval"]).stdout
    shown = cli(["eval", "-h"]).stdout
    commands = shown.split("\nCommands:\n")[1].split("\n\n")[0]
    assert {line.split()[0] for line in commands.splitlines()} == {
        "run", "show", "report", "compare", "export", "merge"
    }  # fmt: skip
    assert shown.index("\nCommands:\n") < shown.index("\nDataset:\n")


def test_any_width_shows_everything(
    cli: Runner, eval_a: Path, eval_b: Path, tmp_path: Path
) -> None:
    """``COLUMNS=0`` made ``eval show`` and ``replay`` print nothing (exit 0), and a narrow
    table cut its cells with "…": at any width every character is shown (issue 18, class 14)."""
    summary = json.loads((eval_a / "summary.json").read_text(encoding="utf-8"))
    figures = {"n": 6, "em": 0.5, "f1": 0.625, "avg_calls": 2.5, "avg_tokens": 1234.0}
    summary["methods"] = {"react": figures, "cot-sc": figures, "my-own-method": figures}
    (tmp_path / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    (tmp_path / "results.jsonl").write_bytes((eval_a / "results.jsonl").read_bytes())
    commands = [
        ["eval", "show", str(tmp_path), "--wrong"],
        ["eval", "compare", str(eval_a), str(eval_b), "--list", "flips"],
        ["replay", str(TRACE), str(OTHER)],
    ]
    for args in commands:
        reference = cli(args, COLUMNS=str(MAX_WIDTH))
        assert reference.code == 0, reference.stderr
        for width in ODD_WIDTHS:
            shown = cli(args, COLUMNS=width)
            assert shown.code == 0, shown.stderr
            assert glyphs(shown.stdout) == glyphs(reference.stdout), (args, width)
