"""MediaWikiBackend against FakeMediaWiki: title resolution, suggestions, retries, errors."""

from __future__ import annotations

import subprocess
import sys

import pytest
import requests
from fake_mediawiki import UA_BLOCKED, FakeMediaWiki, Fault

from react_cli.core.errors import UsageError, WikiError
from react_cli.infra.deadline import NO_DEADLINE
from react_cli.infra.http import make_session, user_agent
from react_cli.infra.retry import RetryPolicy
from react_cli.tools.wikipedia import Wikipedia
from react_cli.wiki import open_backend
from react_cli.wiki.mediawiki import MAXLAG_RETRIES, MediaWikiBackend, case_variants

FAST = RetryPolicy(retries=2, backoff_factor=0.0, backoff_jitter_s=0.0, max_retry_after_s=0.1)


def backend_for(fake: FakeMediaWiki, timeout_s: float = 5.0, **kwargs: str) -> MediaWikiBackend:
    session = make_session(user_agent("tests@example.org"))
    return MediaWikiBackend(fake.url, session, timeout_s, policy=FAST, **kwargs)


def test_exact_title_is_one_request(wiki: FakeMediaWiki) -> None:
    outcome = backend_for(wiki).search("Python (programming language)", deadline=NO_DEADLINE)
    assert outcome.article is not None
    assert outcome.article.title == "Python (programming language)"
    assert outcome.article.text.startswith("Python is a high-level, general-purpose")
    assert not outcome.disambiguation
    assert len(wiki.requests) == 1
    params = wiki.requests[0]["params"]
    assert params["action"] == "query"
    assert params["format"] == "json"
    assert params["formatversion"] == "2"
    assert params["maxlag"] == "5"
    assert params["srwhat"] == "nearmatch"
    assert params["titles"].split("|")[0] == "Python (programming language)"
    assert "variant" not in params


@pytest.mark.parametrize(
    ("entity", "title"),
    [
        ("python (programming language)", "Python (programming language)"),
        ("new york city", "New York City"),
        ("ALBERT EINSTEIN", "Albert Einstein"),
        ("Nicholas_Ray", "Nicholas Ray"),
        ("  elia   kazan ", "Elia Kazan"),
    ],
)
def test_case_variants_find_the_title_in_one_request(
    wiki: FakeMediaWiki, entity: str, title: str
) -> None:
    outcome = backend_for(wiki).search(entity, deadline=NO_DEADLINE)
    assert outcome.article is not None
    assert outcome.article.title == title
    assert len(wiki.requests) == 1


def test_exact_form_is_preferred_over_other_case_variants() -> None:
    pages = {"Aids": "Aids are helpful devices for many people.", "AIDS": "AIDS is a disease."}
    with FakeMediaWiki(pages) as fake:
        outcome = backend_for(fake).search("AIDS", deadline=NO_DEADLINE)
        assert outcome.article is not None
        assert outcome.article.title == "AIDS"
        assert outcome.article.text == "AIDS is a disease."
        # The fake gave the one whole-article extract to "Aids" (lower page id), so the
        # backend had to fetch the preferred page's extract separately.
        assert len(fake.requests) == 2
        assert fake.requests[1]["params"]["titles"] == "AIDS"


def test_near_match_finds_odd_casing(wiki: FakeMediaWiki) -> None:
    outcome = backend_for(wiki).search("List Of Reference Routes In New York", deadline=NO_DEADLINE)
    assert outcome.article is not None
    assert outcome.article.title == "List of reference routes in New York"
    assert len(wiki.requests) == 2


def test_redirect_is_followed(wiki: FakeMediaWiki) -> None:
    outcome = backend_for(wiki).search("New York Times", deadline=NO_DEADLINE)
    assert outcome.article is not None
    assert outcome.article.title == "The New York Times"
    assert outcome.article.text.startswith("The New York Times (sometimes abbreviated to NYT)")


def test_near_match_on_a_redirect_is_followed(wiki: FakeMediaWiki) -> None:
    outcome = backend_for(wiki).search("new york times BEST-SELLER", deadline=NO_DEADLINE)
    assert outcome.article is not None
    assert outcome.article.title == "The New York Times Best Seller list"


