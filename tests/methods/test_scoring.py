"""Scoring against worked examples of the official HotpotQA normalisation and F1."""

from __future__ import annotations

import pytest

from react_cli.methods.scoring import (
    NOT_ENOUGH_INFO,
    REFUTES,
    SUPPORTS,
    best_scores,
    exact_match,
    f1_score,
    fever_label,
    normalize_answer,
)


@pytest.mark.parametrize(
    ("text", "normalized"),
    [
        ("The Beatles", "beatles"),
        ("  Arthur's   Magazine ", "arthurs magazine"),
        ("U.S.A.", "usa"),
        ("an apple a day", "apple day"),
        ("theater anthem", "theater anthem"),  # articles only as whole words
        ("A-ha", "aha"),  # punctuation goes first, so "a" is no longer a word
        ("Greenwich Village, New York City", "greenwich village new york city"),
        ("1,000", "1000"),
        ("Café  Münster", "café münster"),
        ("Peter–Paul", "peter–paul"),  # non-ASCII punctuation is kept, as officially
        ("", ""),
    ],
)
def test_normalize_answer(text: str, normalized: str) -> None:
    assert normalize_answer(text) == normalized


@pytest.mark.parametrize(
    ("prediction", "gold", "em", "f1"),
    [
        ("The Beatles", "Beatles", 1.0, 1.0),
        ("Chief of Protocol of the United States", "Chief of Protocol", 0.0, 2 / 3),
        ("Greenwich Village", "Greenwich Village, New York City", 0.0, 4 / 7),
        ("the Eiffel Tower in Paris", "Eiffel Tower", 0.0, 2 / 3),
        ("cat cat", "cat", 0.0, 2 / 3),  # tokens count with multiplicity
        ("dog", "cat", 0.0, 0.0),
        ("yes", "yes", 1.0, 1.0),
        ("Yes.", "yes", 1.0, 1.0),
        ("yes", "no", 0.0, 0.0),
        ("no, it is not", "no", 0.0, 0.0),  # gold is special and differs: F1 0, not 2/5
        ("no", "no way", 0.0, 0.0),  # prediction is special and differs
        ("noanswer", "noanswer", 1.0, 1.0),
        ("the", "a", 1.0, 0.0),  # both normalise to "": equal, but no tokens in common
        (None, "Paris", 0.0, 0.0),
    ],
)
def test_exact_match_and_f1(prediction: str | None, gold: str, em: float, f1: float) -> None:
    assert exact_match(prediction, gold) == em
    assert f1_score(prediction, gold) == pytest.approx(f1)


def test_best_of_several_golds() -> None:
    assert best_scores("NYC", ["New York City", "NYC"]) == (1.0, 1.0)
    em, f1 = best_scores("New York", ["New York City", "York"])
    assert em == 0.0 and f1 == pytest.approx(0.8)


@pytest.mark.parametrize(
    ("answer", "label"),
    [
        ("SUPPORTS", SUPPORTS),
        ("supports.", SUPPORTS),
        ("Supported", SUPPORTS),
        ("REFUTES", REFUTES),
        (" refuted ", REFUTES),
        ("NOT ENOUGH INFO", NOT_ENOUGH_INFO),
        ("not_enough_info", NOT_ENOUGH_INFO),
        ("Not enough information", NOT_ENOUGH_INFO),
        ("NEI", NOT_ENOUGH_INFO),
        ("true", None),
        ("SUPPORTS or REFUTES", None),
        (None, None),
    ],
)
def test_fever_label(answer: str | None, label: str | None) -> None:
    assert fever_label(answer) == label
