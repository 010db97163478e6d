"""Paired statistics against known values, and ``eval compare`` on real eval folders."""

from __future__ import annotations

import io
import json
import math
import random
from pathlib import Path
from statistics import fmean, stdev
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from share_data import copy_rows

from react_cli.core.errors import UsageError
from react_cli.display.terminal import make_console
from react_cli.share.compare import FlipDirection, compare_evals, comparison_view, flips_view
from react_cli.share.stats import bootstrap_ci, mcnemar_exact, resampled_means

pytest_plugins = ["share_evals"]


@pytest.mark.parametrize(
    ("b", "c", "p"),
    [
        (10, 2, 0.03857421875),  # R: binom.test(2, 12)$p.value; statsmodels mcnemar(exact=True)
        (2, 10, 0.03857421875),
        (0, 5, 0.0625),  # 2 / 2**5
        (1, 7, 0.0703125),  # 2 * (1 + 8) / 2**8
        (6, 6, 1.0),
        (0, 0, 1.0),
        (0, 1, 1.0),
        (3, 12, 0.03515625),  # 2 * (1 + 15 + 105 + 455) / 2**15
    ],
)
def test_mcnemar_exact_known_values(b: int, c: int, p: float) -> None:
    assert mcnemar_exact(b, c) == pytest.approx(p, rel=1e-12)


def test_mcnemar_exact_agrees_with_the_normal_approximation_for_many_pairs() -> None:
    b, c = 5_000, 5_150  # continuity-corrected chi-square with 1 degree of freedom
    chi2 = (abs(b - c) - 1) ** 2 / (b + c)
    assert mcnemar_exact(b, c) == pytest.approx(math.erfc(math.sqrt(chi2 / 2)), rel=0.01)
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 3)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 300), st.integers(0, 300))
def test_mcnemar_is_a_symmetric_probability(b: int, c: int) -> None:
    p = mcnemar_exact(b, c)
    assert 0 < p <= 1 and p == mcnemar_exact(c, b)
    assert mcnemar_exact(b, c + 1) <= p or c < b  # more lopsided is never less significant


def test_bootstrap_is_reproducible_with_a_seed() -> None:
    rng = random.Random(7)
    differences = [rng.choice([-1.0, 0.0, 0.0, 0.5, 1.0]) for _ in range(200)]
    first = bootstrap_ci(differences, seed=0, resamples=2_000)
    assert first == bootstrap_ci(differences, seed=0, resamples=2_000)
    assert first != bootstrap_ci(differences, seed=1, resamples=2_000)
    assert first[0] < fmean(differences) < first[1]


@pytest.mark.parametrize(("n", "resamples"), [(1, 50), (6, 700), (37, 300), (40_000, 3)])
def test_bootstrap_resamples_as_random_choices_would(n: int, resamples: int) -> None:
    """The picks are drawn many resamples at once (a resample a chunk for 40,000 questions),
    and give the means a ``random.choices`` call per resample gives, to the bit."""
    rng = random.Random(n)
    values = [rng.choice([-1.0, 0.0, 0.5, 1.0, 1 / 3]) for _ in range(n)]
    rng.seed(4)
    one_by_one = sorted(sum(rng.choices(values, k=n)) / n for _ in range(resamples))
    assert list(resampled_means(values, seed=4, resamples=resamples)) == one_by_one


def test_bootstrap_of_constant_differences_is_that_constant() -> None:
    assert bootstrap_ci([0.25] * 50, seed=3, resamples=500) == (0.25, 0.25)
    assert bootstrap_ci([1.0], seed=0, resamples=10) == (1.0, 1.0)
    with pytest.raises(ValueError):
        bootstrap_ci([], seed=0)


def test_bootstrap_matches_normal_theory_on_a_large_sample() -> None:
    rng = random.Random(11)
    differences = [rng.gauss(0.1, 0.5) for _ in range(400)]
    low, high = bootstrap_ci(differences, seed=5, resamples=4_000)
    half = 1.959964 * stdev(differences) / math.sqrt(len(differences))
    mean = fmean(differences)
    assert low == pytest.approx(mean - half, abs=0.15 * half)
    assert high == pytest.approx(mean + half, abs=0.15 * half)


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.floats(-1, 1, allow_nan=False), min_size=1, max_size=30),
    st.integers(0, 2**32),
)
def test_bootstrap_bounds_are_ordered_and_within_the_data(values: list[float], seed: int) -> None:
    low, high = bootstrap_ci(values, seed=seed, resamples=200)
    assert min(values) - 1e-9 <= low <= high <= max(values) + 1e-9


