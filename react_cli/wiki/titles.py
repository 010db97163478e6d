"""Pure functions over the entity a model writes in ``Search[...]``.

``title_query`` and ``case_variants`` give the spelling and the case forms of a title every
backend tries, as Wikipedia titles are case-sensitive after the first letter.

``clean_entity`` removes what models wrap around a title (quotes of any script, a final full
stop, stray spaces) before the lookup. ``fold`` is the comparison key for the one second
chance a miss gets: a search result whose folded title equals the folded query is the same
title written differently (case, compatibility forms, quotes, punctuation). It is an
equality test, never a similarity score, so "Creed (band)" is not "Creed" and "Antić" is
not "Antic".
"""

from __future__ import annotations

import re
import unicodedata

# Opening quote -> closing quotes accepted for it (typographic pairs of many scripts, and
# the mismatched pairs models produce, such as a low-9 opening with an English closing).
QUOTE_PAIRS: dict[str, str] = {
    '"': '"“”',
    "'": "'’",
    "`": "`'’",
    "“": "”“",
    "”": "”",
    "„": "“”",
    "‘": "’‘",
    "’": "’",
    "‚": "‘’",
    "«": "»",
    "»": "«",
    "‹": "›",
    "›": "‹",
    "「": "」",
    "『": "』",
    "《": "》",
    "〈": "〉",
    "〝": "〞〟",
    "＂": "＂",
    "＇": "＇",
}
QUOTES = frozenset("".join(QUOTE_PAIRS) + "".join(QUOTE_PAIRS.values()) + "´")
_FULL_STOPS = (".", "。", "．")
# Words whose final dot belongs to the title: "Sammy Davis Jr.", "Apple Inc.".
_KEEP_DOT = frozenset({"jr", "sr", "inc", "ltd", "co", "corp", "bros", "st", "no", "vs", "mr"})
# Punctuation that is part of a name: "C#" is not "C", "AT&T" is not "AT T".
_KEEP_PUNCTUATION = frozenset("&#%@*")
_CJK = "\u2e80-\u9fff\uf900-\ufaff"
_CJK_GAP = re.compile(f"(?<=[{_CJK}]) (?=[{_CJK}])")


def clean_entity(entity: str) -> str:
    """``entity`` without surrounding quotes, a trailing full stop or doubled spaces.

    Quotes that belong to the title stay: ``'Allo 'Allo!`` and ``"Weird Al" Yankovic``
    are not wrapped in a pair, so nothing is removed from them. Each round moves the two ends
    of one string inward instead of copying it, so deeply nested quotes cost linear time.
    """
    text = " ".join(entity.split())
    span = (0, len(text))
    while True:
        before = span
        span = _strip_full_stop(text, *_strip_quote_pair(text, *span))
        start, end = span
        if end > start and text[end - 1] == " ":  # the space before a removed full stop
            span = (start, end - 1)
        if span == before:
            return text[span[0] : span[1]]


def _strip_quote_pair(text: str, start: int, end: int) -> tuple[int, int]:
    """``text[start:end]`` inside one matching pair of quotes, or the span unchanged."""
    if end - start < 3 or text[end - 1] not in QUOTE_PAIRS.get(text[start], ""):
        return start, end
    if text[start + 1].isspace() or text[end - 2].isspace():
        return start, end  # '" a "' is not a quoted title
    inner = (start + 1, end - 1)
    if text[start] in "'’`‘" and not _apostrophes_inside_words(text[inner[0] : inner[1]]):
        return start, end  # "'Allo 'Allo'": the opening mark belongs to the title
    if text[start] == '"' and text.find('"', *inner) >= 0:
        return start, end  # '"Weird Al" Yankovic "Live"': several quoted parts
    return inner


def _apostrophes_inside_words(text: str) -> bool:
    """Whether every single quote in ``text`` sits between two letters ("I'll")."""
    for i, char in enumerate(text):
        if char in "'’‘`":
            inside = 0 < i < len(text) - 1 and text[i - 1].isalnum() and text[i + 1].isalnum()
            if not inside:
                return False
    return True


