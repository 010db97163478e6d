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


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """``modle (did you mean model?)`` for a misspelt name; the word alone if nothing is close."""
    import difflib

    close = difflib.get_close_matches(word, list(known), n=1)
    return f"{word} (did you mean {close[0]}?)" if close else word
