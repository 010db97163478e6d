"""The parts of a MediaWiki ``action=query`` answer the backend reads, checked.

The answer is untrusted: anything but the shape the Action API documents is ``Malformed``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class Malformed(ValueError):
    """An answer that is JSON but not of the shape the Action API documents."""


@dataclass(frozen=True)
class Page:
    """A page the answer names, with what the backend asked of it."""

    title: str
    extract: str | None  # None: not sent (several pages matched; extracts come one at a time)
    disambiguation: bool
    links: list[str]
    revision: int | None = None  # ``lastrevid`` (prop=info): the revision the extract is of
    language: str | None = None  # ``pagelanguage`` (prop=info)


@dataclass(frozen=True)
class QueryAnswer:
    """The parts of an ``action=query`` answer the backend reads, checked."""

    pages: dict[str, Page]  # existing pages by title
    normalized: dict[str, str]
    redirects: dict[str, str]
    search: list[str]

    def first_existing(self, wanted: list[str]) -> Page | None:
        """The page for the first of ``wanted`` that exists, after normalisation and redirects."""
        for title in wanted:
            title = self.normalized.get(title, title)
            title = self.redirects.get(title, title)
            if title in self.pages:
                return self.pages[title]
        return None


def read_answer(query: Any) -> QueryAnswer:
    """The checked form of a ``query`` object; ``Malformed`` says what is wrong."""
    if not isinstance(query, dict):
        raise Malformed("not an object")
    pages = {}
    for page in _list(query, "pages"):
        if page.get("missing") or page.get("invalid"):
            continue
        title = _text(page, "title")
        extract = page.get("extract")
        if extract is not None and not isinstance(extract, str):
            raise Malformed(f"an extract of type {type(extract).__name__}")
        props = page.get("pageprops", {})
        if not isinstance(props, dict):
            raise Malformed("pageprops not an object")
        links = [_text(link, "title") for link in _list(page, "links")]
        revision = page.get("lastrevid")
        if revision is not None and (type(revision) is not int or revision < 0):
            raise Malformed("'lastrevid' not a revision id")
        language = page.get("pagelanguage")
        if language is not None and not isinstance(language, str):
            raise Malformed("'pagelanguage' not text")
        disambiguation = "disambiguation" in props
        pages[title] = Page(title, extract, disambiguation, links, revision, language)
    return QueryAnswer(
        pages=pages,
        normalized={_text(n, "from"): _text(n, "to") for n in _list(query, "normalized")},
        redirects={_text(r, "from"): _text(r, "to") for r in _list(query, "redirects")},
        search=[_text(hit, "title") for hit in _list(query, "search")],
    )


def _list(data: dict[str, Any], key: str) -> list[dict[str, Any]]:
    """``data[key]``: a list of objects (missing: empty)."""
    items = data.get(key, [])
    if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
        raise Malformed(f"'{key}' not a list of objects")
    return items


def _text(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str):
        raise Malformed(f"'{key}' missing or not text")
    return value
