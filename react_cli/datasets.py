"""Evaluation datasets: reading HotpotQA / FEVER / generic files and choosing which rows to run.

Formats (detected from the content, or forced):

- ``hotpotqa``: a JSON list of ``{question, answer, ...}`` (the HotpotQA dev files);
- ``fever``: JSON Lines of ``{claim, label, ...}`` (FEVER ``paper_dev.jsonl``); label accuracy;
- ``jsonl``: JSON Lines of ``{question, answer}``; ``answer`` may be a list of accepted answers.

Every format may come as a JSON list or as JSON Lines; a row is identified by its index in the
file (0-based) and its question text.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from react_cli.errors import UsageError
from react_cli.scoring import fever_label

FORMATS = ("hotpotqa", "fever", "jsonl")
PAPER_SEED = 233
PAPER_POOL = 7405  # ReAct's notebooks shuffle range(7405) (the HotpotQA dev size) for both tasks
PAPER_COUNT = 500


@dataclass(frozen=True)
class Example:
    """One question (or FEVER claim) with its gold answers."""

    index: int
    question: str
    golds: tuple[str, ...]
    id: str | int | None = None


@dataclass(frozen=True)
class Dataset:
    path: Path
    format: str
    examples: list[Example]


def _read_records(path: Path) -> tuple[list[Any], bool]:
    """The file's records and whether it was one JSON list (else JSON Lines)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"no such dataset file: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read dataset {path}: {exc}") from None
    if text.lstrip().startswith("["):
        try:
            records = json.loads(text)
        except json.JSONDecodeError as exc:
            raise UsageError(f"dataset {path}: not JSON ({exc.msg}, line {exc.lineno})") from None
        return records, True
    records = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise UsageError(f"dataset {path} line {number}: not JSON ({exc.msg})") from None
    return records, False


def detect_format(records: list[Any], is_list: bool) -> str:
    """``fever`` if rows have a claim, else ``hotpotqa`` for a JSON list, ``jsonl`` otherwise."""
    first = records[0] if records and isinstance(records[0], dict) else {}
    if "claim" in first:
        return "fever"
    return "hotpotqa" if is_list else "jsonl"


def _example(index: int, record: Any, form: str, path: Path) -> Example:
    where = f"dataset {path} row {index}"
    if not isinstance(record, dict):
        raise UsageError(f"{where}: not a JSON object")
    question_key, gold_key = ("claim", "label") if form == "fever" else ("question", "answer")
    question, gold = record.get(question_key), record.get(gold_key)
    if not isinstance(question, str) or not " ".join(question.split()):
        raise UsageError(f"{where}: no {question_key!r} text (format {form})")
    golds = gold if isinstance(gold, list) else [gold]
    # Numbers are answers too ("answer": 1989): score them as the text they print as.
    golds = [
        str(g) if isinstance(g, (int, float)) and not isinstance(g, bool) else g for g in golds
    ]
    if not golds or not all(isinstance(g, str) for g in golds):
        raise UsageError(f"{where}: {gold_key!r} must be a string, a number or a list of them")
    if form == "fever":
        label = fever_label(golds[0])
        if label is None:
            raise UsageError(f"{where}: unknown FEVER label {golds[0]!r}")
        golds = [label]
    ident = record.get("_id", record.get("id"))
    ident = ident if isinstance(ident, (str, int)) and not isinstance(ident, bool) else None
    return Example(index, " ".join(question.split()), tuple(golds), ident)


def load_dataset(path: Path, form: str | None = None) -> Dataset:
    """Read and validate the whole file; ``form`` forces a format."""
    if form is not None and form not in FORMATS:
        raise UsageError(f"--format must be one of {', '.join(FORMATS)}, not {form!r}")
    records, is_list = _read_records(path)
    if not isinstance(records, list) or not records:
        raise UsageError(f"dataset {path} holds no rows")
    form = form or detect_format(records, is_list)
    examples = [_example(i, record, form, path) for i, record in enumerate(records)]
    return Dataset(path, form, examples)


def paper_indices(size: int) -> list[int]:
    """ReAct's evaluation subset: ``random.Random(233).shuffle(list(range(7405)))``, first 500.

    Both of the paper's notebooks (HotpotQA and FEVER) use this same list of indices.
    """
    if size < PAPER_POOL:
        raise UsageError(
            f"--paper-subset needs the full dev set (at least {PAPER_POOL} rows), "
            f"this dataset has {size}"
        )
    indices = list(range(PAPER_POOL))
    random.Random(PAPER_SEED).shuffle(indices)
    return indices[:PAPER_COUNT]


def select(
    examples: list[Example],
    *,
    offset: int = 0,
    limit: int | None = None,
    shuffle_seed: int | None = None,
    paper_subset: bool = False,
) -> list[Example]:
    """The rows to run: paper subset or all, then shuffled, then ``[offset:offset + limit]``."""
    if offset < 0:
        raise UsageError("--offset must be ≥ 0")
    if limit is not None and limit < 1:
        raise UsageError("--limit must be at least 1")
    if paper_subset and shuffle_seed is not None:
        raise UsageError("--paper-subset and --shuffle-seed contradict each other")
    indices = paper_indices(len(examples)) if paper_subset else list(range(len(examples)))
    if shuffle_seed is not None:
        random.Random(shuffle_seed).shuffle(indices)
    if offset >= len(indices):
        raise UsageError(f"--offset {offset} leaves no questions: the selection has {len(indices)}")
    end = None if limit is None else offset + limit
    return [examples[i] for i in indices[offset:end]]