def test_two_real_evals_compare_question_by_question(eval_a: Path, eval_b: Path) -> None:
    c = compare_evals(eval_a, eval_b, seed=0)
    assert (c.paired, c.only_a, c.only_b) == (6, 0, 0)
    em, f1 = c.scores
    assert em.name == "em" and (em.a, em.b) == pytest.approx((2 / 6, 5 / 6))
    assert f1.a == pytest.approx((1 + 2 / 3 + 1 + 4 / 7) / 6, abs=1e-6)
    assert f1.b == pytest.approx(5 / 6)
    assert c.count(FlipDirection.RIGHT_TO_WRONG) == 1  # question 2
    assert c.count(FlipDirection.WRONG_TO_RIGHT) == 4  # questions 1, 3, 4, 5
    assert (c.both_right, c.both_wrong) == (1, 0)
    assert c.mcnemar_p == pytest.approx(0.375)  # 2 * (1 + 5) / 2**5
    assert [flip.index for flip in c.flips] == [1, 2, 3, 4, 5]
    assert c.flips[1].answer_a == "The Animorphs" and c.flips[1].answer_b == "Remnants"
    assert c.ci[0] < f1.difference < c.ci[1]
    assert c.ci == compare_evals(eval_a, eval_b, seed=0).ci
    costs = {cost.name: cost for cost in c.costs}
    assert costs["calls"].a == pytest.approx(10 / 6) and costs["calls"].b == pytest.approx(8 / 6)
    assert costs["tokens"].difference < 0 and costs["latency_s"].n == 6


def test_the_json_object_says_it_all(eval_a: Path, eval_b: Path) -> None:
    data: dict[str, Any] = json.loads(json.dumps(compare_evals(eval_a, eval_b, seed=4).to_json()))
    assert data["paired"] == 6 and data["a"]["label"] == "m · hotpotqa"
    assert data["scores"]["em"]["difference"] == pytest.approx(0.5)
    assert data["flips"] == {
        "both_right": 1,
        "both_wrong": 0,
        "right_to_wrong": 1,
        "wrong_to_right": 4,
        "mcnemar_exact_p": 0.375,
    }
    assert data["bootstrap"]["seed"] == 4 and data["bootstrap"]["of"] == "f1 difference"
    assert set(data["per_question"]) == {"tokens", "calls", "latency_s"}
    assert [flip["direction"] for flip in data["flipped"]] == [
        "wrong_to_right",
        "right_to_wrong",
        "wrong_to_right",
        "wrong_to_right",
        "wrong_to_right",
    ]


def test_the_text_shows_scores_flips_and_tests(eval_a: Path, eval_b: Path) -> None:
    c = compare_evals(eval_a, eval_b)
    out = io.StringIO()
    console = make_console(out, stderr=False)
    console.width = 160
    for part in [*comparison_view(c), flips_view(c)]:
        console.print(part)
    text = out.getvalue()
    assert "paired: 6 questions (only in A: 0, only in B: 0)" in text
    (em,) = [line for line in text.splitlines() if line.startswith("EM ")]
    assert em.split() == ["EM", "0.3333", "0.8333", "+0.5000"]
    assert "right → wrong 1, wrong → right 4" in text and "McNemar exact p = 0.375" in text
    assert f"F1 difference {'+' if c.scores[1].difference > 0 else '−'}" in text
    assert "(paired bootstrap, 10,000 resamples, seed 0)" in text
    assert "Remnants" in text and "The Animorphs" in text  # the flips table


def test_questions_pair_by_index_and_text(eval_a: Path, eval_b: Path, tmp_path: Path) -> None:
    def renamed(row: dict[str, Any]) -> dict[str, Any]:
        if row["index"] in (0, 1):
            row["question"] += " (edited)"  # same index, another question: not the same one
        return row

    partial = copy_rows(eval_b, tmp_path / "partial", lambda r: r if r["index"] < 4 else None)
    c = compare_evals(eval_a, copy_rows(partial, tmp_path / "renamed", renamed))
    assert (c.paired, c.only_a, c.only_b) == (2, 4, 2)
    assert [flip.index for flip in c.flips] == [2, 3]


def test_folders_sharing_no_question_are_refused(eval_a: Path, tmp_path: Path) -> None:
    def moved(row: dict[str, Any]) -> dict[str, Any]:
        row["index"] += 100
        return row

    other = copy_rows(eval_a, tmp_path / "other", moved)
    with pytest.raises(
        UsageError, match=r"share no question \(paired by dataset index and question text\)"
    ):
        compare_evals(eval_a, other)


def test_evals_of_different_tasks_are_refused(eval_a: Path, eval_fever: Path) -> None:
    with pytest.raises(UsageError, match=r"scored by em_f1 and .* by accuracy"):
        compare_evals(eval_a, eval_fever)


def test_a_fever_eval_compares_accuracy(eval_fever: Path) -> None:
    c = compare_evals(eval_fever, eval_fever)
    assert [score.name for score in c.scores] == ["accuracy"]
    assert c.mcnemar_p == 1.0 and c.ci == (0.0, 0.0) and c.flips == ()
    assert c.to_json()["bootstrap"]["of"] == "accuracy difference"
