"""Wikipedia article HTML -> the plain text Search and Lookup read.

Only the article body is kept: paragraphs, list items, table rows and ``== Heading ==``
lines, up to the first closing section (See also, References, External links, ...).
Navigation, infoboxes, navboxes, reference markers, edit links, hatnotes, tables of contents
and styles are dropped. Works on whole desktop pages, Parsoid pages, ``action=parse``
output and Kiwix (mwoffliner) articles.

Speed: the HTML is cut to the article body before parsing (the closing sections are about
two thirds of a long article's bytes) and parsed by lxml; ``bench/html_extract.py`` checks
that the text equals a whole-page ``html.parser`` parse.
"""

from __future__ import annotations

import contextlib
import re

from bs4 import CData, NavigableString, Tag

# Closing sections of English and Chinese Wikipedia: everything from the first one on is
# lists of links and citations, not article text.
END_SECTIONS = frozenset(
    {
        "see also",
        "notes",
        "references",
        "footnotes",
        "citations",
        "sources",
        "bibliography",
        "further reading",
        "external links",
        "notes and references",
        "references and notes",
        "参见",
        "參見",
        "另见",
        "另見",
        "参考",
        "參考",
        "参考文献",
        "參考文獻",
        "参考资料",
        "參考資料",
        "参考来源",
        "參考來源",
        "注释",
        "註釋",
        "注解",
        "註解",
        "备注",
        "備注",
        "備註",
        "脚注",
        "腳註",
        "延伸阅读",
        "延伸閱讀",
        "外部链接",
        "外部連結",
        "外部鏈接",
    }
)
# Subtrees skipped wherever they are: by tag, by class, by id.
NOISE_TAGS = frozenset({"style", "script", "link", "meta", "noscript", "figure"})
NOISE_CLASSES = frozenset(
    {
        "infobox",
        "navbox",
        "vertical-navbox",
        "navbox-styles",
        "sidebar",
        "metadata",
        "ambox",
        "hatnote",
        "navigation-not-searchable",
        "dablink",
        "mw-editsection",
        "reference",
        "mw-ref",
        "mw-cite-backlink",
        "reflist",
        "references",
        "mw-references-wrap",
        "toc",
        "thumb",
        "gallery",
        "catlinks",
        "printfooter",
        "mw-empty-elt",
        "sistersitebox",
        "noteTA",
        "shortdescription",
        "mw-jump-link",
        "mw-kartographer-maplink",
        "noprint",
        "mbox-small",
        "haudio",
        "mediaContainer",
    }
)
NOISE_IDS = frozenset({"toc", "coordinates", "catlinks", "siteSub", "contentSub"})
BLOCKS = ("p", "li", "dd", "dt", "tr", "pre", "blockquote", "h2", "h3", "h4", "h5", "h6")
_H2 = re.compile(r"<h2\b[^>]*>(.*?)</h2\s*>", re.S | re.I)
_TAG = re.compile(r"<[^>]*>")
_EDIT_LINK = re.compile(r"\[[^\[\]]*\]\s*$")
# Markup the walk skips anyway, removed before parsing: elements that never nest in
# themselves (MathML, styles, figures, reference markers, edit links), the table of
# contents (its lists end with the first "</ul></div>") and the tags (not the text) of links.
_SKIPPED = re.compile(
    r"<math\b.*?</math>|<style\b.*?</style>|<script\b.*?</script>|<figure\b.*?</figure>"
    r"|<sup\b[^>]*\b(?:class=\"[^\"]*\b(?:reference|mw-ref)\b[^\"]*\"|id=\"cite_ref)[^>]*>.*?</sup>"
    r"|<span class=\"mw-editsection\"><span class=\"mw-editsection-bracket\">\[</span>.*?"
    r"<span class=\"mw-editsection-bracket\">\]</span></span>"
    r"|<div id=\"toc\".*?</ul>\s*</div>"
    r"|</?a\b[^>]*>",  # links: their text stays
    re.S | re.I,
)
_CONTENT = 'id="mw-content-text"'
_TEXT_TYPES = (NavigableString, CData)
# Block-level elements inside a block: their text is set off by spaces.
_SEPARATED = frozenset({"br", "div", "p", "ul", "ol", "li", "dl", "dd", "dt", "table", "tr"})
_TEX = re.compile(r"^\{\\displaystyle\s*(.*)\}$", re.S)


