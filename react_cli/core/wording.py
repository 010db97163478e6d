"""How counts, amounts and suggestions are said to the user, the same in every command."""

from __future__ import annotations

from collections.abc import Iterable

from react_cli.core.records import Cost, Usage


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """``1 step``, ``2 steps``, ``0 questions``; ``nouns`` for an irregular plural (retries)."""
    return f"{count:,} {noun}" if count == 1 else f"{count:,} {nouns or noun + 's'}"


def token_text(usage: Usage) -> str:
    """``1,234 tokens``, or ``~1,234 tokens (estimated)`` when the endpoint reported none."""
    if usage.estimated:
        return f"~{usage.total_tokens:,} tokens (estimated)"
    return f"{usage.total_tokens:,} tokens"


def cost_text(cost: Cost) -> str:
    """``cost 0.0123``, or ``cost ~0.0123 (estimated)`` (the currency is the prices')."""
    amount = f"{cost.amount:.6f}".rstrip("0").rstrip(".")
    return f"cost ~{amount} (estimated)" if cost.estimated else f"cost {amount}"


ECHO_CHARS = 60
"""An error message echoes at most this much of a value it refuses (a 100 kB front-matter
line, a trace's field): enough to recognise it, never a screenful."""
PATH_CHARS = 4096
"""A path is echoed whole up to the longest one Linux opens (PATH_MAX): a file is named."""


def clipped(text: str, limit: int = ECHO_CHARS) -> str:
    """``text`` as an error message echoes it: cut to ``limit`` characters, saying how long
    it was (``abc… (100,000 characters)``)."""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters)"


def quoted(value: object, limit: int = ECHO_CHARS) -> str:
    """A refused value, quoted (``'fever'``, ``[1, 2]``) and cut as :func:`clipped` cuts it."""
    if not isinstance(value, str):
        return clipped(repr(value), limit)
    if len(value) <= limit:
        return repr(value)
    return f"{value[:limit]!r}… ({len(value):,} characters)"


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """``modle (did you mean model?)`` for a misspelt name; the word alone if nothing is close
    (a long one cut, see :func:`clipped`)."""
    import difflib

    close = difflib.get_close_matches(word, list(known), n=1) if len(word) <= 100 else []
    return f"{clipped(word)} (did you mean {close[0]}?)" if close else clipped(word)