def test_miss_gives_up_to_five_similar_titles(wiki: FakeMediaWiki) -> None:
    outcome = backend_for(wiki).search("Adam Clayton Powell", deadline=NO_DEADLINE)
    assert outcome.article is None
    assert outcome.similar == [
        "Adam Clayton Powell III",
        "Seventh Avenue (Manhattan)",
        "Adam Clayton Powell Jr. State Office Building",
        "Isabel Washington Powell",
        "Adam Powell",
    ]
    assert len(wiki.requests) == 2
    search = wiki.requests[1]["params"]
    assert search["srlimit"] == "5"
    assert "srwhat" not in search


def test_miss_with_no_results(wiki: FakeMediaWiki) -> None:
    outcome = backend_for(wiki).search("qmxjsudek", deadline=NO_DEADLINE)
    assert outcome.article is None
    assert outcome.similar == []


def test_disambiguation_entries_in_page_order(wiki: FakeMediaWiki) -> None:
    outcome = backend_for(wiki).search("bush", deadline=NO_DEADLINE)
    assert outcome.disambiguation
    assert outcome.article is not None
    assert outcome.article.title == "Bush"
    assert outcome.similar[:4] == [
        "Bush (plant)",
        "George H. W. Bush",
        "George W. Bush",
        "Jeb Bush",
    ]
    links = wiki.requests[-1]["params"]
    assert links["prop"] == "links"
    assert links["plnamespace"] == "0"


def test_session_over_fake_wikipedia(wiki: FakeMediaWiki) -> None:
    session = Wikipedia(backend_for(wiki))
    hit = session.search("milhouse", deadline=NO_DEADLINE)
    assert hit.observation.startswith("Milhouse Mussolini Van Houten is a recurring character")
    assert hit.details == {"resolved_title": "Milhouse", "folded": False}
    assert session.lookup("named after", deadline=NO_DEADLINE).observation == (
        "(Result 1 / 1) Milhouse was named after U.S. president Richard Nixon, whose middle "
        "name was Milhous."
    )
    dodge = session.search("Dodge Ram (disambiguation)", deadline=NO_DEADLINE).observation
    assert dodge.startswith("Could not find [Dodge Ram (disambiguation)]. Similar: ['Dodge Ram")


def test_our_user_agent_is_sent(wiki: FakeMediaWiki) -> None:
    backend_for(wiki).search("Chess", deadline=NO_DEADLINE)
    agent = wiki.requests[0]["headers"]["User-Agent"]
    assert agent.startswith("react-cli/")
    assert "tests@example.org" in agent


def test_library_default_user_agent_is_refused(wiki: FakeMediaWiki) -> None:
    response = requests.get(f"{wiki.url}/w/api.php", params={"action": "query"}, timeout=5)
    assert response.status_code == 403
    assert response.text == UA_BLOCKED
    backend = MediaWikiBackend(wiki.url, requests.Session(), 5.0)
    with pytest.raises(WikiError, match=r"HTTP 403 from 127\.0\.0\.1:\d+: Please set a user-agent"):
        backend.search("Chess", deadline=NO_DEADLINE)


def test_503_with_retry_after_then_success(wiki: FakeMediaWiki) -> None:
    wiki.faults.append(Fault(status=503, headers={"Retry-After": "0"}))
    outcome = backend_for(wiki).search("Chess", deadline=NO_DEADLINE)
    assert outcome.article is not None
    assert len(wiki.requests) == 2


def test_maxlag_then_success(wiki: FakeMediaWiki) -> None:
    wiki.faults.append(Fault(api_error="maxlag", headers={"Retry-After": "0"}))
    outcome = backend_for(wiki).search("Chess", deadline=NO_DEADLINE)
    assert outcome.article is not None
    assert len(wiki.requests) == 2


def test_persistent_maxlag_is_bounded(wiki: FakeMediaWiki) -> None:
    wiki.faults.extend(Fault(api_error="maxlag", headers={"Retry-After": "0"}) for _ in range(9))
    with pytest.raises(WikiError, match="API error 'maxlag'"):
        backend_for(wiki).search("Chess", deadline=NO_DEADLINE)
    assert len(wiki.requests) == MAXLAG_RETRIES + 1


