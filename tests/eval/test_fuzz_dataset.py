"""Hostile dataset files through ``eval``: each runs (exit 0, or 1 when a question failed) with
a summary that counts the rows on disk, or is refused before any question with one
``Error: dataset <file>...`` line and exit 2; never a traceback, within a bound."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import CliResult
from eval_fakes import PerQuestion, finish
from fake_openai import FakeOpenAI
from hostile import cli_fuzz, mutated
from hypothesis import given
from hypothesis import strategies as st
from inproc import Runner

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "eval"
HOTPOT: list[Any] = json.loads((FIXTURES / "hotpotqa_dev_first6.json").read_text("utf-8"))[:3]
FEVER = [
    json.loads(line)
    for line in (FIXTURES / "fever_paper_dev_first6.jsonl").read_text("utf-8").splitlines()[:3]
]
BOUND_S = 15.0  # a hang detector: each run takes well under a second
FUZZ = cli_fuzz(15)


@pytest.fixture(scope="module")
def llm() -> Any:
    with FakeOpenAI(PerQuestion({}, default=[finish("yes")])) as server:
        yield server


def as_jsonl(data: bytes) -> bytes:
    """A mutated JSON list written as JSON Lines (one record per line) when it still parses."""
    try:
        records = json.loads(data)
    except (ValueError, RecursionError):
        return data
    if not isinstance(records, list):
        return data
    try:
        return b"".join(json.dumps(r, allow_nan=True).encode() + b"\n" for r in records)
    except (ValueError, RecursionError):
        return data


def check_eval(cli: Runner, llm: FakeOpenAI, path: Path, out: Path) -> CliResult:
    result = cli(
        ["eval", str(path), "--limit", "2", "--out", str(out)],
        OPENAI_BASE_URL=llm.url,
        REACT_CLI_MODEL="m",
        REACT_CLI_WIKI="http://127.0.0.1:9",
    )
    assert cli.elapsed_s < BOUND_S
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr, result
    assert "Exception in thread" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error: ")]
    if result.code == 2:
        assert result.stdout == "" and len(result.stderr.splitlines()) == 1, result.stderr
        assert errors[0].startswith(
            (f"Error: dataset {path}", f"Error: cannot read dataset {path}: ")
        ), errors
        assert not (out / "results.jsonl").exists()
        return result
    assert result.code in (0, 1), result
    assert len(errors) == result.code  # exit 1: one line saying which questions failed
    rows = (out / "results.jsonl").read_text(encoding="utf-8").split("\n")[:-1]  # JSON Lines
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["n"] == len(rows) and summary["status"] == "finished"
    return result


@FUZZ
@given(data=mutated(HOTPOT), lines=st.booleans())
def test_any_hotpotqa_file_runs_or_is_refused(
    cli: Runner, llm: FakeOpenAI, tmp_path_factory: pytest.TempPathFactory, data: bytes, lines: bool
) -> None:
    folder = tmp_path_factory.mktemp("hotpot")
    path = folder / ("data.jsonl" if lines else "data.json")
    path.write_bytes(as_jsonl(data) if lines else data)
    check_eval(cli, llm, path, folder / "run")


@FUZZ
@given(data=mutated(FEVER))
def test_any_fever_file_runs_or_is_refused(
    cli: Runner, llm: FakeOpenAI, tmp_path_factory: pytest.TempPathFactory, data: bytes
) -> None:
    folder = tmp_path_factory.mktemp("fever")
    path = folder / "paper_dev.jsonl"
    path.write_bytes(as_jsonl(data))
    check_eval(cli, llm, path, folder / "run")


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("[" * 100_000 + "]" * 100_000, "nested more than 100 levels deep"),
        ('[{"question": "q", "answer": 1e400}]', "the number 1e400 is out of range"),
        ('[{"question": "q", "answer": NaN}]', "NaN is not a number JSON allows"),
        ('[{"question": "q", "answer": ' + "9" * 5000 + "}]", "a number of 5,000 characters"),
        ('{"question": "q", "answer": "a"}\n{"question": Infinity}\n', "line 2: Infinity"),
    ],
)
def test_depth_and_numbers_are_named(
    cli: Runner, llm: FakeOpenAI, tmp_path: Path, content: str, problem: str
) -> None:
    path = tmp_path / "data.json"
    path.write_text(content, encoding="utf-8")
    result = check_eval(cli, llm, path, tmp_path / "run")
    assert result.code == 2 and problem in result.stderr


def test_a_dataset_that_never_ends_or_is_too_large_is_refused(
    cli: Runner, llm: FakeOpenAI, tmp_path: Path
) -> None:
    """``/dev/zero`` is no regular file: refused before a byte is read; a file is read up to
    the size limit, not into all memory."""
    from react_cli.eval import datasets

    result = cli(["eval", "/dev/zero", "-m", "m", "--base-url", llm.url])
    assert result.code == 2
    assert result.stderr == (
        "Error: cannot read dataset /dev/zero: is a character device, not a regular file\n"
    )
    cli.monkeypatch.setattr(datasets, "MAX_DATASET_BYTES", 1 << 10)
    big = tmp_path / "big.jsonl"
    big.write_text('{"question": "' + "q" * 2000 + '", "answer": "a"}\n', encoding="utf-8")
    result = cli(["eval", str(big), "-m", "m", "--base-url", llm.url])
    assert result.code == 2
    assert result.stderr == f"Error: cannot read dataset {big}: larger than 1 KiB\n"
