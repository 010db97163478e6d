"""The paper's Wikipedia tools: Search and Lookup, one toolbox over one page state.

Search loads an entity's page and shows its first sentences; Lookup shows, one call at a time,
the sentences of that page holding a keyword. Both are methods of one :class:`Wikipedia` box
(``tools.toolbox``), so a run's tools share its page and are never shared between runs, and a
third tool reading the page is one more method here. Backends only answer "which article is
this entity?"; everything the model sees (sentence choice, Lookup numbering, caps, error
wording) is decided here. So is each observation's source: the page, its revision and the
sentences the observation shows (a result that shows no page text, a miss or a disambiguation
page, has none). In a conversation the page carries over: a follow-up question's first
Lookup, before any Search, reads the page the questions before it loaded last (fetched again
by its title, once).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from react_cli.core.errors import WikiError
from react_cli.core.records import MAX_OBSERVATION_CHARS
from react_cli.core.sources import PageSource, Sentence, SentenceIds
from react_cli.core.trajectory import Step, actions_of
from react_cli.infra.deadline import Deadline
from react_cli.tools.base import NOTHING_NEW, ToolResult
from react_cli.tools.paper import LOOKUP, SEARCH, WIKI_CACHED
from react_cli.tools.toolbox import Toolbox, ToolContext, tool_method
from react_cli.wiki.base import REQUEST_FAILED, Article, SearchResult, WikiBackend
from react_cli.wiki.sentences import split_sentences
from react_cli.wiki.titles import clean_entity, folded_match

if TYPE_CHECKING:
    from react_cli.settings.settings import Settings

SEARCH_SENTENCES = 5


MAX_SIMILAR = 5


MAX_DISAMBIGUATION = 10


NO_PAGE = "No page is loaded yet: use Search[entity] first, then Lookup[keyword]."


NO_MORE = "No more results."


NO_KEYWORD = "Lookup needs a keyword, e.g. Lookup[born]."


PAGE = "page"
"""The key of the page title Search carries into a conversation's next question."""

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


def article_sentences(article: Article) -> tuple[list[Sentence], SentenceIds]:
    """The article's sentences, numbered: the page's own list where it keeps one (empty
    ones skipped, their numbers kept), else :func:`page_sentences` of its text."""
    if article.sentences is not None:
        numbered = enumerate(collapse(text) for text in article.sentences)
        return [Sentence(n, text) for n, text in numbered if text], SentenceIds.PAGE
    split = page_sentences(article.text)
    return [Sentence(n, text) for n, text in enumerate(split)], SentenceIds.SPLIT


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


