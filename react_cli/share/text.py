"""Untrusted text made fit to show anywhere: terminal-safe, encodable, and of bounded length."""

from __future__ import annotations

import re
from urllib.parse import quote, urlsplit

from react_cli.display.terminal import plain

MAX_SHOWN_CHARS = 20_000
"""A field longer than this (a 2 MB article, an endless answer) is cut when shown: pages stay
readable and small, while the trace keeps the whole text."""


def clean(text: str) -> str:
    """``terminal.plain``: no escape sequences, control or bidi characters, surrogates → U+FFFD
    (JSON may carry them, "\\ud800"; no UTF-8 file or terminal can take them)."""
    return plain(text)


def clip(text: str, limit: int = MAX_SHOWN_CHARS) -> str:
    """``text`` cut to ``limit`` characters, saying how many were left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]} [… {len(text) - limit:,} more characters not shown]"


CELL_CHARS = 300
"""A table cell shows this much of a text (question, answer…); the trajectory shows it all."""


def brief(text: str) -> str:
    """An already shown text cut for a table cell."""
    return clip(text, CELL_CHARS)


def shown(text: str) -> str:
    """What every exporter shows of an untrusted field: cleaned, then clipped."""
    return clip(clean(text))


def one_line(text: str, limit: int = 200) -> str:
    """A cleaned field on one line (table cells, labels): white space collapsed, clipped."""
    return clip(" ".join(clean(text).split()), limit)


_URL_KEPT = "-._~:/?#@!$&'*+,;=%"
"""What a link keeps of a URL as written (RFC 3986's characters, but brackets and
parentheses, which Markdown would read); anything else is percent-encoded."""
_URL_SPACE = re.compile(r"[\s\x00-\x1f\x7f-\x9f]")


def link_target(url: str | None) -> str | None:
    """A recorded URL fit to link to: an http(s) URL with a host, percent-encoded so that no
    character of it can end a Markdown link or an HTML attribute; None for anything else
    (``javascript:``, a relative path, control characters, a malformed URL)."""
    if not url or _URL_SPACE.search(url):
        return None
    try:
        parts = urlsplit(url)
        linkable = parts.scheme in ("http", "https") and bool(parts.hostname)
        return quote(url, safe=_URL_KEPT) if linkable else None
    except (ValueError, UnicodeEncodeError):
        return None
