"""Each Search and Lookup observation's source (issue 22): the page, its revision and exactly the
sentences the observation shows; none for a result that shows no page text."""

from __future__ import annotations

import pytest

from react_cli.core.records import ToolCall
from react_cli.core.sources import PageSource, Sentence, SentenceIds, Wiki, WikiKind
from react_cli.core.trajectory import Action, Step
from react_cli.infra.deadline import NO_DEADLINE, Deadline
from react_cli.methods.sources import run_sources
from react_cli.tools.wikipedia import Wikipedia
from react_cli.wiki.base import Article, SearchResult

WIKI = Wiki(WikiKind.MEDIAWIKI, host="en.wikipedia.org", language="en")
SENTENCES = [f"Sentence number {n} of the page is here." for n in range(7)]
PAGE = Article(
    "Page",
    " ".join(SENTENCES[:4]) + "\n== Section ==\n" + " ".join(SENTENCES[4:]),
    wiki=WIKI,
    revision=42,
    url="https://en.wikipedia.org/w/index.php?title=Page&oldid=42",
)
# A page that keeps its own sentence list (a ZIM archive built from HotpotQA): its ids are
# the list's, empty sentences keep their number.
HOTPOT = Article(
    "Scott Derrickson",
    "Scott Derrickson (born July 16, 1966) is an American director. He lives in Los Angeles.",
    wiki=Wiki(WikiKind.ZIM, archive="hotpot.zim", uuid="u", date="2026-12-01"),
    revision="Scott_Derrickson",
    sentences=(
        "Scott Derrickson (born July 16, 1966) is an American director.",
        "  ",
        " He lives in Los Angeles.",
    ),
)


class Backend:
    def search(self, entity: str, *, deadline: Deadline) -> SearchResult:
        if entity == "Page":
            return SearchResult(PAGE)
        if entity == "Scott Derrickson":
            return SearchResult(HOTPOT)
        if entity == "Plain":
            return SearchResult(Article("Plain", "A page of a backend that says nothing of it."))
        if entity == "Many":
            return SearchResult(Article("Many", "Many may refer to:", wiki=WIKI), ["A", "B"], True)
        return SearchResult(None, ["Page"])


def indices(source: PageSource | None) -> list[int]:
    assert source is not None
    return [sentence.index for sentence in source.sentences]


def test_search_and_lookup_sources_name_the_sentences_they_show() -> None:
    session = Wikipedia(Backend())
    found = session.search("Page", deadline=NO_DEADLINE)
    assert found.source == PageSource(
        WIKI,
        "Page",
        PAGE.url,
        42,
        tuple(Sentence(n, text) for n, text in enumerate(SENTENCES[:5])),
        SentenceIds.SPLIT,
    )
    assert indices(session.lookup("number 6", deadline=NO_DEADLINE).source) == [6]
    assert session.lookup("number 6", deadline=NO_DEADLINE).source is None  # No more results.


def test_only_the_sentences_the_cap_leaves_in_sight_are_shown() -> None:
    limit = len(" ".join(SENTENCES[:2])) + 20  # two sentences and the start of a third
    session = Wikipedia(Backend(), max_observation_chars=limit)
    result = session.search("Page", deadline=NO_DEADLINE)
    assert result.observation.endswith(" …")
    assert indices(result.source) == [0, 1, 2]
    tight = Wikipedia(Backend(), max_observation_chars=len(SENTENCES[0]) + 1)
    assert indices(tight.search("Page", deadline=NO_DEADLINE).source) == [0]


def test_results_that_show_no_page_text_have_no_source() -> None:
    session = Wikipedia(Backend())
    assert session.search("Nothing", deadline=NO_DEADLINE).source is None  # a miss
    assert session.search("Many", deadline=NO_DEADLINE).source is None  # disambiguation
    assert session.lookup("x", deadline=NO_DEADLINE).source is None  # no page loaded
    # A backend that says nothing of where a page came from gives no source either.
    assert session.search("Plain", deadline=NO_DEADLINE).source is None


def test_a_page_that_keeps_its_sentences_is_numbered_as_the_page_numbers_them() -> None:
    session = Wikipedia(Backend())
    found = session.search("Scott Derrickson", deadline=NO_DEADLINE)
    assert found.observation == (
        "Scott Derrickson (born July 16, 1966) is an American director. He lives in Los Angeles."
    )
    assert found.source is not None and found.source.sentence_ids is SentenceIds.PAGE
    assert indices(found.source) == [0, 2]  # the empty sentence 1 keeps its number
    assert indices(session.lookup("Los Angeles", deadline=NO_DEADLINE).source) == [2]


def shown_by(index: int, source: PageSource | None) -> Step:
    """A step whose one action's observation showed ``source``."""
    return Step(index, actions=[Action("Search[x]", ToolCall("Search", "x"), source=source)])


@pytest.mark.parametrize(
    ("answer", "supports"),
    [
        ("Sentence number 3", True),
        ("sentence NUMBER 3!", True),  # normalised as for exact match
        ("number 3 of", True),
        ("Sentence number 6", False),  # on the page, but never shown
        ("ence numb", False),  # not whole words
        ("yes", False),
        (None, False),
    ],
)
def test_a_run_source_supports_the_answer_its_shown_sentences_contain(
    answer: str | None, supports: bool
) -> None:
    session = Wikipedia(Backend())
    first = session.search("Page", deadline=NO_DEADLINE)
    again = session.lookup("number 1", deadline=NO_DEADLINE)
    steps = [shown_by(1, first.source), shown_by(2, again.source), Step(3)]
    (source,) = run_sources(steps, answer)  # one page, shown twice
    assert indices(source.page) == [0, 1, 2, 3, 4] and source.supports is supports


def test_punctuation_inside_a_span_does_not_hide_the_answer() -> None:
    shown = PageSource(WIKI, "A", None, 1, (Sentence(0, "Arthur's Magazine (1844-1846) was."),))
    assert [s.supports for s in run_sources([shown_by(1, shown)], "1844")] == [True]
    assert [s.supports for s in run_sources([shown_by(1, shown)], "Arthur's")] == [True]


def test_pages_are_kept_in_the_order_first_seen_each_revision_its_own() -> None:
    def at(title: str, revision: int) -> Step:
        return shown_by(1, PageSource(WIKI, title, None, revision, (Sentence(0, "x y"),)))

    sources = run_sources([at("B", 1), at("A", 1), at("B", 1), at("B", 2)], None)
    assert [(s.page.title, s.page.revision) for s in sources] == [("B", 1), ("A", 1), ("B", 2)]
