"""Wikipedia over an in-memory backend: the paper's Search/Lookup observation strings."""

from __future__ import annotations

import pytest

from react_cli.core.errors import WikiError
from react_cli.infra.deadline import NO_DEADLINE, Deadline
from react_cli.tools.wikipedia import PAGE, Wikipedia, cap, page_sentences
from react_cli.wiki.base import Article, SearchResult

COLORADO = Article(
    "Colorado orogeny",
    "The Colorado orogeny was an episode of mountain building (an orogeny) in Colorado and "
    "surrounding areas.\n"
    "== Description ==\n"
    "Overview\n"
    "The eastern sector extends into the High Plains and is called the Central Plains "
    "orogeny. The eastern sector is older. It is in the U.S. state of Colorado.\n"
    "Another sentence here. One more sentence here. And a sixth sentence here.",
)
MILHOUSE = Article(
    "Milhouse Van Houten",
    "Milhouse Mussolini Van Houten is a recurring character.\n"
    "Milhouse was named after U.S. president Richard Nixon, whose middle name was Milhous.",
)


class MemoryBackend:
    """Answers from dicts; raises a queued WikiError when told to."""

    def __init__(self) -> None:
        self.articles = {"Colorado orogeny": COLORADO, "Milhouse": MILHOUSE}
        self.similar = {"Adam Clayton Powell": [f"Title {i}" for i in range(8)]}
        self.disambiguation = {"High Plains": [f"High Plains {i}" for i in range(12)]}
        self.error: WikiError | None = None
        self.calls: list[str] = []

    def search(self, entity: str, *, deadline: Deadline) -> SearchResult:
        self.calls.append(entity)
        if self.error is not None:
            raise self.error
        if entity in self.disambiguation:
            page = Article(entity, "High Plains refers to one of two distinct land regions:")
            return SearchResult(page, self.disambiguation[entity], disambiguation=True)
        if entity in self.articles:
            return SearchResult(self.articles[entity])
        return SearchResult(None, self.similar.get(entity, []))


@pytest.fixture
def backend() -> MemoryBackend:
    return MemoryBackend()


@pytest.fixture
def session(backend: MemoryBackend) -> Wikipedia:
    return Wikipedia(backend)


def test_hit_shows_first_five_sentences_skipping_headings_and_short_lines(
    session: Wikipedia,
) -> None:
    result = session.search("Colorado orogeny", deadline=NO_DEADLINE)
    assert result.observation == (
        "The Colorado orogeny was an episode of mountain building (an orogeny) in Colorado "
        "and surrounding areas. The eastern sector extends into the High Plains and is called "
        "the Central Plains orogeny. The eastern sector is older. It is in the U.S. state of "
        "Colorado. Another sentence here."
    )
    assert result.details == {"resolved_title": "Colorado orogeny", "folded": False}


def test_miss_string_is_exact_with_at_most_five_titles(session: Wikipedia) -> None:
    result = session.search("Adam Clayton Powell", deadline=NO_DEADLINE)
    assert result.observation == (
        "Could not find [Adam Clayton Powell]. Similar: "
        "['Title 0', 'Title 1', 'Title 2', 'Title 3', 'Title 4']."
    )
    assert result.details["similar"] == ["Title 0", "Title 1", "Title 2", "Title 3", "Title 4"]


def test_miss_without_suggestions_keeps_the_format(session: Wikipedia) -> None:
    assert (
        session.search("qmxjsudek", deadline=NO_DEADLINE).observation
        == "Could not find [qmxjsudek]. Similar: []."
    )


def test_miss_keeps_entity_as_written(session: Wikipedia) -> None:
    observation = session.search('"Wallace and Gromit"', deadline=NO_DEADLINE).observation
    assert observation.startswith('Could not find ["Wallace and Gromit"]. Similar: ')


