"""split_sentences: abbreviations, initials, decimals, quotes, citations, CJK, real pages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from react_cli.wiki.sentences import split_sentences

PAGES = json.loads(
    (Path(__file__).resolve().parents[1] / "fixtures" / "wiki" / "pages.json").read_text(
        encoding="utf-8"
    )
)

CASES: list[tuple[str, list[str]]] = [
    ("One. Two.", ["One.", "Two."]),
    ("Is it? Yes! Fine.", ["Is it?", "Yes!", "Fine."]),
    ("He moved to the U.S. in 1990.", ["He moved to the U.S. in 1990."]),
    ("He met Mr. Smith and Dr. Jones.", ["He met Mr. Smith and Dr. Jones."]),
    ("She lived on St. Mark's Place.", ["She lived on St. Mark's Place."]),
    ("Martin Luther King Jr. Day is in January.", ["Martin Luther King Jr. Day is in January."]),
    (
        "It was founded by Apple Inc. The firm grew.",
        ["It was founded by Apple Inc.", "The firm grew."],
    ),
    (
        "Fruit, e.g. Apples, i.e. Malus, etc. are sold.",
        ["Fruit, e.g. Apples, i.e. Malus, etc. are sold."],
    ),
    ("Dogs, cats, etc. The list goes on.", ["Dogs, cats, etc.", "The list goes on."]),
    ("Roe vs. Wade was decided.", ["Roe vs. Wade was decided."]),
    ("Acme Ltd. Sold it.", ["Acme Ltd. Sold it."]),
    ("The book is by J. R. R. Tolkien.", ["The book is by J. R. R. Tolkien."]),
    ("George W. Bush was president.", ["George W. Bush was president."]),
    ("Written by J.R.R. Tolkien in 1937.", ["Written by J.R.R. Tolkien in 1937."]),
    (
        "Pi is about 3.14 and e is 2.718. Both are irrational.",
        ["Pi is about 3.14 and e is 2.718.", "Both are irrational."],
    ),
    ("Wait... what happened? Nothing.", ["Wait... what happened?", "Nothing."]),
    ("One Two Three... Infinity is a book.", ["One Two Three... Infinity is a book."]),
    ("It ranked No. 5 on the chart.", ["It ranked No. 5 on the chart."]),
    (
        "Born on Jan. 5, 1990 in Ohio. Died Dec. 3.",
        ["Born on Jan. 5, 1990 in Ohio.", "Died Dec. 3."],
    ),
    ('He said "Stop." Then he left.', ['He said "Stop."', "Then he left."]),
    ("(This is aside.) Next one.", ["(This is aside.)", "Next one."]),
    (
        "It rose to 7,000 ft (2,130 m).[3] It fell.",
        ["It rose to 7,000 ft (2,130 m).[3]", "It fell."],
    ),
    ("A claim.[citation needed] Another.", ["A claim.[citation needed]", "Another."]),
    ("It ended in 1999. 2000 began.", ["It ended in 1999.", "2000 began."]),
    ('The end. "Quoted start," he said.', ["The end.", '"Quoted start," he said.']),
    ("lowercase after. still same sentence.", ["lowercase after. still same sentence."]),
    ("猫是一种动物。它很可爱！你喜欢吗？", ["猫是一种动物。", "它很可爱！", "你喜欢吗？"]),
    ("「猫だ。」と彼は言った。次へ。", ["「猫だ。」", "と彼は言った。", "次へ。"]),
    ("Python 3.0 was released. It changed.", ["Python 3.0 was released.", "It changed."]),
    ("It is in the U.S. The capital is far.", ["It is in the U.S.", "The capital is far."]),
    ("Smith et al. The study found it.", ["Smith et al.", "The study found it."]),
    ("No terminator here", ["No terminator here"]),
    ("", []),
    ("   \n ", []),
    ("Émile arrived. Élodie left.", ["Émile arrived.", "Élodie left."]),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_split(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


def test_milhouse_named_after_us_president_stays_whole() -> None:
    """The paper's own Lookup example breaks with a naive ". " split."""
    sentences = split_sentences(PAGES["Milhouse"].replace("\n", " "))
    assert sentences[1] == (
        "Milhouse was named after U.S. president Richard Nixon, whose middle name was Milhous."
    )


def test_citation_markers_stay_attached_in_real_page() -> None:
    sentences = split_sentences(PAGES["Adam Clayton Powell (film)"].replace("\n", " "))
    assert sentences == [
        "Adam Clayton Powell is a 1989 American documentary film directed by Richard Kilberg.",
        "The film is about the rise and fall of influential African-American politician "
        "Adam Clayton Powell Jr.[3][4]",
        "It was later aired as part of the PBS series The American Experience.",
    ]


def test_real_abbreviation_var_and_cjk_in_latin_text() -> None:
    sentences = split_sentences(PAGES["Celtuce"].split("\n")[0])
    assert len(sentences) == 2
    assert sentences[0].startswith("Celtuce (Lactuca sativa var. asparagina")
    assert sentences[1].startswith("It is especially popular in China")


def test_real_python_versions_do_not_split() -> None:
    sentences = split_sentences(PAGES["Python (programming language)"])
    assert sentences[:3] == [
        "Python is a high-level, general-purpose programming language.",
        "Its design philosophy emphasizes code readability with the use of significant "
        "indentation.",
        "Python is dynamically type-checked and garbage-collected.",
    ]
    assert (
        "As of 2026, the Python Software Foundation supports Python 3.10, 3.11, 3.12, 3.13, "
        "and 3.14, following the project's annual release cycle and five-year support policy."
    ) in sentences


def test_real_bush_initials() -> None:
    text = "George H. W. Bush (born 1924), the 41st president. George W. Bush followed."
    assert split_sentences(text) == [
        "George H. W. Bush (born 1924), the 41st president.",
        "George W. Bush followed.",
    ]


def test_every_fixture_page_round_trips_its_words() -> None:
    for text in PAGES.values():
        for paragraph in text.split("\n"):
            assert " ".join(split_sentences(paragraph)).split() == paragraph.split()


def test_pathological_input_keeps_its_words() -> None:
    """(Its growth is checked by ``test_pathological.py``, which load cannot fail.)"""
    text = "a." * 5_000 + " " + "U.S. " * 2_000 + "。" * 2_000
    assert " ".join(split_sentences(text)).split() == text.split()