def article_text(html: str, *, parser: str = "lxml", cut: bool = True) -> str:
    """The article's text: one line per paragraph, list item or table row; headings as
    ``== Heading ==`` lines. ``cut=False`` and ``parser="html.parser"`` give the slow
    whole-page reference the benchmark compares against."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(body_slice(html) if cut else html, parser)
    root = soup.find(id="mw-content-text") or soup.find(class_="mw-parser-output") or soup
    return "\n".join(_lines(root))


def body_slice(html: str) -> str:
    """``html`` from the article container to the first closing-section heading, without
    the markup the walk skips anyway (MathML, reference markers, styles)."""
    start = html.find(_CONTENT)
    start = html.rfind("<", 0, start) if start > 0 else 0
    end = len(html)
    for match in _H2.finditer(html, start):
        heading = _EDIT_LINK.sub("", _TAG.sub("", match.group(1)))
        if _is_end_heading(heading):
            end = match.start()
            break
    return _SKIPPED.sub("", html[start:end])


def _is_end_heading(text: str) -> bool:
    return " ".join(text.split()).casefold() in END_SECTIONS


class _End(Exception):
    """Raised by the walk at the first closing-section heading."""


def _lines(root: Tag) -> list[str]:
    """The text lines of ``root``'s blocks in document order, up to a closing section."""
    lines: list[str] = []
    with contextlib.suppress(_End):
        _walk(root, lines)
    return lines


def _walk(node: Tag, lines: list[str]) -> None:
    for child in node.children:
        if not isinstance(child, Tag) or _is_noise(child):
            continue
        if child.name not in BLOCKS:
            _walk(child, lines)
            continue
        if child.name == "tr":
            cells = (_text(c) for c in child.find_all(["th", "td"]))
            text = " | ".join(c for c in cells if c)
        else:
            text = _text(child)
        if not text:
            continue
        if child.name[0] == "h":
            if child.name == "h2" and _is_end_heading(text):
                raise _End
            marks = "=" * int(child.name[1])
            text = f"{marks} {text} {marks}"
        lines.append(text)


def _is_noise(tag: Tag) -> bool:
    if tag.name in NOISE_TAGS:
        return True
    classes = tag.get("class")
    if classes and not NOISE_CLASSES.isdisjoint(classes):
        return True
    ident = tag.get("id")
    return ident in NOISE_IDS or (tag.name == "sup" and str(ident).startswith("cite_ref"))


def _text(tag: Tag) -> str:
    """``tag``'s text on one line, without noise; formulas as TeX."""
    parts: list[str] = []
    _collect(tag, parts)
    return " ".join("".join(parts).split())


def _collect(tag: Tag, parts: list[str]) -> None:
    for child in tag.children:
        if isinstance(child, Tag):
            if _is_noise(child):
                continue
            classes = child.get("class")
            if classes and "mwe-math-element" in classes:
                parts.append(_tex(child))
            elif child.name in _SEPARATED:
                parts.append(" ")
                _collect(child, parts)
                parts.append(" ")
            else:
                _collect(child, parts)
        elif type(child) in _TEXT_TYPES:
            parts.append(child)


def _tex(math: Tag) -> str:
    """A math formula as its TeX source: the fallback image's alt text, else the MathML's
    TeX annotation."""
    image = math.find("img")
    source = image.get("alt") if image is not None else None
    if not source:
        annotation = math.find("annotation")
        source = annotation.get_text() if annotation is not None else math.get_text()
    source = str(source).strip()
    match = _TEX.match(source)
    return match.group(1).strip() if match else source
