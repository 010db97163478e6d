"""The article body of a Wikipedia page's HTML, cut out by linear scans before it is parsed.

It runs from the article container to the first closing section (See also, References, ...), without
the markup the text walk skips anyway (MathML, styles, reference markers, edit links, the
table of contents, link tags). The closing sections are about two thirds of a long article's
bytes, so parsing only the body is what makes ``html.article_text`` fast.
"""

from __future__ import annotations

import re

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
        if is_end_heading(heading):
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


def is_end_heading(text: str) -> bool:
    """Whether a heading's text opens a closing section (See also, References...)."""
    return " ".join(text.split()).casefold() in END_SECTIONS
