"""Wikipedia article HTML -> the plain text Search and Lookup read.

Only the article body is kept: paragraphs, list items, table rows and ``== Heading ==``
lines, up to the first closing section (See also, References, External links, ...).
Navigation, infoboxes, navboxes, reference markers, edit links, hatnotes, tables of contents
and styles are dropped. Works on whole desktop pages, Parsoid pages, ``action=parse``
output and Kiwix (mwoffliner) articles.

Speed: the HTML is cut to the article body before parsing (``html_body``) and parsed by
lxml; ``bench/html_extract.py`` checks that the text equals a whole-page ``html.parser`` parse.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from bs4.element import CData, NavigableString, PageElement, Tag

from react_cli.wiki.html_body import body_slice, is_end_heading

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
            if child.name == "h2" and is_end_heading(text):
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
