"""The paper's three actions as a model is told them: Search, Lookup and Finish.

Their specs live apart from the tools that answer them (``wikipedia.py``), so what reads a
reply or a trace (the text protocol's parser, the trace format, the display) knows the
paper's actions without loading a tool that calls Wikipedia.
"""

from __future__ import annotations

from react_cli.tools.base import FINISH, ToolSpec
from react_cli.tools.origin import BUILT_IN

SEARCH = ToolSpec(
    "Search",
    "entity",
    "searches the exact entity on Wikipedia and returns the first paragraph if it exists. "
    "If not, it will return some similar entities to search.",
    origin=BUILT_IN,
)
LOOKUP = ToolSpec(
    "Lookup",
    "keyword",
    "returns the next sentence containing keyword in the current passage.",
    origin=BUILT_IN,
)
"""The paper's words for its two tools (its prompt's instruction says "(1) Search[entity],
which searches ..."), so a prompt that lists the tools from the set reads as the paper's."""

PAPER_TOOLS = (SEARCH, LOOKUP, FINISH)
"""The paper's three actions: what a reply is read against unless a run says otherwise."""

WIKI_CACHED = "wiki_cached"
"""A Search's detail: the cache answered it (no request was made)."""