def test_other_api_errors_fail_at_once(wiki: FakeMediaWiki) -> None:
    wiki.faults.append(Fault(api_error="readonly"))
    with pytest.raises(WikiError, match=r"API error 'readonly' from 127\.0\.0\.1:\d+: Injected"):
        backend_for(wiki).search("Chess", deadline=NO_DEADLINE)
    assert len(wiki.requests) == 1


def test_persistent_500_is_a_one_line_wiki_error(wiki: FakeMediaWiki) -> None:
    wiki.faults.extend(Fault(status=500) for _ in range(5))
    with pytest.raises(WikiError) as caught:
        backend_for(wiki).search("Chess", deadline=NO_DEADLINE)
    message = str(caught.value)
    assert message == f"Wikipedia request failed: HTTP 500 from {wiki.url.removeprefix('http://')}"
    assert caught.value.__cause__ is None
    assert len(wiki.requests) == 1 + FAST.retries


def test_non_json_body_is_a_wiki_error(wiki: FakeMediaWiki) -> None:
    wiki.faults.append(Fault(body="<html>not json</html>"))
    with pytest.raises(WikiError, match="did not answer with a JSON object"):
        backend_for(wiki).search("Chess", deadline=NO_DEADLINE)


def test_timeout_is_a_quick_wiki_error(wiki: FakeMediaWiki) -> None:
    wiki.faults.extend(Fault(delay_s=2) for _ in range(FAST.retries + 1))
    with pytest.raises(WikiError, match=r"no answer from 127\.0\.0\.1:\d+ within 0\.1s"):
        backend_for(wiki, timeout_s=0.1).search("Chess", deadline=NO_DEADLINE)
    assert len(wiki.requests) == FAST.retries + 1  # each cut at 0.1 s, none waited 2 s for


def test_unreachable_host_is_a_wiki_error() -> None:
    fake = FakeMediaWiki({}).start()
    url = fake.url
    fake.stop()
    backend = MediaWikiBackend(url, make_session(user_agent()), 1.0, policy=RetryPolicy(0))
    with pytest.raises(WikiError, match=r"cannot reach 127\.0\.0\.1:\d+ \(connection refused\)"):
        backend.search("Chess", deadline=NO_DEADLINE)


def test_variant_is_passed(wiki: FakeMediaWiki) -> None:
    backend_for(wiki, variant="zh-cn").search("Adam Clayton Powell", deadline=NO_DEADLINE)
    assert [r["params"]["variant"] for r in wiki.requests] == ["zh-cn", "zh-cn"]


def test_case_variants() -> None:
    assert case_variants("new york city") == [
        "new york city",
        "New York City",
        "New york city",
        "NEW YORK CITY",
    ]
    assert case_variants("python (programming language)")[1] == "Python (Programming Language)"
    assert case_variants("a|b") == []


def test_open_backend_http_url(wiki: FakeMediaWiki) -> None:
    backend = open_backend(wiki.url + "/", contact="me@example.org", policy=FAST, timeout_s=2)
    outcome = backend.search("Chess", deadline=NO_DEADLINE)
    assert outcome.article is not None
    assert "me@example.org" in wiki.requests[0]["headers"]["User-Agent"]


@pytest.mark.parametrize("spec", ["enwiki", "ftp://example.org", "http://"])
def test_open_backend_rejects_other_specs(spec: str) -> None:
    with pytest.raises(UsageError, match=r"e\.g\. https://en\.wikipedia\.org"):
        open_backend(spec)


def test_wiki_package_import_is_light() -> None:
    code = (
        "import sys, react_cli.wiki; "
        "bad = [m for m in ('requests', 'bs4', 'urllib3') if m in sys.modules]; "
        "sys.exit(str(bad) if bad else 0)"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_search_returns_the_retries_it_made_even_when_it_fails(wiki: FakeMediaWiki) -> None:
    wiki.faults.append(Fault(status=503))
    assert backend_for(wiki).search("Chess", deadline=NO_DEADLINE).retries == 1
    wiki.faults.extend(Fault(status=500) for _ in range(5))
    failed = Wikipedia(backend_for(wiki)).search("Chess", deadline=NO_DEADLINE)
    assert failed.retries == FAST.retries and failed.error is not None
    assert failed.error.startswith("Wikipedia request failed: HTTP 500 from ")
