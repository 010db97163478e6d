"""Cleaning and folding of the entities models write in Search[...]."""

from __future__ import annotations

import pytest

from react_cli.wiki.titles import clean_entity, fold, folded_match


@pytest.mark.parametrize(
    ("entity", "cleaned"),
    [
        ('"Wallace and Gromit"', "Wallace and Gromit"),
        ("'Wallace and Gromit'", "Wallace and Gromit"),
        ("“Wallace and Gromit”", "Wallace and Gromit"),
        ("‘Wallace and Gromit’", "Wallace and Gromit"),
        ("«Guerre et Paix»", "Guerre et Paix"),
        ("„Der Process“", "Der Process"),
        ("「千と千尋の神隠し」", "千と千尋の神隠し"),
        ("『红楼梦』", "红楼梦"),
        ("《红楼梦》", "红楼梦"),
        ('  "I\'ll Keep the Lovelight Burning"  ', "I'll Keep the Lovelight Burning"),
        ("'I'll Keep the Lovelight Burning'", "I'll Keep the Lovelight Burning"),
        ("\"'Nested quotes'\"", "Nested quotes"),
        ("Nick Park.", "Nick Park"),
        ('"Nick Park."', "Nick Park"),
        ('"Nick Park".', "Nick Park"),
        ("北京大学。", "北京大学"),
        ("Nick   Park", "Nick Park"),
        ("\tNick\u00a0Park \n", "Nick Park"),
    ],
)
def test_clean_entity_strips_what_models_wrap_around_titles(entity: str, cleaned: str) -> None:
    assert clean_entity(entity) == cleaned


@pytest.mark.parametrize(
    "title",
    [
        "'Allo 'Allo!",
        "'Allo 'Allo'",
        "'Tis Pity She's a Whore",
        '"Weird Al" Yankovic',
        '"Heroes" (David Bowie song)',
        '"Heroes" and "Villains"',
        "Washington, D.C.",
        "Sammy Davis Jr.",
        "Apple Inc.",
        "George W.",
        "One Two Three...",
        "Who's Afraid of Virginia Woolf?",
        "Creed (band)",
        '""',
        '" spaced "',
        "Ray Charles",
    ],
)
def test_clean_entity_keeps_quotes_and_dots_of_the_title(title: str) -> None:
    assert clean_entity(title) == title


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Speed of Sound", "Speed of sound"),
        ('"Wallace and Gromit"', "Wallace and Gromit"),
        ("Wallace and Gromits Cracking Contraptions", "Wallace and Gromit's Cracking Contraptions"),
        ("'Allo 'Allo", "'Allo 'Allo!"),
        ("Spider Man", "Spider-Man"),
        ("J.R.R. Tolkien", "J. R. R. Tolkien"),
        ("St Louis", "St. Louis"),
        ("Python programming language", "Python (programming language)"),
        ("ＡＢＣ Ｎｅｗｓ", "ABC News"),  # full-width forms (NFKC)
        ("Straße", "STRASSE"),  # casefold, not lower
        ("Ǆ", "ǆ"),
        ("列奥纳多·达·芬奇", "列奥纳多达芬奇"),
        ("「千と千尋の神隠し」", "千と千尋の神隠し"),
        ("Москва", "МОСКВА"),
        ("Αθήνα", "ΑΘΉΝΑ"),
    ],
)
def test_fold_equates_the_same_title_written_differently(a: str, b: str) -> None:
    assert fold(a) == fold(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Creed", "Creed (band)"),
        ("Nvidia", "nida"),
        ("Antic", "Antić"),
        ("Jerome Bernard", "Jérôme Bernard"),
        ("C", "C#"),
        ("C", "C++"),
        ("Wallace and Gromit", "Wallace & Gromit"),
        ("AT&T", "AT T"),
        ("Tunisia national team", "Tunisia national football team"),
        ("Spiderman", "Spider-Man"),
        ("红楼梦", "紅樓夢"),  # Simplified vs Traditional is a variant, not a fold
    ],
)
def test_fold_keeps_different_titles_apart(a: str, b: str) -> None:
    assert fold(a) != fold(b)


def test_folded_match_takes_the_first_equal_title_only() -> None:
    recorded = ["Wallace and Gromit", "Wallace & Gromit: The Curse of the Were-Rabbit"]
    assert folded_match("wallace AND gromit", recorded) == "Wallace and Gromit"
    assert folded_match("Creed", ["Creed (band)", "Creed II", "Apollo Creed"]) is None
    assert folded_match("Speed of Sound", ["Speed of sound", "SPEED OF SOUND"]) == "Speed of sound"
    assert folded_match("...", ["...", "Ellipsis"]) is None  # nothing left to compare
    assert folded_match("x", []) is None
