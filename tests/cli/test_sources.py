"""Sources (issue 22) through the CLI, in-process: every page an answer was shown, pinned to the
revision shown, in ``ask``'s stderr, ``--json``, the trace, both exports, ``replay``; the
re-run on live tools names the pages whose revision changed; hostile titles, URLs and
sentences are cleaned on the terminal."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup
from fake_mediawiki import SYNTHETIC_REVISION, FakeMediaWiki
from fake_openai import FakeOpenAI, scripted
from hostile import cli_fuzz, inject, json_literal, paths
from hypothesis import given
from hypothesis import strategies as st
from inproc import GOOD_RUN, Runner, actions, only_trace, servers_env
from markdown_it import MarkdownIt

from react_cli.share.text import link_target

MARKDOWN = MarkdownIt("commonmark")
REAL_ZIM = Path(__file__).resolve().parents[1] / "fixtures" / "zim"
REAL_ZIM /= "wikipedia_en_ray_charles_2015-06.zim"
ARTHUR = "Arthur's Magazine"
FIRST = "First for Women"
LOOKUP_RUN = (  # a Search, a Lookup on its page, the answer
    " I need to search Arthur's Magazine.\nAction 1: Search[Arthur's Magazine]",
    " When was it started?\nAction 2: Lookup[1844]",
    " It started in 1844.\nAction 3: Finish[1844]",
)


def revision(wiki: FakeMediaWiki, title: str) -> int:
    return wiki.revision(title)


def pinned(wiki: FakeMediaWiki, path_title: str, title: str) -> str:
    """The URL a page of the fake wiki is linked by, at its current revision."""
    return f"{wiki.url}/w/index.php?title={path_title}&oldid={wiki.revision(title)}"


def test_ask_prints_the_sources_after_the_answer_and_json_and_trace_carry_them(
    cli: Runner, wiki: FakeMediaWiki
) -> None:
    with FakeOpenAI(scripted(*GOOD_RUN * 2)) as llm:
        result = cli.ask(llm, wiki)
        as_json = cli.ask(llm, wiki, "--json")
    assert result.code == 0 and result.stdout == f"{ARTHUR}\n"  # the answer alone
    assert result.stderr.splitlines() == [
        "Sources:",
        f"[1] {ARTHUR} — {pinned(wiki, 'Arthur%27s_Magazine', ARTHUR)}",
        f"[2] {FIRST} — {pinned(wiki, 'First_for_Women', FIRST)}",
    ]
    # One request per Search: the revision came with the text it is the revision of.
    hits = [r["params"] for r in wiki.requests if "extracts" in r["params"].get("prop", "")]
    assert len(hits) == 4 and all("info" in p["prop"].split("|") for p in hits)
    summary = json.loads(as_json.stdout)
    arthur, first = summary["sources"]
    assert arthur == {
        "title": ARTHUR,
        "url": pinned(wiki, "Arthur%27s_Magazine", ARTHUR),
        "revision": SYNTHETIC_REVISION + 1029,  # the fake's stable made-up id for this page
        "wiki": {"kind": "mediawiki", "host": wiki.url.split("//")[1], "language": "en"},
        "sentences": [{"index": 0, "text": wiki.pages[ARTHUR]}],  # its one sentence
        "sentence_ids": "split",
        "supports": True,  # its sentence holds the answer
    }
    assert first["title"] == FIRST and first["supports"] is False
    assert [s["index"] for s in first["sentences"]] == [0, 1]
    assert first["revision"] == revision(wiki, FIRST)
    traces = sorted((cli.home / "traces").glob("*.json"))
    trace = json.loads(traces[-1].read_text(encoding="utf-8"))
    assert trace["sources"] == summary["sources"]
    steps = actions(trace)
    assert steps[0]["source"]["title"] == ARTHUR and steps[1]["source"]["title"] == FIRST
    assert "source" not in steps[2]  # Finish shows no page


def test_a_recorded_revision_id_is_served_and_linked(cli: Runner, wiki: FakeMediaWiki) -> None:
    script = (
        " Search it.\nAction 1: Search[Python (programming language)]",
        " Done.\nAction 2: Finish[Guido van Rossum]",
    )
    with FakeOpenAI(scripted(*script)) as llm:
        result = cli.ask(llm, wiki, "--json", question="Who created Python?")
    (source,) = json.loads(result.stdout)["sources"]
    assert source["revision"] == 1345336232  # lastrevid as Wikipedia recorded it (2026-03)
    assert source["url"].endswith("?title=Python_%28programming_language%29&oldid=1345336232")
    assert [s["index"] for s in source["sentences"]] == [0, 1, 2, 3, 4]


def test_a_lookup_adds_the_sentence_it_showed_to_its_page(cli: Runner, wiki: FakeMediaWiki) -> None:
    with FakeOpenAI(scripted(*LOOKUP_RUN)) as llm:
        result = cli.ask(llm, wiki, "--json")
    summary = json.loads(result.stdout)
    (source,) = summary["sources"]  # one page, shown twice
    steps = actions(summary)
    assert steps[1]["source"]["sentences"] == [steps[0]["source"]["sentences"][0]]
    assert [s["index"] for s in source["sentences"]] == [0]
    assert source["supports"] is True  # "1844" is in the sentence shown


def test_methods_without_wikipedia_have_no_sources(cli: Runner, wiki: FakeMediaWiki) -> None:
    with FakeOpenAI(scripted(" 1 + 1 is 2.\nAnswer: 2")) as llm:  # the same reply twice
        result = cli.ask(llm, wiki, "--method", "cot", "--json", question="What is 1 + 1?")
        plain = cli.ask(llm, wiki, "--method", "cot", question="What is 1 + 1?")
    assert result.code == 0 and json.loads(result.stdout)["sources"] is None
    assert plain.code == 0 and plain.stdout == "2\n" and plain.stderr == ""
    assert all("sources" not in json.loads(p.read_text()) for p in cli.home.glob("traces/*.json"))


def test_a_run_without_an_answer_prints_no_sources(cli: Runner, wiki: FakeMediaWiki) -> None:
    with FakeOpenAI(scripted(GOOD_RUN[0], GOOD_RUN[1])) as llm:
        result = cli.ask(llm, wiki, "--max-steps", "2")
    assert result.code == 1 and result.stderr.startswith("Error: no answer")
    assert [s["title"] for s in only_trace(cli.home)["sources"]] == [ARTHUR, FIRST]


def test_a_zim_source_names_the_archive_and_the_entry(cli: Runner) -> None:
    script = (" Search.\nAction 1: Search[Ray Charles]", " Done.\nAction 2: Finish[1930]")
    with FakeOpenAI(scripted(*script * 2)) as llm:
        env = servers_env(llm, llm)
        result = cli(["ask", "When was Ray Charles born?", "--wiki", f"zim:{REAL_ZIM}"], **env)
        as_json = cli(
            ["ask", "When was Ray Charles born?", "--wiki", f"zim:{REAL_ZIM}", "--json"], **env
        )
    assert result.code == 0, result.stderr
    assert result.stderr.splitlines() == [
        "Sources:",
        f"[1] Ray Charles — {REAL_ZIM.name}: A/Ray_Charles.html",
    ]
    (source,) = json.loads(as_json.stdout)["sources"]
    assert source["wiki"] == {
        "kind": "zim",
        "archive": REAL_ZIM.name,
        "uuid": "f4b02dd5-c092-e894-419e-265c2310b88d",
        "date": "2015-06-02",
        "language": "eng",
    }
    assert (source["url"], source["revision"]) == (None, "A/Ray_Charles.html")


# --- exports -----------------------------------------------------------------------------


@pytest.fixture
def recorded(cli: Runner, wiki: FakeMediaWiki) -> Path:
    return cli.record(wiki, *GOOD_RUN)


def test_the_markdown_export_links_each_observation_and_lists_the_sources(
    cli: Runner, wiki: FakeMediaWiki, recorded: Path
) -> None:
    markdown = cli(["replay", str(recorded), "--format", "markdown"]).stdout
    arthur = pinned(wiki, "Arthur%27s_Magazine", ARTHUR)
    first = pinned(wiki, "First_for_Women", FIRST)
    assert f"Source \\[1\\]: [{ARTHUR}]({arthur}), revision {revision(wiki, ARTHUR)}" in markdown
    assert f"Source \\[2\\]: [{FIRST}]({first}), revision {revision(wiki, FIRST)}" in markdown
    sources = markdown.split("## Sources\n\n")[1]
    assert sources.startswith(
        f"1. [{ARTHUR}]({arthur}), revision {revision(wiki, ARTHUR)} · contains the answer\n"
        "   - sentence 0: Arthur's Magazine (1844-1846) was"
    )
    assert f"\n2. [{FIRST}]({first}), revision {revision(wiki, FIRST)}\n" in sources


def test_the_html_export_links_each_observation_and_lists_the_sources(
    cli: Runner, wiki: FakeMediaWiki, recorded: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run.html"
    assert cli(["replay", str(recorded), "--format", "html", "-o", str(out)]).code == 0
    soup = BeautifulSoup(out.read_text(encoding="utf-8"), "html.parser")
    links = [(a.get_text(), a["href"]) for a in soup.find_all("a")]
    arthur = (ARTHUR, pinned(wiki, "Arthur%27s_Magazine", ARTHUR))
    first = (FIRST, pinned(wiki, "First_for_Women", FIRST))
    assert links == [arthur, first, arthur, first]  # the two observations, then the list
    assert all(a["rel"] == ["noreferrer"] for a in soup.find_all("a"))
    (listed,) = soup.find_all("ol", class_="sources")
    items = listed.find_all("li", recursive=False)
    assert "contains the answer" in items[0].get_text()
    assert "contains the answer" not in items[1].get_text()
    assert [li.get_text() for li in items[1].find_all("li")] == [
        "sentence 0: First for Women is a woman's magazine published by Bauer Media Group in the"
        " USA.[1]",
        "sentence 1: The magazine was started in 1989.",
    ]


def test_replay_shows_the_sources_as_ask_did(
    cli: Runner, wiki: FakeMediaWiki, recorded: Path
) -> None:
    shown = cli(["replay", str(recorded)])
    assert shown.stdout.endswith(
        f"Sources:\n[1] {ARTHUR} — {pinned(wiki, 'Arthur%27s_Magazine', ARTHUR)}\n"
        f"[2] {FIRST} — {pinned(wiki, 'First_for_Women', FIRST)}\n"
    )


# --- re-runs on live tools ---------------------------------------------------------------


def test_a_live_rerun_names_the_pages_whose_revision_changed(
    cli: Runner, wiki: FakeMediaWiki, recorded: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = revision(wiki, FIRST)
    env = {"REACT_CLI_WIKI": wiki.url}
    monkeypatch.setitem(wiki.revisions, FIRST, before + 7)  # edited; its text the same
    same = cli(["replay", str(recorded), "--live-tools"], **env)
    assert same.code == 0 and same.stdout == f"{ARTHUR}\n"  # the re-run still reproduces
    note = f"note: {FIRST} ({wiki.url.split('//')[1]}) changed since the recording"
    assert same.stderr == f"{note} (revision {before} → {before + 7})\n"
    monkeypatch.setitem(wiki.pages, FIRST, "First for Women is a magazine started in 1990.")
    differs = cli(["replay", str(recorded), "--live-tools", "--json"], **env)
    assert differs.code == 1
    report = json.loads(differs.stdout)
    assert report["revisions_changed"] == [
        {"wiki": wiki.url.split("//")[1], "title": FIRST, "recorded": before, "now": before + 7}
    ]
    assert report["differences"][0]["where"] == "step 2 observation"
    text = cli(["replay", str(recorded), "--live-tools"], **env)
    assert text.stderr.splitlines()[0] == f"{note} (revision {before} → {before + 7})"
    assert text.stdout.startswith("The re-run differs")


def test_an_offline_rerun_keeps_the_recorded_sources(cli: Runner, recorded: Path) -> None:
    result = cli(["replay", str(recorded), "--rerun"], REACT_CLI_WIKI="http://127.0.0.1:9")
    assert result.code == 0 and result.stderr == ""


# --- hostile pages -----------------------------------------------------------------------

EVIL_TITLE = "Evil \x1b[31mred\x1b[0m \x1b]8;;https://evil.example\x07osc\x1b]8;;\x07 \u202eok"
EVIL_TEXT = "The \x1b[2Jevil page \x9b31m says <script>alert(1)</script> [x](javascript:alert(2))."


@pytest.fixture(scope="module")
def evil_wiki() -> Iterator[FakeMediaWiki]:
    wiki = FakeMediaWiki({EVIL_TITLE: EVIL_TEXT}, redirects={"Evil page": EVIL_TITLE})
    with wiki:
        yield wiki


def test_hostile_titles_and_urls_are_cleaned_on_the_terminal(
    cli: Runner, evil_wiki: FakeMediaWiki
) -> None:
    script = (" Search.\nAction 1: Search[Evil page]", " Done.\nAction 2: Finish[evil]")
    with FakeOpenAI(scripted(*script * 2)) as llm:
        result = cli.ask(llm, evil_wiki)
        as_json = cli.ask(llm, evil_wiki, "--json")
    assert result.code == 0, result.stderr
    for escape in ("\x1b", "\x9b", "\u202e", "\x07"):
        assert escape not in result.stderr and escape not in as_json.stdout
    (line,) = result.stderr.splitlines()[1:]
    assert line.startswith("[1] Evil red osc ok — ")  # escape sequences and controls removed
    # The URL is ours, built from the host and the title, so every odd byte is encoded.
    assert f" — {evil_wiki.url}/w/index.php?title=Evil_%1B%5B31mred" in line
    (source,) = json.loads(as_json.stdout)["sources"]
    assert source["title"] == EVIL_TITLE  # JSON keeps the text, escaped as JSON
    assert "\\u001b" in as_json.stdout and "\\u009b" in as_json.stdout


def hostile_document(trace: dict[str, Any], url: str) -> dict[str, Any]:
    """``trace`` with a hostile source on its first step: a title, URL and sentence of markup."""
    source = dict(trace["steps"][0]["actions"][0]["source"])
    source.update(
        title="<img src=x onerror=alert(1)>](javascript:alert(2)) *b* \x1b[31m",
        url=url,
        sentences=[{"index": 0, "text": "<script>alert(3)</script> [y](javascript:alert(4)) #"}],
    )
    trace["steps"][0]["actions"][0]["source"] = source
    return trace


HOSTILE_TITLE = "<img src=x onerror=alert(1)>](javascript:alert(2)) *b*"  # as cleaned


@pytest.mark.parametrize(
    ("url", "link"),
    [
        ("javascript:alert(1)", None),
        (
            'http://example.org/w/index.php?title=<b>")(&oldid=1',
            "http://example.org/w/index.php?title=%3Cb%3E%22%29%28&oldid=1",
        ),
        ("https://example.org/\x1b[31m", None),
        ("/relative/path", None),
    ],
)
def test_hostile_sources_in_a_trace_stay_text_in_both_exports(
    cli: Runner, wiki: FakeMediaWiki, recorded: Path, tmp_path: Path, url: str, link: str | None
) -> None:
    document = hostile_document(json.loads(recorded.read_text(encoding="utf-8")), url)
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    first = pinned(wiki, "First_for_Women", FIRST)
    safe = [link] if link else []
    markdown = cli(["replay", str(path), "--format", "markdown"]).stdout
    assert "\x1b" not in markdown
    tokens = [t for block in MARKDOWN.parse(markdown) for t in [block, *(block.children or [])]]
    assert not [t for t in tokens if t.type in ("html_inline", "image", "code_inline")]
    links = [t.attrs["href"] for t in tokens if t.type == "link_open"]
    assert links == [*safe, first, *safe, first]  # the observations, then the list
    texts = "".join(t.content for t in tokens if t.type == "text")
    assert f"Source [1]: {HOSTILE_TITLE}" in texts
    assert "<script>alert(3)</script> [y](javascript:alert(4)) #" in texts
    out = tmp_path / "hostile.html"
    assert cli(["replay", str(path), "--format", "html", "-o", str(out)]).code == 0
    soup = BeautifulSoup(out.read_text(encoding="utf-8"), "html.parser")
    assert not soup.find_all("img") and len(soup.find_all("script")) == 1  # ours
    assert [a["href"] for a in soup.find_all("a")] == [*safe, first, *safe, first]
    assert HOSTILE_TITLE in soup.get_text()
    assert "<script>alert(3)</script>" in soup.get_text()  # shown as text


# --- hostile traces: every value of a source replaced by a hostile one --------------------

NOW = json.loads(
    (
        Path(__file__).resolve().parents[1] / "fixtures" / "traces" / "now" / "answered.json"
    ).read_text(encoding="utf-8")
)
SOURCE_PATHS = [path for path in paths(NOW) if "source" in path or "sources" in path]


@cli_fuzz(12)
@given(path=st.sampled_from(SOURCE_PATHS), literal=json_literal)
def test_a_hostile_source_in_a_trace_is_shown_or_refused_in_one_line(
    cli: Runner, tmp_path_factory: pytest.TempPathFactory, path: tuple[str | int, ...], literal: str
) -> None:
    trace = tmp_path_factory.mktemp("trace") / "run.json"
    trace.write_bytes(inject(NOW, path, literal).encode("utf-8", "surrogatepass"))
    for args in ([], ["--format", "markdown"], ["--format", "html"]):
        result = cli(["replay", str(trace), *args])
        assert result.code in (0, 1) and "Traceback" not in result.stderr, result
        assert "\x1b" not in result.stdout + result.stderr
        if result.code:
            assert result.stderr.startswith(f"Error: {trace}: ") and result.stderr.count("\n") == 1


@given(
    st.text(max_size=60)
    | st.sampled_from(
        ["https://x.org/a b", "http://[::1", "javascript:x", "https://x.org/(a)<b>\\"]
    )
)
def test_a_link_is_an_http_url_that_nothing_can_end(url: str) -> None:
    link = link_target(url)
    if link is not None:
        assert link.startswith(("http://", "https://"))
        assert not set(link) & set(' \t\n()[]<>"\\`{}|^') and link.isascii()
