"""The ZIM backend on the real 2015 Kiwix archive and on small archives the tests build."""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path

import pytest
from zim_fixtures import zh_archive

from react_cli.core.errors import UsageError
from react_cli.infra.deadline import NO_DEADLINE
from react_cli.tools.wikipedia import Wikipedia
from react_cli.wiki import open_backend
from react_cli.wiki.zim import ZimBackend, open_zim
from react_cli.wiki.zimbuild import article_html, build_zim, read_corpus

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
REAL_ZIM = FIXTURES / "zim" / "wikipedia_en_ray_charles_2015-06.zim"
HOTPOT = FIXTURES / "hotpotqa" / "distractor_first2.json"
ARTICLES = [
    {"title": "Ray Charles", "text": "Ray Charles was an American singer. He was blind."},
    {"title": "Bush", "text": "Bush may refer to:\nBush (plant)\nGeorge W. Bush"},
    {"title": "Bush (plant)", "text": "A bush is a woody plant. It has many stems."},
    {
        "title": "George W. Bush",
        "text": "George Walker Bush is an American politician.\n== Presidency ==\n"
        "He was the 43rd president of the United States. He served two terms.",
    },
    {"title": "Ray Charles", "text": "A later duplicate that is skipped."},
]


@pytest.fixture(scope="module")
def real() -> Wikipedia:
    return Wikipedia(open_zim(str(REAL_ZIM)))


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("zim")
    corpus = folder / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(a) + "\n" for a in ARTICLES), encoding="utf-8")
    out = folder / "small.zim"
    report = build_zim(corpus, out)
    assert (report.articles, report.duplicates) == (4, 1)
    return out


def test_real_archive_title_case_and_redirects(real: Wikipedia) -> None:
    for entity in ("Ray Charles", "ray charles", "RAY CHARLES", "Ray C. Robinson", "Ray_Charles"):
        result = real.search(entity, deadline=NO_DEADLINE)
        assert result.details["resolved_title"] == "Ray Charles", entity
        assert result.observation.startswith(
            "Ray Charles Robinson (September 23, 1930 – June 10, 2004), professionally known"
        )
        assert "[2]" not in result.observation


def test_real_archive_miss_uses_title_suggestions(real: Wikipedia) -> None:
    result = real.search("Ray", deadline=NO_DEADLINE)
    assert result.observation == (
        "Could not find [Ray]. Similar: ['Ray (film)', 'Ray Charles', 'Ray Charles (album)', "
        "'Ray Charles Anthology', 'Ray Charles Greatest Hits']."
    )
    assert (
        real.search("Qwxyz", deadline=NO_DEADLINE).observation
        == "Could not find [Qwxyz]. Similar: []."
    )


def test_real_archive_lookup(real: Wikipedia) -> None:
    real.search("ray charles", deadline=NO_DEADLINE)
    first = real.lookup("glaucoma", deadline=NO_DEADLINE)
    assert first.observation.startswith("(Result 1 / 1) Charles started to lose his sight")
    assert real.lookup("glaucoma", deadline=NO_DEADLINE).observation == "No more results."


def test_real_archive_article_body_only(real: Wikipedia) -> None:
    observation = real.search("Georgia on My Mind", deadline=NO_DEADLINE).observation
    assert "It became the official state song of the State of Georgia in 1979." in observation
    assert "MB" not in observation and "media help" not in observation


def test_built_archive_hit_and_case_insensitive(built: Path) -> None:
    session = Wikipedia(open_zim(str(built)))
    result = session.search("george W. BUSH", deadline=NO_DEADLINE)
    assert result.details == {"resolved_title": "George W. Bush", "folded": False}
    assert result.observation == (
        "George Walker Bush is an American politician. He was the 43rd president of the "
        "United States. He served two terms."
    )
    assert session.search("Ray Charles", deadline=NO_DEADLINE).observation.endswith("He was blind.")


def test_built_archive_miss_uses_the_full_text_index(built: Path) -> None:
    archive = open_zim(str(built))
    assert archive._archive.has_fulltext_index
    outcome = archive.search("woody stems", deadline=NO_DEADLINE)
    assert outcome.article is None
    assert outcome.similar == ["Bush (plant)"]


def test_built_archive_folding_reaches_the_title(built: Path) -> None:
    result = Wikipedia(open_zim(str(built))).search("George W Bush", deadline=NO_DEADLINE)
    assert result.details == {"resolved_title": "George W. Bush", "folded": True}


