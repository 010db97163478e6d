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


def prompt_cache_text(usage: Usage) -> str | None:
    """``prompt cache 1,400 tokens (85%)``: the prompt tokens the server's cache answered, as
    it reported them; None when it reported none (nothing shown, not 0)."""
    cached, share = usage.cached_prompt_tokens, usage.cached_share
    if cached is None:
        return None
    return f"prompt cache {cached:,} tokens" + ("" if share is None else f" ({share:.0%})")


def cost_text(cost: Cost) -> str:
    """``cost 0.0123``, or ``cost ~0.0123 (estimated)`` (the currency is the prices')."""
    amount = f"{cost.amount:.6f}".rstrip("0").rstrip(".")
    text = f"cost ~{amount} (estimated)" if cost.estimated else f"cost {amount}"
    return f"{text} ({CACHED_UNPRICED})" if cost.cached_unpriced else text


CACHED_UNPRICED = "cached tokens at the input price: no cached_input price configured"
"""What a cost says when the server reported cached prompt tokens and no price is set for them."""


def byte_text(count: int) -> str:
    """``46.3 MB``, ``812 kB``, ``5 bytes``: a file's size in decimal units, as download tools
    and file managers show it."""
    for unit, size in (("TB", 10**12), ("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if count >= size:
            return f"{count / size:.1f} {unit}"
    return plural(count, "byte")


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


def closest(word: str, known: Iterable[str]) -> str | None:
    """The known name ``word`` most likely misspells, if one is close."""
    import difflib

    close = difflib.get_close_matches(word, list(known), n=1) if len(word) <= 100 else []
    return close[0] if close else None


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """``modle (did you mean model?)`` for a misspelt name; the word alone if nothing is close
    (a long one cut, see :func:`clipped`)."""
    close = closest(word, known)
    return f"{clipped(word)} (did you mean {close}?)" if close else clipped(word)
