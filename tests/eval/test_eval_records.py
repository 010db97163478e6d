"""The typed records of an eval folder: rows and summaries written by the code before them read
back, and written again byte for byte; anything else refused with the field that is wrong."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from react_cli.core.records import StopReason
from react_cli.eval.rows import BadRow, Row
from react_cli.eval.summary import BadSummary, EvalStatus, ScoreKind, Summary
from react_cli.infra.untrusted import dump_json

FOLDERS = Path(__file__).resolve().parents[1] / "fixtures" / "eval" / "folders"
KINDS = sorted(path.name for path in FOLDERS.iterdir())


def lines_of(kind: str) -> list[str]:
    return (FOLDERS / kind / "results.jsonl").read_text(encoding="utf-8").splitlines()


def summary_of(kind: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((FOLDERS / kind / "summary.json").read_text())
    return document


@pytest.mark.parametrize("kind", KINDS)
def test_rows_of_earlier_evals_are_written_again_byte_for_byte(kind: str) -> None:
    for line in lines_of(kind):
        row = Row.from_json(json.loads(line))
        assert dump_json(row.to_json()) == line


@pytest.mark.parametrize("kind", KINDS)
def test_summaries_of_earlier_evals_are_written_again_with_their_key_order(kind: str) -> None:
    document = summary_of(kind)
    again = Summary.from_json(document).to_json()
    assert json.dumps(again, indent=2) == json.dumps(document, indent=2)


def test_the_records_hold_typed_values() -> None:
    fever = [Row.from_json(json.loads(line)) for line in lines_of("fever")]
    assert [row.result.stop_reason for row in fever] == [StopReason.FINISH] * 3 + [StopReason.ERROR]
    assert [row.result.label.value if row.result.label else "-" for row in fever] == [
        "SUPPORTS",
        None,
        "REFUTES",
        "-",  # a question that crashed has no label
    ]
    assert [row.failed for row in fever] == [False, False, False, True]
    summary = Summary.from_json(summary_of("fever"))
    assert summary.figures.kind is ScoreKind.ACCURACY and summary.figures.f1 is None
    assert summary.status is EvalStatus.FINISHED and summary.figures.failed == 1
    jsonl = [Row.from_json(json.loads(line)) for line in lines_of("jsonl")]
    assert [row.golds for row in jsonl] == [("1989",), ("Paris", "Paris, France")]
    assert Summary.from_json(summary_of("jsonl")).dataset.selection.shuffle_seed == 3


def row_with(**changes: Any) -> dict[str, Any]:
    row: dict[str, Any] = json.loads(lines_of("hotpotqa")[0])
    row.update(changes)
    return row


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({"stop_reason": "gave_up"}, "stop_reason is not one react-cli writes"),
        ({"index": -1}, "index is not a row number"),
        ({"index": True}, "index is not a row number"),
        ({"em": "1"}, "em is '1', not a number"),
        ({"f1": 1.5}, "f1 is 1.5, out of range"),
        ({"steps": 1.0}, "steps is 1.0, not a whole number"),
        ({"tokens": 10**16}, "tokens is 10000000000000000, out of range"),
        ({"answer": ["yes"]}, "answer is \\['yes'\\], not text"),
        ({"gold": []}, "gold is not text, a number or a list of them"),
        ({"gold": [True]}, "gold is not text, a number or a list of them"),
        ({"id": 1.5}, "id is not text or a whole number"),
        ({"usage": "none"}, "usage is not an object"),
        ({"cost": -1}, "cost is -1, out of range"),
        ({"label": 3}, "label is 3, not text"),
        ({"calls": -2}, "calls is -2, out of range"),
    ],
)
def test_a_row_that_is_not_one_names_its_field(changes: dict[str, Any], problem: str) -> None:
    with pytest.raises(BadRow, match=f"^{problem}$"):
        Row.from_json(row_with(**changes))


def test_rows_of_other_tools_may_lack_usage_and_cost_and_record_calls() -> None:
    data = row_with(calls=4)
    del data["usage"], data["cost"]
    row = Row.from_json(data)
    assert (row.result.usage, row.result.cost, row.result.calls) == (None, None, 4)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"status": "paused"}, "status"),
        ({"dataset": {"path": "x", "format": "csv", "rows": 1}}, "dataset"),
        ({"config": {"model": "m"}}, "config"),
        ({"em": 2}, "em"),
        ({"n": -1}, "n"),
        ({"stop_reasons": {"gave_up": 1}}, "stop_reasons"),
        ({"stop_reasons": {"finish": "1"}}, "stop_reasons"),
        ({"created": 1}, "created"),
        ({"wall_s": None}, "wall_s"),
    ],
)
def test_a_summary_that_is_not_one_names_its_field(changes: dict[str, Any], field: str) -> None:
    with pytest.raises(BadSummary, match=f"^{field}$"):
        Summary.from_json({**summary_of("hotpotqa"), **changes})


def test_a_summary_before_any_result_has_no_scores_yet() -> None:
    document = {
        **summary_of("hotpotqa"),
        **dict.fromkeys(("em", "f1", "avg_steps", "avg_tokens", "avg_latency_s")),
        "n": 0,
        "stop_reasons": {},
    }
    figures = Summary.from_json(document).figures
    assert (figures.n, figures.em, figures.avg_steps) == (0, None, None)