def test_disambiguation_lists_up_to_ten_entries(session: Wikipedia) -> None:
    result = session.search("High Plains", deadline=NO_DEADLINE)
    entries = [f"High Plains {i}" for i in range(10)]
    assert result.observation == f"Could not find [High Plains]. Similar: {entries!r}."
    assert result.details["disambiguation"] is True
    assert result.details["resolved_title"] == "High Plains"


def test_lookup_sequence_numbering_and_end(session: Wikipedia) -> None:
    session.search("Colorado orogeny", deadline=NO_DEADLINE)
    assert session.lookup("eastern sector", deadline=NO_DEADLINE).observation == (
        "(Result 1 / 2) The eastern sector extends into the High Plains and is called the "
        "Central Plains orogeny."
    )
    assert session.lookup("eastern sector", deadline=NO_DEADLINE).observation == (
        "(Result 2 / 2) The eastern sector is older."
    )
    assert session.lookup("eastern sector", deadline=NO_DEADLINE).observation == "No more results."
    assert session.lookup("eastern sector", deadline=NO_DEADLINE).observation == "No more results."


def test_lookup_three_results_and_case_insensitive(session: Wikipedia) -> None:
    session.search("Colorado orogeny", deadline=NO_DEADLINE)
    first = session.lookup("SENTENCE", deadline=NO_DEADLINE)
    assert first.observation == "(Result 1 / 3) Another sentence here."
    assert first.details == {"resolved_title": "Colorado orogeny", "total": 3, "result": 1}
    assert (
        session.lookup("sentence", deadline=NO_DEADLINE).observation
        == "(Result 2 / 3) One more sentence here."
    )
    assert (
        session.lookup("Sentence", deadline=NO_DEADLINE).observation
        == "(Result 3 / 3) And a sixth sentence here."
    )


def test_lookup_keyword_change_restarts(session: Wikipedia) -> None:
    session.search("Colorado orogeny", deadline=NO_DEADLINE)
    session.lookup("eastern sector", deadline=NO_DEADLINE)
    session.lookup("eastern sector", deadline=NO_DEADLINE)
    assert session.lookup("orogeny", deadline=NO_DEADLINE).observation.startswith("(Result 1 / 2) ")
    assert session.lookup("eastern sector", deadline=NO_DEADLINE).observation.startswith(
        "(Result 1 / 2) "
    )


def test_lookup_without_match(session: Wikipedia) -> None:
    session.search("Colorado orogeny", deadline=NO_DEADLINE)
    assert session.lookup("volcano", deadline=NO_DEADLINE).observation == "No more results."


def test_new_search_resets_lookup(session: Wikipedia) -> None:
    session.search("Colorado orogeny", deadline=NO_DEADLINE)
    session.lookup("U.S.", deadline=NO_DEADLINE)
    session.search("Milhouse", deadline=NO_DEADLINE)
    assert session.lookup("U.S.", deadline=NO_DEADLINE).observation == (
        "(Result 1 / 1) Milhouse was named after U.S. president Richard Nixon, whose middle "
        "name was Milhous."
    )
    session.search("Milhouse", deadline=NO_DEADLINE)
    assert session.lookup("U.S.", deadline=NO_DEADLINE).observation.startswith("(Result 1 / 1) ")


def test_miss_and_disambiguation_keep_the_old_page(session: Wikipedia) -> None:
    session.search("Milhouse", deadline=NO_DEADLINE)
    session.search("Nothing here", deadline=NO_DEADLINE)
    session.search("High Plains", deadline=NO_DEADLINE)
    assert session.lookup("named after", deadline=NO_DEADLINE).observation.startswith(
        "(Result 1 / 1) Milhouse"
    )


def test_lookup_before_any_search(session: Wikipedia) -> None:
    assert session.lookup("anything", deadline=NO_DEADLINE).observation == (
        "No page is loaded yet: use Search[entity] first, then Lookup[keyword]."
    )


def test_lookup_empty_keyword(session: Wikipedia) -> None:
    session.search("Milhouse", deadline=NO_DEADLINE)
    assert (
        session.lookup("  ", deadline=NO_DEADLINE).observation
        == "Lookup needs a keyword, e.g. Lookup[born]."
    )


