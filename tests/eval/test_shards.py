"""Several machines (issue 33): ``eval DATASET --shard I/N`` runs a deterministic part of the
questions, and ``eval merge`` joins the parts. Three shards run as three ``react-cli``
processes at once, merged, equal the unsharded eval row for row (but for the time each took);
merge refuses shards of different settings, a question twice and a missing shard unless
``--partial``."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import REACT_CLI, cli_env
from eval_fakes import EVAL_FIXTURES, HOTPOT_SCRIPTS, PerQuestion, rows_of, summary_of
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI
from inproc import Runner, servers_env

from react_cli.eval.datasets import load_dataset
from react_cli.eval.shard import Shard

DATASET = EVAL_FIXTURES / "hotpotqa_dev_first10.json"
TIMED = ("latency_s",)


def comparable(row: dict[str, Any]) -> dict[str, Any]:
    """A row without what depends on the machine's speed."""
    return {key: value for key, value in row.items() if key not in TIMED}


def test_a_shard_is_the_same_questions_on_every_machine() -> None:
    examples = load_dataset(DATASET).examples
    parts = [[e.index for e in examples if Shard(i, 3).holds(e.id, e.index)] for i in (1, 2, 3)]
    assert sorted(index for part in parts for index in part) == list(
        range(10)
    )  # each question in one part exactly
    assert all(parts)
    # by the question's id, not its place: the same id is in the same part wherever it is
    assert Shard(2, 3).holds("5a8b57f25542995d1e6f1371", 0) == Shard(2, 3).holds(
        "5a8b57f25542995d1e6f1371", 7
    )


@pytest.fixture
def served(wiki: FakeMediaWiki) -> Any:
    with FakeOpenAI(PerQuestion(HOTPOT_SCRIPTS)) as llm:
        yield llm


def test_three_shard_processes_merged_equal_the_unsharded_eval(
    cli: Runner, served: FakeOpenAI, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    cli.config()
    env = servers_env(served, wiki)
    whole = tmp_path / "whole"
    result = cli(["eval", str(DATASET), "--out", str(whole)], **env)
    assert result.code == 0, result.stderr
    shards = [tmp_path / f"part-{i}" for i in (1, 2, 3)]
    processes = [
        subprocess.Popen(
            [*(str(REACT_CLI), "eval", str(DATASET), "--shard", f"{i}/3"), "--out", str(folder)],
            env=cli_env(cli.home, **env),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i, folder in enumerate(shards, 1)
    ]
    for process in processes:
        _, stderr = process.communicate(timeout=60)
        assert process.returncode == 0, stderr
    sizes = [len(rows_of(folder)) for folder in shards]
    assert sum(sizes) == 10 and all(sizes)
    assert summary_of(shards[1])["dataset"]["shard"] == "2/3"
    merged = tmp_path / "merged"
    result = cli(["eval", "merge", *map(str, shards), "--out", str(merged)])
    assert result.code == 0, result.stderr
    assert result.stdout == f"{merged / 'summary.json'}\n"
    assert [comparable(r) for r in rows_of(merged)] == [comparable(r) for r in rows_of(whole)]
    for row in rows_of(merged):
        assert (merged / row["trace"]).is_file()
    mine, theirs = summary_of(merged), summary_of(whole)
    for key in ("n", "em", "f1", "failed", "stop_reasons", "total_tokens", "avg_steps"):
        assert mine[key] == theirs[key], key
    assert mine["status"] == "finished" and "shard" not in mine["dataset"]
    assert mine["dataset"] == theirs["dataset"]
    shown = cli(["eval", "show", str(merged)])
    assert shown.code == 0 and "failure modes" in shown.stdout

    # A missing shard is refused, unless --partial; a question twice, always.
    again = cli(["eval", "merge", str(shards[0]), str(shards[2]), "--out", str(tmp_path / "x")])
    assert again.code == 2
    assert again.stderr.startswith("Error: shards missing or unfinished: 2/3;")
    some = tmp_path / "some"
    partial = cli(
        ["eval", "merge", str(shards[0]), str(shards[2]), "--out", str(some), "--partial"]
    )
    assert partial.code == 0, partial.stderr
    assert summary_of(some)["status"] == "partial"
    assert summary_of(some)["n"] == sizes[0] + sizes[2]
    twice = cli(["eval", "merge", *map(str, shards), str(shards[0]), "--out", str(tmp_path / "y")])
    assert twice.code == 2 and "are both shard 1/3" in twice.stderr


def test_merge_refuses_shards_of_other_settings_and_folders_that_are_no_shards(
    cli: Runner, served: FakeOpenAI, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    cli.config()
    env = servers_env(served, wiki)
    one, two = tmp_path / "one", tmp_path / "two"
    base = ["eval", str(DATASET), "--limit", "4"]
    assert cli([*base, "--shard", "1/2", "--out", str(one)], **env).code == 0
    assert cli([*base, "--shard", "2/2", "--out", str(two), "--max-steps", "2"], **env).code == 0
    refused = cli(["eval", "merge", str(one), str(two), "--out", str(tmp_path / "m")])
    assert refused.code == 2
    assert "are shards of different evals (their settings differs)" in refused.stderr
    rows = rows_of(one)
    assert cli(["eval", "--resume", str(one)], **env).code == 0  # a shard resumes as a shard
    assert summary_of(one)["dataset"]["shard"] == "1/2" and rows_of(one) == rows
    whole = tmp_path / "whole"
    assert cli([*base, "--out", str(whole)], **env).code == 0
    refused = cli(["eval", "merge", str(whole), str(one), "--out", str(tmp_path / "n")])
    assert refused.code == 2 and "is no shard" in refused.stderr
    bad = cli([*base, "--shard", "3/2", "--out", str(tmp_path / "z")], **env)
    assert bad.code == 2 and "I must be from 1 to N (2), not 3" in bad.stderr


def test_merge_refuses_a_question_in_two_shards(
    cli: Runner, served: FakeOpenAI, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    cli.config()
    env = servers_env(served, wiki)
    one, two = tmp_path / "one", tmp_path / "two"
    base = ["eval", str(DATASET), "--limit", "4"]
    assert cli([*base, "--shard", "1/2", "--out", str(one)], **env).code == 0
    assert cli([*base, "--shard", "2/2", "--out", str(two)], **env).code == 0
    stray = rows_of(one)[0]
    with (two / "results.jsonl").open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(stray) + "\n")
    refused = cli(["eval", "merge", str(one), str(two), "--out", str(tmp_path / "m")])
    assert refused.code == 2
    assert f"question {stray['index']} is in both {one} and {two}" in refused.stderr
