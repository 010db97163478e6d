"""Per-run retry counting that reaches every HTTP session without threading a parameter.

The loop opens ``counting_retries()`` around each tool call; the sessions' response hook and
the backends' own re-requests add to it, so a step can record how often Wikipedia was retried.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_RETRIES: ContextVar[list[int] | None] = ContextVar("react_cli_retries", default=None)


@contextmanager
def counting_retries() -> Iterator[list[int]]:
    """Within the block, ``counter[0]`` counts the retries of this context's HTTP requests.

    A context variable, so concurrent runs (eval threads) each count their own.
    """
    counter = [0]
    token = _RETRIES.set(counter)
    try:
        yield counter
    finally:
        _RETRIES.reset(token)


def note_retries(count: int) -> None:
    """Add ``count`` retries to the counter of the enclosing ``counting_retries`` block."""
    counter = _RETRIES.get()
    if counter is not None:
        counter[0] += count
