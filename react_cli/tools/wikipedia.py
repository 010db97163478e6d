"""The paper's Wikipedia tools: Search and Lookup, one family over one page state.

Search loads an entity's page and shows its first sentences; Lookup shows, one call at a time,
the sentences of that page holding a keyword. Both read the state of one :class:`WikiSession`,
so a run's two tools are made together (:func:`wikipedia_tools`) and never shared between runs.
Backends only answer "which article is this entity?"; everything the model sees (sentence
choice, Lookup numbering, caps, error wording) is decided here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from react_cli.core.errors import WikiError
from react_cli.infra.deadline import Deadline
from react_cli.tools.base import FINISH, NOTHING_NEW, ToolResult, ToolSpec
from react_cli.wiki.base import REQUEST_FAILED, SearchResult, WikiBackend
from react_cli.wiki.sentences import split_sentences
from react_cli.wiki.titles import clean_entity, folded_match

SEARCH_SENTENCES = 5


MAX_SIMILAR = 5


MAX_DISAMBIGUATION = 10


NO_PAGE = "No page is loaded yet: use Search[entity] first, then Lookup[keyword]."


NO_MORE = "No more results."


NO_KEYWORD = "Lookup needs a keyword, e.g. Lookup[born]."


WIKI_CACHED = "wiki_cached"
"""A Search's detail: the cache answered it (no request was made)."""


_CJK_STOPS = ("。", "！", "？", "」", "』")


_CJK_CHAR = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uac00-\ud7af]")


def collapse(text: str) -> str:
    """One line with single spaces: observations are pasted into the prompt as one line."""
    return " ".join(text.split())


def page_sentences(text: str) -> list[str]:
    """The page's sentences, skipping headings and paragraphs of two words or fewer (CJK
    scripts write no spaces: there each character counts as a word)."""
    sentences: list[str] = []
    for paragraph in text.split("\n"):
        words = len(paragraph.split()) + len(_CJK_CHAR.findall(paragraph))
        if _is_heading(paragraph) or words <= 2:
            continue
        sentences.extend(collapse(s) for s in split_sentences(paragraph))
    return sentences


def _is_heading(line: str) -> bool:
    """``== Heading ==`` (any number of ``=``), by its ends: a pattern for it would backtrack
    cubically on a long run of ``=``."""
    line = line.strip()
    return len(line) >= 2 and line[0] == line[-1] == "="


def join_sentences(sentences: list[str]) -> str:
    """Sentences as one line: spaced, except after a CJK full stop (those scripts use none)."""
    text = ""
    for sentence in sentences:
        text += sentence if not text or text.endswith(_CJK_STOPS) else " " + sentence
    return text


def cap(text: str, limit: int) -> str:
    """``text`` collapsed to one line and cut at a word boundary to at most ``limit`` chars."""
    text = collapse(text)
    if len(text) <= limit:
        return text
    cut = text[: max(0, limit - 2)]
    if " " in cut:
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip() + " …"


