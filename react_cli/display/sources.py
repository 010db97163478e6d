"""A run's sources as ``ask`` prints them on stderr after the answer: one line per page, its
link pinned to the revision shown (a ZIM archive's page: the archive and the entry).

Titles, URLs and archive names come from outside (a wiki's answer, an archive, a trace): each
line is cleaned for the terminal and kept on one line.
"""

from __future__ import annotations

from collections.abc import Sequence

from react_cli.core.sources import PageSource, WikiKind
from react_cli.display.terminal import plain
from react_cli.methods.sources import RunSource
from react_cli.traces.trace import Trace


def where(page: PageSource) -> str:
    """Where a page's text is: its URL at the revision shown, else the ZIM archive and entry
    (else the wiki, and the revision if known)."""
    if page.url:
        return page.url
    if page.wiki.kind == WikiKind.ZIM:
        return f"{page.wiki.name}: {page.revision}"
    return page.wiki.name + ("" if page.revision is None else f" revision {page.revision}")


def source_lines(sources: Sequence[RunSource]) -> list[str]:
    """``Sources:`` and ``[1] Arthur's Magazine — https://…&oldid=123456`` lines; none without
    sources."""
    if not sources:
        return []
    lines = [
        f"[{n}] {source.page.title} — {where(source.page)}" for n, source in enumerate(sources, 1)
    ]
    return ["Sources:", *(" ".join(plain(line).split()) for line in lines)]


def answer_sources(trace: Trace) -> list[str]:
    """The source lines that follow a run's answer (``ask``, and ``replay`` as ``ask`` showed
    it): none without an answer, or for a method that reads no Wikipedia."""
    return source_lines(trace.sources or ()) if trace.run.answer is not None else []
