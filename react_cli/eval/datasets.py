"""Evaluation datasets: reading HotpotQA / FEVER / generic files and choosing which rows to run.

Formats (detected from the content, or forced):

- ``hotpotqa``: a JSON list of ``{question, answer, ...}`` (the HotpotQA dev files);
- ``fever``: JSON Lines of ``{claim, label, ...}`` (FEVER ``paper_dev.jsonl``); label accuracy;
- ``jsonl``: JSON Lines of ``{question, answer}``; ``answer`` may be a list of accepted answers.

Every format may come as a JSON list or as JSON Lines; a row is identified by its index in the
file (0-based) and its question text. Rows may carry gold evidence (``eval.gold``): HotpotQA's
``supporting_facts`` (also in ``jsonl`` rows), FEVER's ``evidence``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from react_cli.core.errors import UsageError
from react_cli.core.records import StrEnum
from react_cli.core.wording import quoted
from react_cli.eval.gold import BadGold, fever_gold, hotpot_gold
from react_cli.eval.shard import Shard
from react_cli.infra.untrusted import BadInput, is_json_list, json_records, read_text
from react_cli.methods.evidence import GoldEvidence
from react_cli.methods.scoring import fever_label


class Format(StrEnum):
    """How a dataset file is read and scored (the value is what ``--format`` takes)."""

    HOTPOTQA = "hotpotqa"
    FEVER = "fever"  # claims with a label: label accuracy
    JSONL = "jsonl"


FORMATS = tuple(Format)
PAPER_SEED = 233
PAPER_POOL = 7405  # ReAct's notebooks shuffle range(7405) (the HotpotQA dev size) for both tasks
PAPER_COUNT = 500
MAX_DATASET_BYTES = 1 << 30
"""A larger file is refused before it fills the memory (HotpotQA's training set is 566 MB)."""


@dataclass(frozen=True)
class Example:
    """One question (or FEVER claim) with its gold answers, and its gold evidence if the
    dataset carries it."""

    index: int
    question: str
    golds: tuple[str, ...]
    id: str | int | None = None
    evidence: GoldEvidence | None = None


@dataclass(frozen=True)
class Dataset:
    path: Path
    format: Format
    examples: list[Example]


@dataclass(frozen=True)
class Selection:
    """Which of a dataset's rows an eval runs: the paper's subset or all, then shuffled with
    ``shuffle_seed``, then ``[offset:offset + limit]``, then the questions of its ``shard``."""

    offset: int = 0
    limit: int | None = None
    shuffle_seed: int | None = None
    paper_subset: bool = False
    shard: Shard | None = None  # --shard I/N: this part of the selection alone


def _read_records(path: Path) -> tuple[list[Any], bool]:
    """The file's records and whether it was one JSON list (else JSON Lines)."""
    try:
        text = read_text(path, MAX_DATASET_BYTES)
    except FileNotFoundError:
        raise UsageError(f"no such dataset file: {path}") from None
    except IsADirectoryError:
        raise UsageError(f"dataset {path} is a folder, not a file") from None
    except (OSError, BadInput) as exc:
        raise UsageError(f"cannot read dataset {path}: {exc}") from None
    try:
        return [record for _, record in json_records(text, f"dataset {path}")], is_json_list(text)
    except BadInput as exc:  # not JSON: it says where
        raise UsageError(str(exc)) from None


def detect_format(records: list[Any], is_list: bool) -> Format:
    """``fever`` if rows have a claim, else ``hotpotqa`` for a JSON list, ``jsonl`` otherwise."""
    first = records[0] if records and isinstance(records[0], dict) else {}
    if "claim" in first:
        return Format.FEVER
    return Format.HOTPOTQA if is_list else Format.JSONL


def _example(index: int, record: Any, form: Format, path: Path) -> Example:
    where = f"dataset {path} row {index}"
    if not isinstance(record, dict):
        raise UsageError(f"{where}: not a JSON object")
    fever = form is Format.FEVER
    question_key, gold_key = ("claim", "label") if fever else ("question", "answer")
    question, gold = record.get(question_key), record.get(gold_key)
    if not isinstance(question, str) or not " ".join(question.split()):
        raise UsageError(f"{where}: no {question_key!r} text (format {form})")
    golds = gold if isinstance(gold, list) else [gold]
    # Numbers are answers too ("answer": 1989): score them as the text they print as.
    golds = [
        str(g) if isinstance(g, (int, float)) and not isinstance(g, bool) else g for g in golds
    ]
    texts = [g for g in golds if isinstance(g, str)]
    if not texts or len(texts) != len(golds):
        raise UsageError(f"{where}: {gold_key!r} must be a string, a number or a list of them")
    if fever:
        label = fever_label(texts[0])
        if label is None:
            raise UsageError(f"{where}: unknown FEVER label {quoted(texts[0])}")
        texts = [label]
    ident = record.get("_id", record.get("id"))
    ident = ident if isinstance(ident, (str, int)) and not isinstance(ident, bool) else None
    try:
        evidence = fever_gold(record) if fever else hotpot_gold(record)
    except BadGold as exc:
        raise UsageError(f"{where}: {exc}") from None
    return Example(index, " ".join(question.split()), tuple(texts), ident, evidence)


def load_dataset(path: Path, form: str | None = None) -> Dataset:
    """Read and validate the whole file; ``form`` forces a format."""
    if form is not None and form not in FORMATS:
        raise UsageError(f"--format must be one of {', '.join(FORMATS)}, not {quoted(form)}")
    records, is_list = _read_records(path)
    if not records:
        raise UsageError(f"dataset {path} holds no rows")
    chosen = Format(form) if form is not None else detect_format(records, is_list)
    examples = [_example(i, record, chosen, path) for i, record in enumerate(records)]
    return Dataset(path, chosen, examples)


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


def select(examples: list[Example], selection: Selection) -> list[Example]:
    """The rows ``selection`` names, in the order they run; UsageError if it names none."""
    offset, limit, shuffle_seed = selection.offset, selection.limit, selection.shuffle_seed
    paper_subset = selection.paper_subset
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
    chosen = [examples[i] for i in indices[offset:end]]
    shard = selection.shard
    return chosen if shard is None else [e for e in chosen if shard.holds(e.id, e.index)]