class Wikipedia(Toolbox):
    """Search and Lookup over one page state: the page of the last Search, and where Lookup
    is in it; on unless ``--no-wiki`` (``wiki_tools``)."""

    def __init__(
        self, backend: WikiBackend, *, max_observation_chars: int = MAX_OBSERVATION_CHARS
    ) -> None:
        self._backend = backend
        self._limit = max_observation_chars
        self._page: Article | None = None
        self._sentences: list[Sentence] = []
        self._ids = SentenceIds.SPLIT
        self._keyword: str | None = None
        self._hits: list[Sentence] = []
        self._next_hit = 0
        self._carried: str | None = None  # the title of a page an earlier question loaded
        self._loaded: set[str] = set()  # titles Search showed in this run

    @classmethod
    def made(cls, context: ToolContext) -> Wikipedia:
        return cls(context.backend(), max_observation_chars=context.max_observation_chars)

    @classmethod
    def enabled(cls, settings: Settings) -> bool:
        return settings.wiki_tools

    @classmethod
    def describe(cls) -> str:
        return "Wikipedia's tools (--no-wiki turns them off)"

    def carried(self, steps: Sequence[Step]) -> dict[str, str]:
        """The page the box's tools read last in ``steps``: ``{"page": title}``."""
        page = self.loaded_page(steps)
        return {} if page is None else {PAGE: page}

    def resume(self, carried: Mapping[str, str]) -> None:
        """Start from the page an earlier question left (its title), loaded by the first
        Lookup that needs it: a run that searches first never fetches it."""
        self._carried = carried.get(PAGE) if self._page is None else None

    @classmethod
    def loaded_page(cls, steps: Sequence[Step]) -> str | None:
        """The title of the page the box's tools read after ``steps`` (a run's, as recorded):
        that of the last step of theirs that showed or read a page; None if none did."""
        family = {spec.name.casefold() for spec in cls.specs()}
        titles = [
            action.details["resolved_title"]
            for action in actions_of(steps)
            if action.call is not None
            and action.call.name.casefold() in family
            and isinstance(action.details.get("resolved_title"), str)
            and not action.details.get("disambiguation")
        ]
        return titles[-1] if titles else None

    @tool_method(SEARCH)
    def search(self, entity: str, *, deadline: Deadline) -> ToolResult:
        """Load the entity's page and show its first sentences; a miss keeps the old page.

        The entity is cleaned first (quotes, final full stop); on a miss, a search result
        whose folded title equals the folded query is taken as the hit (``folded: true``).
        A failed backend is an observation saying so, and the result's ``error``.
        """
        query = clean_entity(entity)
        self._carried = None
        try:
            found, folded = self._resolve(query, deadline)
        except WikiError as exc:
            return self._unavailable(exc)
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
        self._load(article)
        details.update(resolved_title=article.title, folded=folded)
        if not self._sentences:
            details[NOTHING_NEW] = True
            return self._result(f"The page {article.title} has no text.", details, found.retries)
        first = self._sentences[:SEARCH_SENTENCES]
        return self._result("", details, found.retries, shown=first)

    def _unavailable(self, exc: WikiError) -> ToolResult:
        """A backend that failed: an observation saying so, and the result's ``error``."""
        reason = exc.reason.removeprefix(REQUEST_FAILED)
        observation = f"Wikipedia is unavailable right now ({reason}); try again or Finish."
        return ToolResult(cap(observation, self._limit), error=str(exc), retries=exc.retries)

    def _load(self, article: Article) -> None:
        self._page = article
        self._sentences, self._ids = article_sentences(article)
        self._keyword = None

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

    @tool_method(LOOKUP)
    def lookup(self, keyword: str, *, deadline: Deadline) -> ToolResult:
        """Show the next sentence of the current page containing ``keyword`` (any case); a
        local read, but for the page an earlier question carried over, fetched first."""
        retries = 0
        if self._page is None and self._carried is not None:
            title, self._carried = self._carried, None
            try:
                found, _ = self._resolve(title, deadline)
            except WikiError as exc:
                return self._unavailable(exc)
            retries = found.retries
            if found.article is not None and not found.disambiguation:
                self._load(found.article)
        page = self._page
        if page is None:
            return self._result(NO_PAGE, {NOTHING_NEW: True}, retries)
        wanted = collapse(keyword)
        wanted = (page.convert(wanted) if page.convert else wanted).lower()
        if not wanted:
            return self._result(NO_KEYWORD, {"resolved_title": page.title, NOTHING_NEW: True})
        if wanted != self._keyword:
            self._keyword = wanted
            self._hits = [s for s in self._sentences if wanted in s.text.lower()]
            self._next_hit = 0
        details: dict[str, object] = {"resolved_title": page.title, "total": len(self._hits)}
        if self._next_hit >= len(self._hits):
            return self._result(NO_MORE, {**details, NOTHING_NEW: True}, retries)
        self._next_hit += 1
        details["result"] = self._next_hit
        sentence = self._hits[self._next_hit - 1]
        prefix = f"(Result {self._next_hit} / {len(self._hits)}) "
        return self._result(prefix, details, retries, shown=[sentence])

    def _result(
        self,
        text: str,
        details: dict[str, object],
        retries: int = 0,
        *,
        shown: list[Sentence] | None = None,
    ) -> ToolResult:
        """The result showing ``text``, then the ``shown`` sentences of the current page (its
        source: those of them the cap leaves in sight)."""
        observation = text + join_sentences([s.text for s in shown or []])
        capped = cap(observation, self._limit)
        source = self._source(text, shown, capped) if shown else None
        return ToolResult(capped, dict(details), retries=retries, source=source)

    def _source(self, prefix: str, shown: list[Sentence], capped: str) -> PageSource | None:
        """The current page as the source of ``capped``: the sentences that start in sight."""
        page = self._page
        if page is None or page.wiki is None:
            return None
        visible = len(capped.removesuffix(" …"))
        sentences = tuple(
            sentence
            for k, sentence in enumerate(shown)
            if len(prefix + join_sentences([s.text for s in shown[: k + 1]])) - len(sentence.text)
            < visible
        )
        if not sentences:
            return None
        return PageSource(page.wiki, page.title, page.url, page.revision, sentences, self._ids)
