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

import re
from collections.abc import Iterator

from bs4 import CData, NavigableString, Tag
from bs4.element import PageElement

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
# Every pattern is searched by a left-to-right scan that never looks at a byte twice (see
# ``_Next``): a page of 30,000 unclosed <style> or <h2> tags costs what a normal page does.
_H2_OPEN = re.compile(r"<h2\b", re.I)
_H2_CLOSE = re.compile(r"</h2\s*>", re.I)
_TAG = re.compile(r"<[^<>]*>")
_EDIT_LINK = re.compile(r"\[[^\[\]]*\]\s*$")
# Markup the walk skips anyway, removed before parsing: elements that never nest in
# themselves (MathML, styles, figures, reference markers, edit links, up to their closing
# tag), the table of contents (its lists end with the first "</ul></div>") and the tags (not
# the text) of links. Opening -> what ends the removal.
_SKIPPED_OPEN = re.compile(
    r"<(?P<element>math|style|script|figure|sup)\b"
    r'|(?P<editsection><span class="mw-editsection"><span class="mw-editsection-bracket">\[</span>)'
    r'|(?P<toc><div id="toc")'
    r"|(?P<link></?a\b)",
    re.I,
)
_SKIPPED_CLOSE = {
    "math": re.compile("</math>", re.I),
    "style": re.compile("</style>", re.I),
    "script": re.compile("</script>", re.I),
    "figure": re.compile("</figure>", re.I),
    "sup": re.compile("</sup>", re.I),
    "editsection": re.compile(
        re.escape('<span class="mw-editsection-bracket">]</span></span>'), re.I
    ),
    "toc": re.compile(r"</ul>\s*</div>", re.I),
}
_TAG_END = re.compile(">")
_TAG_START = re.compile("<")
_CLASS = re.compile(r'\bclass="([^"]*)"')
_REFERENCE_CLASS = re.compile(r"\b(?:reference|mw-ref)\b")
_CITE_ID = re.compile(r'\bid="cite_ref')
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
    return _without_skipped(html[start : _end_of_body(html, start)])


class _Next:
    """The first match of a pattern at or after a position, for positions that only grow.

    A search is made again only when the last match lies behind the position, so a scan of
    the whole text costs one pass per pattern, however many times it asks.
    """

    def __init__(self, pattern: re.Pattern[str], text: str) -> None:
        self._pattern = pattern
        self._text = text
        self._from = -1
        self._match: re.Match[str] | None = None

    def at(self, pos: int) -> re.Match[str] | None:
        stale = self._from < 0 or pos < self._from
        if stale or (self._match is not None and self._match.start() < pos):
            self._from = pos
            self._match = self._pattern.search(self._text, pos)
        return self._match


def _end_of_body(html: str, start: int) -> int:
    """Where the first closing-section ``<h2>`` after ``start`` begins (else the end)."""
    tag_end, close = _Next(_TAG_END, html), _Next(_H2_CLOSE, html)
    pos = start
    while (opening := _H2_OPEN.search(html, pos)) is not None:
        gt = tag_end.at(opening.end())
        closing = close.at(gt.end()) if gt else None
        if gt is None or closing is None:
            break  # no later heading can be closed either
        heading = _EDIT_LINK.sub("", _TAG.sub("", html[gt.end() : closing.start()]))
        if _is_end_heading(heading):
            return opening.start()
        pos = closing.end()
    return len(html)


def _without_skipped(html: str) -> str:
    """``html`` without the markup of ``_SKIPPED_OPEN`` (what ``_lines`` would skip)."""
    closers = {name: _Next(pattern, html) for name, pattern in _SKIPPED_CLOSE.items()}
    tag_end, tag_start = _Next(_TAG_END, html), _Next(_TAG_START, html)
    kept: list[str] = []
    pos = 0  # html[pos:] is still to be scanned
    done = 0  # html[:done] is in kept
    while (opening := _SKIPPED_OPEN.search(html, pos)) is not None:
        kind = opening.lastgroup or ""
        name = opening.group("element").lower() if kind == "element" else kind
        end: int | None = None
        if name == "link":
            gt = tag_end.at(opening.end())
            end = gt.end() if gt else None
        elif name != "sup" or _is_reference(html, opening, tag_end, tag_start):
            closing = closers[name].at(opening.end())
            end = closing.end() if closing else None
        if end is None:  # not removed: go on after the opening's first character
            pos = opening.start() + 1
            continue
        kept.append(html[done : opening.start()])
        pos = done = end
    kept.append(html[done:])
    return "".join(kept)


def _is_reference(html: str, opening: re.Match[str], tag_end: _Next, tag_start: _Next) -> bool:
    """Whether the ``<sup`` at ``opening`` is a reference marker (by its class or id)."""
    gt = tag_end.at(opening.end())
    lt = tag_start.at(opening.end())
    if gt is None or (lt is not None and lt.start() < gt.start()):
        return False  # not a well-formed tag
    tag = html[opening.end() : gt.start()]
    if _CITE_ID.search(tag):
        return True
    return any(_REFERENCE_CLASS.search(match.group(1)) for match in _CLASS.finditer(tag))


def _is_end_heading(text: str) -> bool:
    return " ".join(text.split()).casefold() in END_SECTIONS


def _lines(root: Tag) -> list[str]:
    """The text lines of ``root``'s blocks in document order, up to a closing section.

    An explicit stack, not recursion: a page may nest elements as deep as it likes.
    """
    lines: list[str] = []
    stack = [iter(root.children)]
    while stack:
        child = next(stack[-1], None)
        if child is None:
            stack.pop()
            continue
        if not isinstance(child, Tag) or _is_noise(child):
            continue
        if child.name not in BLOCKS:
            stack.append(iter(child.children))
            continue
        if child.name == "tr":
            cells = (_text(c) for c in child.find_all(["th", "td"], recursive=False))
            text = " | ".join(c for c in cells if c)
        else:
            text = _text(child)
        if not text:
            continue
        if child.name[0] == "h":
            if child.name == "h2" and _is_end_heading(text):
                break
            marks = "=" * int(child.name[1])
            text = f"{marks} {text} {marks}"
        lines.append(text)
    return lines


def _is_noise(tag: Tag) -> bool:
    if tag.name in NOISE_TAGS:
        return True
    classes = tag.get("class")
    if classes and not NOISE_CLASSES.isdisjoint(classes):
        return True
    ident = tag.get("id")
    return ident in NOISE_IDS or (tag.name == "sup" and str(ident).startswith("cite_ref"))


def _text(tag: Tag) -> str:
    """``tag``'s text on one line, without noise; formulas as TeX; blocks inside it set off
    by spaces. An explicit stack, as in ``_lines``."""
    parts: list[str] = []
    stack: list[tuple[Iterator[PageElement], str]] = [(iter(tag.children), "")]
    while stack:
        children, after = stack[-1]
        child = next(children, None)
        if child is None:
            stack.pop()
            parts.append(after)
        elif isinstance(child, Tag):
            if _is_noise(child):
                continue
            classes = child.get("class")
            if classes and "mwe-math-element" in classes:
                parts.append(_tex(child))
            elif child.name in _SEPARATED:
                parts.append(" ")
                stack.append((iter(child.children), " "))
            else:
                stack.append((iter(child.children), ""))
        elif type(child) in _TEXT_TYPES:
            parts.append(str(child))
    return " ".join("".join(parts).split())


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
