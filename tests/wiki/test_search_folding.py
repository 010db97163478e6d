"""Search cleaning and folding against a local host serving real recorded search results."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from fake_mediawiki import FIXTURES, FakeMediaWiki
from fake_openai import FakeOpenAI, scripted
from inproc import Runner, actions

from react_cli.infra.deadline import NO_DEADLINE
from react_cli.infra.http import make_session, user_agent
from react_cli.infra.retry import RetryPolicy
from react_cli.tools.wikipedia import Wikipedia
from react_cli.wiki.mediawiki import MediaWikiBackend
from react_cli.wiki.titles import clean_entity

RECORDED = json.loads((FIXTURES / "folding.json").read_text(encoding="utf-8"))
VARIANT = "Wallace & Gromit - The Curse of the Were Rabbit"


def stand_in_text(title: str) -> str:
    return f"{title} is a page of the stand-in host. It has a second sentence."


@pytest.fixture(scope="module")
def host() -> Iterator[FakeMediaWiki]:
    """Every recorded result title is a page; search answers the recorded lists."""
    titles = {title for row in RECORDED for title in row["similar"]}
    results = {clean_entity(row["argument"]): row["similar"] for row in RECORDED}
    # A spelling no recorded run used: Wikipedia's search ranks the same titles for it.
    results[VARIANT] = results["Wallace and Gromit"]
    with FakeMediaWiki({t: stand_in_text(t) for t in titles}, search_results=results) as fake:
        yield fake


@pytest.fixture
def session(host: FakeMediaWiki) -> Wikipedia:
    host.requests.clear()
    backend = MediaWikiBackend(host.url, make_session(user_agent()), 5.0, policy=RetryPolicy(0))
    return Wikipedia(backend)


@pytest.mark.parametrize(
    ("entity", "title"),
    [
        ('"Wallace and Gromit"', "Wallace and Gromit"),
        ('"If You Ever Get Lonely"', "If You Ever Get Lonely"),
        ('"I\'ll Keep the Lovelight Burning"', "I'll Keep the Lovelight Burning"),
        ('"Speed of Sound"', "Speed of sound"),
    ],
)
def test_quoted_titles_recorded_as_misses_now_hit(
    host: FakeMediaWiki, session: Wikipedia, entity: str, title: str
) -> None:
    result = session.search(entity, deadline=NO_DEADLINE)
    assert result.observation == stand_in_text(title)
    assert result.details == {"query": entity.strip('"'), "resolved_title": title, "folded": False}
    assert len(host.requests) == 1
    assert host.requests[0]["params"]["srsearch"] == entity.strip('"')


def test_title_written_differently_is_reached_by_folding(
    host: FakeMediaWiki, session: Wikipedia
) -> None:
    result = session.search(f"{VARIANT}.", deadline=NO_DEADLINE)
    title = "Wallace & Gromit: The Curse of the Were-Rabbit"
    assert result.observation == stand_in_text(title)
    assert result.details == {
        "query": VARIANT,
        "resolved_title": title,
        "folded": True,
    }
    # lookup + near match, the miss's search, then the folded title: one extra request
    assert len(host.requests) == 3
    assert host.requests[2]["params"]["titles"].split("|")[0] == title
    assert (
        session.lookup("second", deadline=NO_DEADLINE).observation
        == "(Result 1 / 1) It has a second sentence."
    )


@pytest.mark.parametrize(
    ("entity", "nearest"),
    [
        ("Jerome Bernard", "Jérôme Bernard"),
        ("Timberwolves", "Minnesota Timberwolves"),
        ("Tunisia national team", "Tunisia national football team"),
    ],
)
def test_true_misses_stay_could_not_find(
    host: FakeMediaWiki, session: Wikipedia, entity: str, nearest: str
) -> None:
    result = session.search(entity, deadline=NO_DEADLINE)
    similar = next(row["similar"][:5] for row in RECORDED if row["argument"] == entity)
    assert nearest in similar
    assert result.observation == f"Could not find [{entity}]. Similar: {similar!r}."
    assert "resolved_title" not in result.details
    assert len(host.requests) == 2


def test_qualified_title_is_not_the_bare_one() -> None:
    pages = {"Creed (band)": stand_in_text("Creed (band)"), "Apollo Creed": "A boxer."}
    with FakeMediaWiki(pages, search_results={"Creed": ["Creed (band)", "Apollo Creed"]}) as fake:
        backend = MediaWikiBackend(fake.url, make_session(user_agent()), 5.0)
        result = Wikipedia(backend).search('"Creed"', deadline=NO_DEADLINE)
    assert (
        result.observation
        == "Could not find [\"Creed\"]. Similar: ['Creed (band)', 'Apollo Creed']."
    )


def test_miss_keeps_the_entity_as_the_model_wrote_it(session: Wikipedia) -> None:
    result = session.search('  "Timberwolves"  ', deadline=NO_DEADLINE)
    assert result.observation.startswith('Could not find [ "Timberwolves" ]. Similar: [')
    assert result.details["query"] == "Timberwolves"


def test_ask_trace_records_the_resolved_title(cli: Runner, host: FakeMediaWiki) -> None:
    script = scripted(
        ' I need the duo.\nAction 1: Search["Wallace and Gromit"]',
        " Found it.\nAction 2: Finish[Nick Park]",
    )
    with FakeOpenAI(script) as llm:
        result = cli.ask(llm, host, question="Who created Wallace and Gromit?")
    assert result.code == 0, result.stderr
    step = actions(cli.trace())[0]
    assert step["observation"] == stand_in_text("Wallace and Gromit")
    assert step["details"] == {
        "query": "Wallace and Gromit",
        "resolved_title": "Wallace and Gromit",
        "folded": False,
    }


def test_bench_replay_on_the_first_recorded_misses() -> None:
    from bench.search_folding import load, replay

    tally = replay(load()[:40])
    assert tally.folded_exact > 0 and tally.reached == tally.folded_exact
    assert tally.wrong_title == 0
    assert tally.still_missing + tally.exact_elsewhere == tally.true_misses
