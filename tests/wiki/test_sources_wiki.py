"""Where the backends say a page came from (issue 22): MediaWiki's revision of the text, asked in
the request that gives the text; a ZIM archive's name, UUID, date and entry; an archive built
from HotpotQA keeps each paragraph's sentences, so sentence ids are HotpotQA's own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import requests
from fake_mediawiki import FakeMediaWiki, Fault
from zim_fixtures import build_archive

from react_cli.core.errors import UsageError, WikiError
from react_cli.core.sources import SentenceIds, Wiki, WikiKind
from react_cli.infra.deadline import NO_DEADLINE
from react_cli.infra.http import make_session, user_agent
from react_cli.tools.wikipedia import Wikipedia
from react_cli.wiki.mediawiki import MediaWikiBackend
from react_cli.wiki.zim import open_zim
from react_cli.wiki.zimbuild import build_zim

HOTPOT = Path(__file__).resolve().parents[1] / "fixtures" / "hotpotqa" / "distractor_first2.json"


def backend(fake: FakeMediaWiki, host: str | None = None, **kwargs: str) -> MediaWikiBackend:
    session = make_session(user_agent("tests@example.org"))
    return MediaWikiBackend(host or fake.url, session, 5.0, **kwargs)


def test_the_revision_comes_in_the_request_that_gives_the_text(wiki: FakeMediaWiki) -> None:
    found = backend(wiki).search("Celtuce", deadline=NO_DEADLINE)
    article = found.article
    assert article is not None and len(wiki.requests) == 1
    assert wiki.requests[0]["params"]["prop"] == "extracts|pageprops|info"
    assert article.revision == 575687826  # the recorded lastrevid of the recorded extract
    assert article.wiki == Wiki(WikiKind.MEDIAWIKI, host=wiki.url.split("//")[1], language="en")
    assert article.url == f"{wiki.url}/w/index.php?title=Celtuce&oldid=575687826"


def test_a_near_match_revision_is_the_page_found(wiki: FakeMediaWiki) -> None:
    found = backend(wiki).search("New York Times", deadline=NO_DEADLINE)  # a redirect
    assert found.article is not None and found.article.title == "The New York Times"
    assert found.article.revision == wiki.revision("The New York Times")


def test_the_url_has_no_credentials_and_keeps_the_variant(wiki: FakeMediaWiki) -> None:
    host = wiki.url.replace("http://", "http://user:secret@")
    article = backend(wiki, host, variant="zh-cn").search("Chess", deadline=NO_DEADLINE).article
    assert article is not None and article.url is not None
    assert article.url == f"{wiki.url}/w/index.php?title=Chess&oldid=746704244&variant=zh-cn"
    assert "secret" not in json.dumps(article.wiki.to_json() if article.wiki else {})


def test_a_host_that_sends_no_revision_gives_an_unpinned_link(wiki: FakeMediaWiki) -> None:
    page = {"title": "Old", "extract": "An old wiki's page.", "pageid": 1, "ns": 0}
    wiki.faults.append(Fault(body=json.dumps({"query": {"pages": [page]}})))
    article = backend(wiki).search("Old", deadline=NO_DEADLINE).article
    assert article is not None and article.revision is None
    assert article.url == f"{wiki.url}/w/index.php?title=Old"


@pytest.mark.parametrize(
    ("field", "value"),
    [("lastrevid", "123"), ("lastrevid", -1), ("lastrevid", True), ("pagelanguage", 7)],
)
def test_a_malformed_revision_or_language_is_a_wiki_error(
    wiki: FakeMediaWiki, field: str, value: object
) -> None:
    page = {"title": "Odd", "extract": "Text.", field: value}
    wiki.faults.append(Fault(body=json.dumps({"query": {"pages": [page]}})))
    with pytest.raises(WikiError, match=f"malformed query result \\('{field}' not"):
        backend(wiki).search("Odd", deadline=NO_DEADLINE)


def test_the_fake_serves_revision_ids_as_mediawiki_does(wiki: FakeMediaWiki) -> None:
    """The fake's prop=info answer has the fields of the recorded real ones (see
    /work/shared/data/mediawiki_api: info_Python_programming_language.json)."""
    params = {"action": "query", "format": "json", "formatversion": "2", "prop": "info"}
    params["titles"] = "Python (programming language)"
    page = requests.get(
        f"{wiki.url}/w/api.php",
        params=params,
        timeout=5,
        headers={"User-Agent": "tests@example.org"},
    ).json()["query"]["pages"][0]
    assert page["lastrevid"] == 1345336232 and page["pagelanguage"] == "en"
    assert {"contentmodel", "touched", "length", "pagelanguagedir"} <= page.keys()


# --- ZIM archives ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def hotpot_zim(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("hotpot") / "distractor.zim"
    build_zim(HOTPOT, out)
    return out


def test_an_archive_built_from_hotpotqa_numbers_sentences_as_hotpotqa(hotpot_zim: Path) -> None:
    session = Wikipedia(open_zim(str(hotpot_zim)))
    found = session.search("Shirley Temple", deadline=NO_DEADLINE).source
    assert found is not None and found.sentence_ids is SentenceIds.PAGE
    context = json.loads(HOTPOT.read_text(encoding="utf-8"))[1]["context"]
    paragraph = context["sentences"][context["title"].index("Shirley Temple")]
    assert [(s.index, s.text) for s in found.sentences] == [
        (n, " ".join(text.split())) for n, text in enumerate(paragraph)
    ]
    assert (found.url, found.revision, found.title) == (None, "Shirley_Temple", "Shirley Temple")
    assert found.wiki.kind is WikiKind.ZIM and found.wiki.archive == "distractor.zim"
    assert found.wiki.date is not None and len(found.wiki.uuid or "") == 36
    lookup = session.lookup("Chief of Protocol", deadline=NO_DEADLINE).source
    assert lookup is not None and [s.index for s in lookup.sentences] == [1]


def test_an_archive_page_without_marked_sentences_is_split(tmp_path: Path) -> None:
    archive = build_archive(tmp_path / "plain.zim", {"Plain": "<p>One here. Two there.</p>"})
    source = Wikipedia(open_zim(str(archive))).search("Plain", deadline=NO_DEADLINE).source
    assert source is not None and source.sentence_ids is SentenceIds.SPLIT
    assert [s.text for s in source.sentences] == ["One here.", "Two there."]
    assert (source.wiki.uuid is not None, source.wiki.date) == (True, None)  # no Date metadata


def test_hostile_marked_sentences_stay_text(tmp_path: Path) -> None:
    html = (
        '<div id="mw-content-text"><p><span data-sentence="9">A <b>bold</b> one.</span>'
        '<span data-sentence="x"><span data-sentence>nested</span> two.</span>'
        "<script>alert(1)</script><span data-sentence='-1'>\x1b[31mred.</span></p></div>"
    )
    archive = build_archive(tmp_path / "odd.zim", {"Odd": html})
    source = Wikipedia(open_zim(str(archive))).search("Odd", deadline=NO_DEADLINE).source
    assert source is not None
    assert [(s.index, s.text) for s in source.sentences] == [
        (0, "A bold one."),  # numbered by order, whatever the attribute says
        (1, "nested two."),
        (2, "nested"),
        (3, "\x1b[31mred."),  # kept as text here; cleaned where it is shown
    ]


def test_an_archive_built_from_fever_pages_numbers_sentences_as_fever(tmp_path: Path) -> None:
    """FEVER's Wikipedia dump numbers each page's sentences (``N<TAB>sentence<TAB>links``,
    some numbers skipped); an archive built from it keeps the numbers, so FEVER's evidence
    ids match exactly. The two pages are written here in the dump's format."""
    corpus = tmp_path / "wiki-001.jsonl"
    pages = [
        {
            "id": "Soul_Food_-LRB-film-RRB-",
            "text": "Soul Food is a 1997 film .",
            "lines": "0\tSoul Food is a 1997 film -LRB- a comedy -RRB- .\tSoul Food\n1\t\n"
            "2\tIt was released by Fox 2000 Pictures .\tFox 2000 Pictures",
        },
        {"id": "", "text": "", "lines": ""},  # the dump's first record: no page
    ]
    corpus.write_text("".join(json.dumps(page) + "\n" for page in pages), encoding="utf-8")
    report = build_zim(corpus, tmp_path / "fever.zim")
    assert (report.articles, report.duplicates) == (1, 1)
    session = Wikipedia(open_zim(str(tmp_path / "fever.zim")))
    source = session.search("Soul Food (film)", deadline=NO_DEADLINE).source
    assert source is not None and source.sentence_ids is SentenceIds.PAGE
    assert [(s.index, s.text) for s in source.sentences] == [
        (0, "Soul Food is a 1997 film ( a comedy ) ."),
        (2, "It was released by Fox 2000 Pictures ."),  # sentence 1 is empty in the dump
    ]


def test_a_fever_page_whose_lines_are_not_numbered_is_a_usage_error(tmp_path: Path) -> None:
    corpus = tmp_path / "wiki.jsonl"
    corpus.write_text(json.dumps({"id": "A", "lines": "first\tx"}) + "\n", encoding="utf-8")
    with pytest.raises(UsageError, match="line 1: a FEVER line that does not start with"):
        build_zim(corpus, tmp_path / "out.zim")
