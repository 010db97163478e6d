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
_FULL_STOPS = ".。．"
# Words whose final dot belongs to the title: "Sammy Davis Jr.", "Apple Inc.".
_KEEP_DOT = frozenset({"jr", "sr", "inc", "ltd", "co", "corp", "bros", "st", "no", "vs", "mr"})
_LONGEST_KEPT = max(map(len, _KEEP_DOT))  # lower-casing never shortens a word
_SPACED_STOPS_REVERSED = re.compile(r"(?:[.。．] )*")
_WIDE_STOPS_REVERSED = re.compile(r"[。．]*")
# Punctuation that is part of a name: "C#" is not "C", "AT&T" is not "AT T".
_KEEP_PUNCTUATION = frozenset("&#%@*")
_CJK = "\u2e80-\u9fff\uf900-\ufaff"
_CJK_GAP = re.compile(f"(?<=[{_CJK}]) (?=[{_CJK}])")


def clean_entity(entity: str) -> str:
    """``entity`` without surrounding quotes, a trailing full stop or doubled spaces.

    Quotes that belong to the title stay: ``'Allo 'Allo!`` and ``"Weird Al" Yankovic``
    are not wrapped in a pair, so nothing is removed from them. The two ends of one string
    move inward instead of copying it, and what ends the string decides the one step that can
    apply (a closing quote: a pair; a full stop: the stop; a space: the space), so deeply
    nested quotes and stacked full stops cost linear time.
    """
    text = " ".join(entity.split())
    start, end = 0, len(text)
    words = _LastWord(text)
    while True:
        before = start, end
        start, end = _strip_quote_pairs(text, start, end)
        end = words.strip_full_stops(start, end)
        if (start, end) == before:
            return text[start:end]


def _strip_quote_pairs(text: str, start: int, end: int) -> tuple[int, int]:
    """``text[start:end]`` inside every pair of matching quotes around it, outermost first,
    or the span unchanged."""
    while end - start >= 3 and text[end - 1] in QUOTE_PAIRS.get(text[start], ""):
        if text[start + 1].isspace() or text[end - 2].isspace():
            break  # '" a "' is not a quoted title
        opening = text[start]
        if opening in "'’`‘" and not _apostrophes_inside_words(text[start + 1 : end - 1]):
            break  # "'Allo 'Allo'": the opening mark belongs to the title
        if opening == '"' and text.find('"', start + 1, end - 1) >= 0:
            break  # '"Weird Al" Yankovic "Live"': several quoted parts
        start, end = start + 1, end - 1
    return start, end


def _apostrophes_inside_words(text: str) -> bool:
    """Whether every single quote in ``text`` sits between two letters ("I'll")."""
    for i, char in enumerate(text):
        if char in "'’‘`":
            inside = 0 < i < len(text) - 1 and text[i - 1].isalnum() and text[i + 1].isalnum()
            if not inside:
                return False
    return True


class _LastWord:
    """Where the last word before a position of ``text`` starts, and whether it holds a dot.

    The position only ever moves left (the end of what ``clean_entity`` keeps), so the last
    space and the last dot before it are looked for again only once the position has passed
    them: each scan starts where the one before found its character, and all of them together
    read ``text`` once. A run of full stops that go one after the other (" . . .", "x。。。")
    goes in one step, matched in ``text`` reversed (made once, when such a run first ends it).
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.found = {" ": len(text), ".": len(text)}  # the last one before the position
        self.reversed: str | None = None

    def last(self, char: str, position: int) -> int:
        """The index of the last ``char`` before ``position``, or -1."""
        if self.found[char] >= position:
            self.found[char] = self.text.rfind(char, 0, position)
        return self.found[char]

    def run(self, reversed_run: re.Pattern[str], start: int, end: int) -> int:
        """The length of the run ``reversed_run`` matches in ``text[start:end]`` reversed, the
        run that ends it."""
        if self.reversed is None:
            self.reversed = self.text[::-1]
        size = len(self.text)
        matched = reversed_run.match(self.reversed, size - end, size - start)
        return 0 if matched is None else len(matched[0])

    def strip_full_stops(self, start: int, end: int) -> int:
        """The end of ``text[start:end]`` without its final full stops and the space before
        each, unless a dot ends an abbreviation or initial ("Washington, D.C.", "Sammy Davis
        Jr.", "George W.") or an ellipsis."""
        text = self.text
        while end > start and text[end - 1] in _FULL_STOPS:
            if end - start >= 2 and text[end - 2] == " ":  # no word before the full stop
                end -= self.run(_SPACED_STOPS_REVERSED, start, end)
                continue
            if end - start >= 2 and text[end - 2 : end] == "..":
                break
            word = max(start, self.last(" ", end - 1) + 1)
            length = end - 1 - word
            if self.last(".", end - 1) >= word or (length == 1 and text[word].isalpha()):
                break
            if length <= _LONGEST_KEPT and text[word : end - 1].lower() in _KEEP_DOT:
                break
            end -= 1
            # "x。。。": each wide stop after another goes too, judged on the same word
            end -= max(0, self.run(_WIDE_STOPS_REVERSED, word, end) - 1)
        return end


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
