"""Article HTML -> text on real Wikipedia pages (trimmed copies in tests/fixtures/html)."""

from __future__ import annotations

from pathlib import Path

import pytest

from react_cli.tools.wikipedia import page_sentences
from react_cli.wiki.html import article_text
from react_cli.wiki.html_body import body_slice

HTML = Path(__file__).resolve().parents[1] / "fixtures" / "html"


def page(name: str) -> str:
    return (HTML / f"{name}.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", ["zhwiki_Cat_trimmed", "enwiki_Mozilla_trimmed"])
def test_fast_path_gives_the_whole_page_html_parser_text(name: str) -> None:
    html = page(name)
    assert len(body_slice(html)) < len(html)
    assert article_text(html) == article_text(html, parser="html.parser", cut=False)


def test_desktop_page_keeps_only_the_article_body() -> None:
    text = article_text(page("enwiki_Mozilla_trimmed"))
    lines = text.split("\n")
    assert lines[0].startswith("Mozilla is a free-software community, created in 1998")
    assert "== History ==" in lines
    for noise in (
        "Jump to",  # navigation
        "[edit]",  # edit links
        "Mozilla Foundation logo",  # infobox
        "Contents",  # table of contents
        "[1]",  # reference markers
        "See also",
        "Retrieved from",  # footer
        "Categories:",
        "Personal tools",
    ):
        assert noise not in text, noise


def test_chinese_page_text_and_sentences() -> None:
    text = article_text(page("zhwiki_Cat_trimmed"))
    assert text.startswith(
        "貓（英語：Cat）通常指家貓（學名：Felis catus，英語：domestic/house cat）"
    )
    assert "== 分類學 ==" in text.split("\n")
    assert "消歧义" not in text and "標題相近" not in text  # hatnotes
    assert "另見" not in text and "[1]" not in text
    sentences = page_sentences(text)
    assert sentences[0].endswith("属中型貓科動物。")
    assert sentences[1].startswith("根據遺傳學及考古學分析")


def test_formulas_become_tex_and_tables_rows() -> None:
    html = (
        '<div id="mw-content-text"><p>If <span class="mwe-math-element"><math><semantics>'
        '<mi>A</mi><annotation encoding="application/x-tex">{\\displaystyle A^{H}}</annotation>'
        '</semantics></math><img alt="{\\displaystyle A^{H}}"></span> holds.</p>'
        '<table class="wikitable"><tr><th>Film</th><th>Year</th></tr>'
        "<tr><td>Groundhog Day</td><td>1993</td></tr></table>"
        '<table class="infobox"><tr><td>Born 1930</td></tr></table>'
        "<ul><li>One<ul><li>nested</li></ul></li></ul></div>"
    )
    assert article_text(html).split("\n") == [
        "If A^{H} holds.",
        "Film | Year",
        "Groundhog Day | 1993",
        "One nested",
    ]