def _strip_full_stop(text: str, start: int, end: int) -> tuple[int, int]:
    """``text[start:end]`` without a final full stop, unless the dot ends an abbreviation or
    initial."""
    if not text.endswith(_FULL_STOPS, start, end) or text.endswith(("..", "..."), start, end):
        return start, end
    last = text[max(start, text.rfind(" ", start, end - 1) + 1) : end - 1]
    if "." in last or last.lower() in _KEEP_DOT or (len(last) == 1 and last.isalpha()):
        return start, end  # "Washington, D.C.", "Sammy Davis Jr.", "George W."
    return start, end - 1


def fold(title: str) -> str:
    """Comparison key: NFKC, casefolded, quotes dropped, other punctuation as spaces.

    Letters, digits, accents, symbols ("+") and name-forming marks ("&", "#") are kept, so
    the key never merges names Wikipedia keeps apart ("C++" and "C", "Antić" and "Antic").
    Spaces between CJK characters go, as those scripts write none ("達·芬奇" = "達芬奇").
    """
    text = unicodedata.normalize("NFKC", title).casefold().translate(_FOLD_TABLE)
    return _CJK_GAP.sub("", " ".join(text.split()))


class _FoldTable(dict[int, "str | None"]):
    """``str.translate`` table of ``fold``: quotes dropped, punctuation other than name-forming
    marks as a space. Filled as characters are met (at most ``MAX_ENTRIES``, so a text of every
    code point cannot grow it without end); translate then runs in C, not a Python loop."""

    MAX_ENTRIES = 65_536

    def __missing__(self, code: int) -> str | None:
        char = chr(code)
        punctuation = unicodedata.category(char).startswith("P")
        if char in QUOTES:
            value = None
        else:
            value = " " if punctuation and char not in _KEEP_PUNCTUATION else char
        if len(self) < self.MAX_ENTRIES:
            self[code] = value
        return value


_FOLD_TABLE = _FoldTable()


def folded_match(query: str, titles: list[str]) -> str | None:
    """The first of ``titles`` whose folded form equals the folded ``query``, if any."""
    key = fold(query)
    if not key:
        return None
    return next((title for title in titles if fold(title) == key), None)


def title_query(entity: str) -> str:
    """``entity`` as a title to look up: underscores (as in URLs) and runs of white space
    become single spaces, as every backend's title index spells it."""
    return " ".join(entity.replace("_", " ").split())


def case_variants(entity: str) -> list[str]:
    """The entity as given, then title case, sentence case and upper case, without repeats.

    Wikipedia titles are case-sensitive after the first letter, so "new york city" only
    finds "New York City" through a variant. "|" cannot occur in titles and would split
    the batch, so such entities get no title lookup at all.
    """
    if "|" in entity:
        return []
    words = entity.split(" ")
    forms = [
        entity,
        " ".join(_upper_first(w) for w in words),
        " ".join(_upper_first(w.lower()) for w in words),
        _upper_first(entity.lower()),
        entity.upper(),
    ]
    return list(dict.fromkeys(forms))


def _upper_first(word: str) -> str:
    """Upper-case the first letter, skipping leading punctuation: "(programming" too."""
    for i, char in enumerate(word):
        if char.isalpha():
            return word[:i] + char.upper() + word[i + 1 :]
    return word


_FEVER_BRACKETS = {
    "-LRB-": "(",
    "-RRB-": ")",
    "-LSB-": "[",
    "-RSB-": "]",
    "-LCB-": "{",
    "-RCB-": "}",
    "-COLON-": ":",
}


def fever_title(page: str) -> str:
    """A page name of FEVER's Wikipedia dump as a title: ``Soul_Food_-LRB-film-RRB-`` →
    ``Soul Food (film)``."""
    return " ".join(fever_text(page).replace("_", " ").split())


def fever_text(text: str) -> str:
    """Text of FEVER's dump with its bracket tokens (``-LRB-``, ``-COLON-``, ...) as brackets."""
    for token, bracket in _FEVER_BRACKETS.items():
        text = text.replace(token, bracket)
    return text
