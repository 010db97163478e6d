"""Sentence splitting for Search/Lookup observations.

The paper split on ". ", which cuts "U.S. president" and "George W. Bush" in half and so
hides the very sentence a Lookup was after. This splitter knows abbreviations, initials,
decimals and citation markers, and splits CJK text on 。！？ without needing a space.
It is one regex pass plus constant work per candidate, so it stays linear in the text.
"""

from __future__ import annotations

import re

# A terminator run, then closing quotes/brackets, then citation markers like "[3]" or
# "[citation needed]" that belong to the sentence they follow.
_CANDIDATE = re.compile(
    r"(?P<term>[。！？]+|[.!?…]+)"
    r"[\"'”’»)\]」』）】]*"
    r"(?:\[[^\[\]\n]{1,30}\])*"
)
_OPENERS = frozenset("\"'“‘«(¿¡[「『（")
_LEFT_STRIP = "\"'“‘«([「『（"
_TOKEN_LOOKBACK = 40

# fmt: off
# Never end a sentence: titles, months, Latin and reference abbreviations.
_ABBREVIATIONS = frozenset({
    "mr", "mrs", "ms", "dr", "prof", "st", "mt", "rev", "hon", "gen", "col", "lt", "sgt",
    "capt", "cmdr", "adm", "gov", "sen", "rep", "pres", "fr", "jan", "feb", "mar", "apr",
    "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "vs", "cf", "approx", "ca",
    "fig", "figs", "vol", "vols", "pp", "ed", "eds", "op", "dept", "univ", "est", "ave",
    "blvd", "e.g", "i.e", "viz",
})
# May end a sentence, so they do only before a typical sentence opener.
_MAYBE_FINAL = frozenset({"etc", "inc", "ltd", "co", "corp", "jr", "sr", "al", "bros"})
_SENTENCE_STARTERS = frozenset({
    "The", "A", "An", "It", "He", "She", "They", "We", "I", "This", "That", "These", "Those",
    "There", "In", "On", "At", "As", "By", "For", "From", "After", "Before", "During",
    "Since", "While", "When", "Although", "However", "His", "Her", "Its", "Their", "Our",
})
# fmt: on
_DOTTED = re.compile(r"(?:[^\W\d_]\.)+[^\W\d_]")  # U.S, e.g, J.R.R (final dot excluded)


def split_sentences(text: str) -> list[str]:
    """Split ``text`` into stripped sentences, keeping terminators, quotes and citations."""
    sentences: list[str] = []
    start = 0
    for match in _CANDIDATE.finditer(text):
        end = match.end()
        if _is_boundary(text, match.start(), match.group("term"), end):
            sentence = text[start:end].strip()
            if sentence:
                sentences.append(sentence)
            start = end
    rest = text[start:].strip()
    if rest:
        sentences.append(rest)
    return sentences


def _is_boundary(text: str, term_start: int, term: str, end: int) -> bool:
    """Whether the terminator at ``term_start`` (closing marks up to ``end``) ends a sentence."""
    if term[0] in "。！？":
        return True
    next_start = end
    while next_start < len(text) and text[next_start].isspace():
        next_start += 1
    if next_start == end or next_start == len(text):
        return next_start == len(text)
    first = text[next_start]
    if not (first.isdigit() or first in _OPENERS or (first.isalpha() and not first.islower())):
        return False
    if "…" in term or term.startswith(".."):
        return False  # an ellipsis inside a sentence ("One Two Three... Infinity")
    if term != ".":
        return True
    token = _token_before(text, term_start)
    lower = token.lower()
    if lower in _ABBREVIATIONS:
        return False
    if lower == "no":
        return not first.isdigit()  # "No. 5"
    if lower in _MAYBE_FINAL or _is_initial_or_acronym(token):
        return _next_word(text, next_start) in _SENTENCE_STARTERS
    return True


def _token_before(text: str, index: int) -> str:
    """The word ending at ``index``, without leading quotes or brackets."""
    start = index
    floor = max(0, index - _TOKEN_LOOKBACK)
    while start > floor and not text[start - 1].isspace():
        start -= 1
    return text[start:index].lstrip(_LEFT_STRIP)


def _is_initial_or_acronym(token: str) -> bool:
    """ "W" in "George W. Bush", "U.S", "J.R.R": a dot after them rarely ends a sentence."""
    single = len(token) == 1 and token.isalpha() and token.isupper()
    return single or _DOTTED.fullmatch(token) is not None


def _next_word(text: str, index: int) -> str:
    """The whitespace-delimited word starting at ``index``."""
    end = index
    limit = min(len(text), index + _TOKEN_LOOKBACK)
    while end < limit and not text[end].isspace():
        end += 1
    return text[index:end]
