"""Dataset reading, format detection and question selection (including the paper's subset)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from react_cli.core.errors import UsageError
from react_cli.eval.datasets import Example, Selection, load_dataset, paper_indices, select

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "eval"
HOTPOT = FIXTURES / "hotpotqa_dev_first6.json"
FEVER = FIXTURES / "fever_paper_dev_first6.jsonl"


def write_jsonl(path: Path, rows: list[object]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_detects_hotpotqa_json_list() -> None:
    data = load_dataset(HOTPOT)
    assert data.format == "hotpotqa"
    assert len(data.examples) == 6
    first = data.examples[0]
    assert first == Example(
        0, "Were Scott Derrickson and Ed Wood of the same nationality?", ("yes",)
    )


def test_detects_fever_jsonl_and_keeps_ids() -> None:
    data = load_dataset(FEVER)
    assert data.format == "fever"
    assert data.examples[1].question == "Tilda Swinton is a vegan."
    assert data.examples[1].golds == ("NOT ENOUGH INFO",)
    assert data.examples[1].id == 194462


def test_detects_generic_jsonl_with_several_answers(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "qa.jsonl",
        [
            {"question": " Who?\n", "answer": "Me"},
            {"question": "Where?", "answer": ["NYC", "New York"]},
            {"question": "When?", "answer": 1989},
        ],
    )
    data = load_dataset(path)
    assert data.format == "jsonl"
    assert data.examples[0].question == "Who?"
    assert data.examples[1].golds == ("NYC", "New York")
    assert data.examples[2].golds == ("1989",)


def test_format_can_be_forced(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "qa.jsonl", [{"question": "Who?", "answer": "Me"}])
    assert load_dataset(path, "hotpotqa").format == "hotpotqa"
    with pytest.raises(UsageError, match="no 'claim' text"):
        load_dataset(path, "fever")
    with pytest.raises(UsageError, match="--format must be one of"):
        load_dataset(path, "squad")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "holds no rows"),
        ("[]", "holds no rows"),
        ('{"question": "q", "answer": "a"}\n{"question": \n', "line 2: truncated JSON"),
        ('{"question": "q", "answer": "a"}\n{"question" "q"}\n', "line 2: not JSON"),
        ('[{"question": "q", "answer": "a"}', "truncated JSON"),
        ('{"question": "q", "answer": {"a": 3}}\n', "must be a string, a number or a list"),
        ('{"question": "q", "answer": true}\n', "must be a string, a number or a list"),
        ('{"question": "  ", "answer": "a"}\n', "no 'question' text"),
        ('["q"]', "row 0: not a JSON object"),
        ('{"claim": "c", "label": "MAYBE"}\n', "unknown FEVER label"),
    ],
)
def test_bad_files_are_usage_errors(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "data.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(UsageError, match=message):
        load_dataset(path)


def test_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such dataset file"):
        load_dataset(tmp_path / "nope.json")


def examples(n: int) -> list[Example]:
    return [Example(i, f"q{i}", ("a",)) for i in range(n)]


def test_select_offset_limit_and_shuffle() -> None:
    rows = examples(10)
    assert [e.index for e in select(rows, Selection(offset=2, limit=3))] == [2, 3, 4]
    shuffled = [e.index for e in select(rows, Selection(shuffle_seed=1))]
    assert sorted(shuffled) == list(range(10)) and shuffled != list(range(10))
    assert [e.index for e in select(rows, Selection(shuffle_seed=1, limit=2))] == shuffled[:2]
    assert [e.index for e in select(rows, Selection(offset=9, limit=5))] == [9]


def test_select_refuses_an_offset_past_the_end() -> None:
    """A run of no questions would still write a folder and report EM 0.000."""
    with pytest.raises(UsageError, match="--offset 10 leaves no questions: the selection has 10"):
        select(examples(10), Selection(offset=10))
    with pytest.raises(UsageError, match="--offset 500 leaves no questions: the selection has 500"):
        select(examples(7405), Selection(paper_subset=True, offset=500))


def test_paper_subset_matches_the_react_notebooks() -> None:
    # The FEVER notebook of ysymyth/ReAct printed these question indices, in this order.
    assert paper_indices(7405)[:8] == [3687, 6238, 5388, 3522, 3824, 2866, 1551, 2544]
    indices = paper_indices(9999)
    assert len(indices) == 500 == len(set(indices)) and max(indices) < 7405
    chosen = select(examples(7405), Selection(paper_subset=True, offset=1, limit=2))
    assert [e.index for e in chosen] == [6238, 5388]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"paper_subset": True}, "needs the full dev set"),
        ({"paper_subset": True, "shuffle_seed": 1}, "contradict"),
        ({"limit": 0}, "--limit must be at least 1"),
        ({"offset": -1}, "--offset must be"),
    ],
)
def test_bad_selections(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        select(examples(6), Selection(**kwargs))  # type: ignore[arg-type]