def test_backend_error_becomes_observation(backend: MemoryBackend, session: Wikipedia) -> None:
    session.search("Milhouse", deadline=NO_DEADLINE)
    backend.error = WikiError("Wikipedia request failed: HTTP 503 from en.wikipedia.org")
    result = session.search("Colorado orogeny", deadline=NO_DEADLINE)
    assert result.observation == (
        "Wikipedia is unavailable right now (HTTP 503 from en.wikipedia.org); try again or Finish."
    )
    assert result.error == "Wikipedia request failed: HTTP 503 from en.wikipedia.org"
    assert result.details == {}
    assert session.lookup("named", deadline=NO_DEADLINE).observation.startswith(
        "(Result 1 / 1) Milhouse"
    )


def test_observations_are_capped_at_a_word_boundary(backend: MemoryBackend) -> None:
    words = " ".join(f"word{i}" for i in range(400))
    backend.articles["Long"] = Article("Long", f"{words}.")
    result = Wikipedia(backend, max_observation_chars=100).search("Long", deadline=NO_DEADLINE)
    assert len(result.observation) <= 100
    assert result.observation.endswith(" word14 …")


def test_observations_are_one_line(backend: MemoryBackend, session: Wikipedia) -> None:
    backend.articles["Spaces"] = Article(
        "Spaces", "A  page\twith   odd\u00a0spacing and more words."
    )
    assert (
        session.search("Spaces", deadline=NO_DEADLINE).observation
        == "A page with odd spacing and more words."
    )


def test_empty_page(backend: MemoryBackend, session: Wikipedia) -> None:
    backend.articles["Stub"] = Article("Stub", "== Heading ==\nTwo words")
    assert session.search("Stub", deadline=NO_DEADLINE).observation == "The page Stub has no text."


def test_cap_and_page_sentences_helpers() -> None:
    assert cap("short  text", 50) == "short text"
    assert cap("abcdefghij klmnop", 12) == "abcdefghij …"
    assert page_sentences("== H ==\nTwo words\nThree words here. Four words are here.") == [
        "Three words here.",
        "Four words are here.",
    ]


def test_a_carried_page_is_fetched_by_the_first_lookup_that_needs_it_once() -> None:
    backend = MemoryBackend()
    session = Wikipedia(backend)
    session.resume({PAGE: "Milhouse"})
    assert backend.calls == []  # nothing fetched until a Lookup needs it
    found = session.lookup("Nixon", deadline=NO_DEADLINE)
    assert found.observation.startswith("(Result 1 / 1) Milhouse was named after")
    assert found.details["resolved_title"] == "Milhouse Van Houten"
    session.lookup("Nixon", deadline=NO_DEADLINE)
    assert backend.calls == ["Milhouse"]


def test_a_search_first_drops_the_carried_page_and_a_carried_page_may_be_gone() -> None:
    backend = MemoryBackend()
    session = Wikipedia(backend)
    session.resume({PAGE: "Milhouse"})
    session.search("Colorado orogeny", deadline=NO_DEADLINE)
    looked = session.lookup("eastern", deadline=NO_DEADLINE)
    assert looked.details["resolved_title"] == "Colorado orogeny"
    assert backend.calls == ["Colorado orogeny"]
    gone = Wikipedia(backend)
    gone.resume({PAGE: "No such page"})
    assert gone.lookup("x", deadline=NO_DEADLINE).observation.startswith("No page is loaded")
    failing = Wikipedia(backend)
    failing.resume({PAGE: "Milhouse"})
    backend.error = WikiError("Wikipedia request failed: HTTP 503", retries=2)
    result = failing.lookup("Nixon", deadline=NO_DEADLINE)
    assert result.observation.startswith("Wikipedia is unavailable right now (HTTP 503)")
    assert (result.error, result.retries) == ("Wikipedia request failed: HTTP 503", 2)