def test_built_archive_disambiguation(built: Path) -> None:
    result = Wikipedia(open_zim(str(built))).search("bush", deadline=NO_DEADLINE)
    assert (
        result.observation == "Could not find [bush]. Similar: ['Bush (plant)', 'George W. Bush']."
    )
    assert result.details["disambiguation"] is True


def test_open_backend_dispatches_zim(built: Path) -> None:
    assert isinstance(open_backend(f"zim:{built}"), ZimBackend)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("zim:missing.zim", "ZIM file not found: 'missing.zim'"),
        ("zim:", "needs the path of a .zim file"),
    ],
)
def test_bad_zim_specs_are_usage_errors(spec: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        open_backend(spec)


def test_not_a_zim_file(tmp_path: Path) -> None:
    fake = tmp_path / "fake.zim"
    fake.write_text("not a zim")
    with pytest.raises(UsageError, match="is not a readable ZIM archive"):
        open_zim(str(fake))


def block_import(monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    for name in names:
        monkeypatch.setitem(sys.modules, name, None)


def test_without_libzim_the_message_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    block_import(monkeypatch, "libzim", "libzim.reader", "libzim.writer")
    with pytest.raises(UsageError, match=r"needs libzim: pip install 'react-cli\[zim\]'"):
        open_zim(str(REAL_ZIM))
    with pytest.raises(UsageError, match=r"needs libzim: pip install 'react-cli\[zim\]'"):
        build_zim(HOTPOT, REAL_ZIM.parent / "never.zim")


@pytest.fixture(scope="module")
def zh_zim(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return zh_archive(tmp_path_factory.mktemp("zh") / "zh.zim")


def test_chinese_page_unconverted_mixes_scripts(zh_zim: Path) -> None:
    result = Wikipedia(open_zim(str(zh_zim))).search("貓", deadline=NO_DEADLINE)
    assert result.observation.startswith("貓（英語：Cat）通常指家貓")
    assert "一种家养" in result.observation  # Simplified inside Traditional text
    assert "根據遺傳學及考古學分析" in result.observation


@pytest.mark.parametrize(
    ("variant", "start", "absent"),
    [
        ("zh-cn", "猫（英语：Cat）通常指家猫", "貓"),
        ("zh-tw", "貓（英語：Cat）通常指家貓", "家养"),
    ],
)
def test_chinese_variant_is_converted_with_opencc(
    zh_zim: Path, variant: str, start: str, absent: str
) -> None:
    pytest.importorskip("opencc")
    session = Wikipedia(open_zim(str(zh_zim), variant))
    result = session.search(
        "猫", deadline=NO_DEADLINE
    )  # the Simplified title finds the Traditional one
    assert result.details["resolved_title"] == "貓"
    assert result.observation.startswith(start)
    assert absent not in result.observation
    assert session.lookup("考古", deadline=NO_DEADLINE).observation.startswith("(Result 1 / 1) ")


@pytest.mark.parametrize(("variant", "keyword"), [("zh-cn", "遺傳學"), ("zh-tw", "遗传学")])
def test_chinese_variant_lookup_matches_a_keyword_in_the_other_script(
    zh_zim: Path, variant: str, keyword: str
) -> None:
    """The page is shown in the variant's script; a keyword the model copied from the question
    in the other script must still find its sentences."""
    pytest.importorskip("opencc")
    session = Wikipedia(open_zim(str(zh_zim), variant))
    session.search("貓", deadline=NO_DEADLINE)
    found = session.lookup(keyword, deadline=NO_DEADLINE).observation
    assert found.startswith("(Result 1 / 1) ") and keyword not in found
    plain = Wikipedia(open_zim(str(zh_zim)))
    plain.search("貓", deadline=NO_DEADLINE)
    assert (
        plain.lookup("遗传学", deadline=NO_DEADLINE).observation == "No more results."
    )  # no variant: as written


def test_chinese_variant_without_opencc_says_so(
    zh_zim: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    block_import(monkeypatch, "opencc")
    with pytest.raises(UsageError, match=r"needs OpenCC .*pip install 'react-cli\[zh\]'"):
        open_zim(str(zh_zim), "zh-cn")


def test_unknown_variant_for_zim(zh_zim: Path) -> None:
    with pytest.raises(UsageError, match="unknown --variant 'sr-ec'"):
        open_zim(str(zh_zim), "sr-ec")


def test_hotpotqa_distractor_corpus_gives_one_article_per_paragraph(tmp_path: Path) -> None:
    pairs = list(read_corpus(HOTPOT))
    assert len(pairs) == 20
    title, text, sentences = pairs[1]
    assert title == "Scott Derrickson" and sentences is not None and len(sentences) == 3
    assert text.startswith("Scott Derrickson (born July 16, 1966) is an American director")
    out = tmp_path / "hotpot.zim"
    report = build_zim(HOTPOT, out)
    assert report.articles + report.duplicates == 20
    session = Wikipedia(open_zim(str(out)))
    assert session.search("scott derrickson", deadline=NO_DEADLINE).observation.startswith(
        "Scott Derrickson (born"
    )
    assert session.search("Ed Wood", deadline=NO_DEADLINE).details["resolved_title"] == "Ed Wood"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json\n", "line 1: not JSON"),
        ('{"title": "A", "text": ' + "[" * 100_000 + "\n", "line 1: nested more than 100"),
        ('[{"title": "A", "text": NaN}]', "NaN is not a number JSON allows"),
        (
            '{"title": "A"}\n',
            "line 1: expected {title, text}, a HotpotQA 'context' or a FEVER page",
        ),
        ("[1]", "item 1: expected a JSON object"),
        ("\n", "has no articles"),
    ],
)
def test_bad_corpora_are_usage_errors(tmp_path: Path, content: str, message: str) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(content, encoding="utf-8")
    with pytest.raises(UsageError, match=message):
        build_zim(corpus, tmp_path / "out.zim")


def test_article_html_escapes_and_marks_entries() -> None:
    html = article_html("A <b>", "X may refer to:\nY & Z\n== Other ==\nplain <i>")
    assert "<title>A &lt;b&gt;</title>" in html
    assert '<li><a href="Y_%26_Z">Y &amp; Z</a></li>' in html
    assert "<h2>Other</h2><p>plain &lt;i&gt;</p>" in html


@pytest.mark.parametrize(
    "context",
    [5, {"title": "abc", "sentences": 3}, {"title": ["A"]}, [["A"]], [["A", ["x"], "extra"]]],
)
def test_malformed_hotpotqa_contexts_are_usage_errors(tmp_path: Path, context: object) -> None:
    corpus = tmp_path / "corpus.json"
    corpus.write_text(json.dumps([{"question": "q", "context": context}]), encoding="utf-8")
    with pytest.raises(UsageError, match=r"item 1: malformed HotpotQA context"):
        build_zim(corpus, tmp_path / "out.zim")


def test_build_refuses_a_folder_or_an_existing_file_unless_forced(built: Path) -> None:
    corpus = built.parent / "corpus.jsonl"
    # libzim would write "<folder>.tmp", fail to rename it, and report success.
    with pytest.raises(UsageError, match="is a folder"):
        build_zim(corpus, built.parent)
    assert not built.parent.with_name(built.parent.name + ".tmp").exists()
    # Also protects the corpus itself from being overwritten by a swapped argument order.
    with pytest.raises(UsageError, match="already exists: choose another name or pass --force"):
        build_zim(corpus, corpus)
    assert corpus.read_text(encoding="utf-8").startswith('{"title": "Ray Charles"')
    copy = built.parent / "again.zim"
    copy.write_bytes(b"old")
    assert build_zim(corpus, copy, force=True).articles == 4
    assert (
        Wikipedia(open_zim(str(copy)))
        .search("Bush (plant)", deadline=NO_DEADLINE)
        .details["resolved_title"]
    )


def test_interrupted_build_leaves_no_archive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """libzim finishes the archive even when the build is interrupted: a partial archive that
    looks valid must never end up under the requested name."""
    import react_cli.wiki.zimbuild as zimbuild

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(a) + "\n" for a in ARTICLES), encoding="utf-8")
    calls = []

    def path_then_interrupt(title: str) -> str:
        calls.append(title)
        if len(calls) == 2 * 4 + 2:  # the dedup pass, set_mainpath, then the second add_item
            signal.raise_signal(signal.SIGINT)
        return title.replace(" ", "_")

    monkeypatch.setattr(zimbuild, "_path", path_then_interrupt)
    out = tmp_path / "out.zim"
    with pytest.raises(KeyboardInterrupt):
        build_zim(corpus, out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.jsonl"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