class WikiSession:
    """The page state Search and Lookup share: the page of the last Search, and where Lookup is."""

    def __init__(self, backend: WikiBackend, *, max_observation_chars: int = 1500) -> None:
        self._backend = backend
        self._limit = max_observation_chars
        self._title: str | None = None
        self._convert: Callable[[str], str] | None = None
        self._sentences: list[str] = []
        self._keyword: str | None = None
        self._hits: list[str] = []
        self._next_hit = 0
        self._loaded: set[str] = set()  # titles Search showed in this run

    def search(self, entity: str, *, deadline: Deadline) -> ToolResult:
        """Load the entity's page and show its first sentences; a miss keeps the old page.

        The entity is cleaned first (quotes, final full stop); on a miss, a search result
        whose folded title equals the folded query is taken as the hit (``folded: true``).
        A failed backend is an observation saying so, and the result's ``error``.
        """
        query = clean_entity(entity)
        try:
            found, folded = self._resolve(query, deadline)
        except WikiError as exc:
            reason = str(exc).removeprefix(REQUEST_FAILED)
            observation = f"Wikipedia is unavailable right now ({reason}); try again or Finish."
            return ToolResult(cap(observation, self._limit), error=str(exc), retries=exc.retries)
        details: dict[str, object] = {"query": query} if query != entity else {}
        if found.cached:
            details[WIKI_CACHED] = True
        if found.disambiguation or found.article is None:
            limit = MAX_DISAMBIGUATION if found.disambiguation else MAX_SIMILAR
            similar = found.similar[:limit]
            details["similar"] = similar
            if found.disambiguation:
                details["disambiguation"] = True
                if found.article is not None:
                    details.update(resolved_title=found.article.title, folded=folded)
            observation = f"Could not find [{entity}]. Similar: {similar!r}."
            return self._result(observation, {**details, NOTHING_NEW: True}, found.retries)
        article = found.article
        if article.title in self._loaded:
            details[NOTHING_NEW] = True
        self._loaded.add(article.title)
        self._title = article.title
        self._convert = article.convert
        self._sentences = page_sentences(article.text)
        self._keyword = None
        details.update(resolved_title=article.title, folded=folded)
        if not self._sentences:
            details[NOTHING_NEW] = True
            return self._result(f"The page {article.title} has no text.", details, found.retries)
        first = join_sentences(self._sentences[:SEARCH_SENTENCES])
        return self._result(first, details, found.retries)

    def _resolve(self, query: str, deadline: Deadline) -> tuple[SearchResult, bool]:
        """The backend's result for ``query``, or for its folded-equal search result (the
        retries of both searches counted)."""
        found = self._backend.search(query, deadline=deadline)
        if found.article is not None or found.disambiguation:
            return found, False
        match = folded_match(query, found.similar)
        if match is None or match == query:
            return found, False
        try:
            second = self._backend.search(match, deadline=deadline)
        except WikiError as exc:
            exc.retries += found.retries
            raise
        retries = found.retries + second.retries
        cached = found.cached and second.cached
        if second.article is None:
            return replace(found, retries=retries, cached=cached), False
        return replace(second, retries=retries, cached=cached), True

    def lookup(self, keyword: str, *, deadline: Deadline) -> ToolResult:
        """Show the next sentence of the current page containing ``keyword`` (any case); a
        local read, so ``deadline`` never matters."""
        if self._title is None:
            return self._result(NO_PAGE, {NOTHING_NEW: True})
        wanted = collapse(keyword)
        wanted = (self._convert(wanted) if self._convert else wanted).lower()
        if not wanted:
            return self._result(NO_KEYWORD, {"resolved_title": self._title, NOTHING_NEW: True})
        if wanted != self._keyword:
            self._keyword = wanted
            self._hits = [s for s in self._sentences if wanted in s.lower()]
            self._next_hit = 0
        details: dict[str, object] = {"resolved_title": self._title, "total": len(self._hits)}
        if self._next_hit >= len(self._hits):
            return self._result(NO_MORE, {**details, NOTHING_NEW: True})
        self._next_hit += 1
        details["result"] = self._next_hit
        sentence = self._hits[self._next_hit - 1]
        return self._result(f"(Result {self._next_hit} / {len(self._hits)}) {sentence}", details)

    def _result(self, observation: str, details: dict[str, object], retries: int = 0) -> ToolResult:
        return ToolResult(cap(observation, self._limit), dict(details), retries=retries)


SEARCH = ToolSpec(
    "Search",
    "entity",
    "searches the exact entity on Wikipedia and returns the first paragraph if it exists. "
    "If not, it will return some similar entities to search.",
)
LOOKUP = ToolSpec(
    "Lookup", "keyword", "returns the next sentence containing keyword in the current passage."
)
"""The paper's words for its two tools (its prompt's instruction says "(1) Search[entity],
which searches ..."), so a prompt that lists the tools from the set reads as the paper's."""

PAPER_TOOLS = (SEARCH, LOOKUP, FINISH)
"""The paper's three actions: what a reply is read against unless a run says otherwise."""


@dataclass(frozen=True)
class _Search:
    session: WikiSession
    spec: ToolSpec = SEARCH

    def call(self, argument: str, *, deadline: Deadline) -> ToolResult:
        return self.session.search(argument, deadline=deadline)


@dataclass(frozen=True)
class _Lookup:
    session: WikiSession
    spec: ToolSpec = LOOKUP

    def call(self, argument: str, *, deadline: Deadline) -> ToolResult:
        return self.session.lookup(argument, deadline=deadline)


def wikipedia_tools(
    backend: WikiBackend, *, max_observation_chars: int = 1500
) -> tuple[_Search, _Lookup]:
    """A run's Search and Lookup over ``backend`` (which many runs may share)."""
    session = WikiSession(backend, max_observation_chars=max_observation_chars)
    return _Search(session), _Lookup(session)
