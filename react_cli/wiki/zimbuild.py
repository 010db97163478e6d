"""Build a ZIM archive (with a full-text index) from a corpus, for offline, reproducible runs.

A corpus is JSON Lines or one JSON list of records, each either an article ``{title, text}``
or a HotpotQA distractor-format question (``context`` as ``[[title, [sentences]], ...]`` or
the Hugging Face ``{title: [...], sentences: [[...]]}``): one article per context paragraph.
Article text is paragraphs separated by newlines; ``== Heading ==`` lines become headings,
and the lines after a "may refer to:" line become the linked entries of a disambiguation page.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any
from urllib.parse import quote

from react_cli.errors import UsageError
from react_cli.wiki.zim import INSTALL_ZIM

_HEADING = re.compile(r"^(={2,6})\s*(.*?)\s*\1$")
_REFERS = ("may refer to:", "可以指：", "可能指：")


@dataclass
class BuildReport:
    """What went into the archive."""

    articles: int
    duplicates: int


def read_corpus(path: Path) -> Iterator[tuple[str, str]]:
    """``(title, text)`` pairs of a corpus file, in file order (duplicates included)."""
    try:
        raw = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read corpus {str(path)!r}: {exc}") from None
    for where, record in _records(raw, path):
        if not isinstance(record, dict):
            raise UsageError(f"{where}: expected a JSON object")
        if "context" in record:
            yield from _hotpot_paragraphs(record["context"], where)
        elif isinstance(record.get("title"), str) and isinstance(record.get("text"), str):
            yield record["title"], record["text"]
        else:
            raise UsageError(f"{where}: expected {{title, text}} or a HotpotQA 'context'")


def _records(raw: str, path: Path) -> Iterator[tuple[str, Any]]:
    """``(location, record)`` of a JSON list or of JSON Lines."""
    if raw.lstrip().startswith("["):
        try:
            items = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise UsageError(f"{path}: not valid JSON ({exc})") from None
        for index, item in enumerate(items):
            yield f"{path} item {index + 1}", item
        return
    for number, line in enumerate(raw.splitlines(), 1):
        if line.strip():
            try:
                yield f"{path} line {number}", json.loads(line)
            except json.JSONDecodeError as exc:
                raise UsageError(f"{path} line {number}: not valid JSON ({exc})") from None


def _hotpot_paragraphs(context: Any, where: str) -> Iterator[tuple[str, str]]:
    """A HotpotQA context, in either layout, as ``(title, paragraph)`` pairs."""
    if isinstance(context, dict):
        pairs = zip(context.get("title", []), context.get("sentences", []), strict=False)
    else:
        pairs = ((item[0], item[1]) for item in context if isinstance(item, list) and item)
    for title, sentences in pairs:
        if not isinstance(title, str) or not isinstance(sentences, list):
            raise UsageError(f"{where}: malformed HotpotQA context")
        yield title, "".join(str(s) for s in sentences).strip()


def article_html(title: str, text: str) -> str:
    """The page a corpus article becomes: paragraphs, headings, disambiguation entries."""
    parts = [f'<h1>{escape(title)}</h1><div id="mw-content-text">']
    entries = False
    for line in (line.strip() for line in text.split("\n")):
        heading = _HEADING.match(line)
        if not line:
            continue
        if heading:
            level = len(heading.group(1))
            parts.append(f"<h{level}>{escape(heading.group(2))}</h{level}>")
            entries = False
        elif entries:
            href = quote(_path(line))
            parts.append(f'<ul><li><a href="{href}">{escape(line)}</a></li></ul>')
        else:
            parts.append(f"<p>{escape(line)}</p>")
            entries = line.endswith(_REFERS)
    parts.append("</div>")
    head = f'<head><meta charset="utf-8"><title>{escape(title)}</title></head>'
    return f"<!DOCTYPE html><html>{head}<body>{''.join(parts)}</body></html>"


def _path(title: str) -> str:
    return title.replace(" ", "_")


def build_zim(corpus: Path, out: Path, *, language: str = "eng", name: str = "") -> BuildReport:
    """Write ``out`` from ``corpus``: one HTML article per title (first one wins)."""
    try:
        from libzim.writer import Creator, Hint, Item, StringProvider
    except ImportError:
        raise UsageError(f"building ZIM archives needs libzim: {INSTALL_ZIM}") from None

    class Page(Item):  # type: ignore[misc]
        def __init__(self, title: str, text: str) -> None:
            super().__init__()
            self.title, self.text = title, text

        def get_path(self) -> str:
            return _path(self.title)

        def get_title(self) -> str:
            return self.title

        def get_mimetype(self) -> str:
            return "text/html"

        def get_contentprovider(self) -> StringProvider:
            return StringProvider(article_html(self.title, self.text))

        def get_hints(self) -> dict[Any, int]:
            return {Hint.FRONT_ARTICLE: True}

    seen: set[str] = set()
    duplicates = 0
    pages = []
    for title, text in read_corpus(corpus):
        title = " ".join(title.split())
        if not title or _path(title) in seen:
            duplicates += 1
            continue
        seen.add(_path(title))
        pages.append(Page(title, text))
    if not pages:
        raise UsageError(f"corpus {str(corpus)!r} has no articles")
    out.parent.mkdir(parents=True, exist_ok=True)
    creator = Creator(str(out)).config_indexing(True, language).config_verbose(False)
    try:
        with _quiet_stdout(), creator:
            creator.set_mainpath(pages[0].get_path())
            for page in pages:
                creator.add_item(page)
            for key, value in {
                "Title": name or corpus.stem,
                "Language": language,
                "Creator": "react-cli",
                "Publisher": "react-cli",
                "Description": f"Built by react-cli wiki build-zim from {corpus.name}",
                "Name": corpus.stem,
            }.items():
                creator.add_metadata(key, value)
    except RuntimeError as exc:
        raise UsageError(f"cannot write {str(out)!r}: {exc}") from None
    return BuildReport(len(pages), duplicates)


@contextmanager
def _quiet_stdout() -> Iterator[None]:
    """Silence libzim's progress lines, which it prints to file descriptor 1 whatever the
    verbosity: stdout belongs to the command's output."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)
