"""Build a ZIM archive (with a full-text index) from a corpus, for offline, reproducible runs.

A corpus is JSON Lines or one JSON list of records, each either an article ``{title, text}``,
a HotpotQA distractor-format question (``context`` as ``[[title, [sentences]], ...]`` or
the Hugging Face ``{title: [...], sentences: [[...]]}``): one article per context paragraph,
or a page of FEVER's Wikipedia dump (``{id, lines}``, ``lines`` one ``N<TAB>sentence...`` per
sentence).
Article text is paragraphs separated by newlines; ``== Heading ==`` lines become headings,
and the lines after a "may refer to:" line become the linked entries of a disambiguation page.

A HotpotQA paragraph (and a FEVER page) keeps its sentence list: each sentence is an element of
its own (``data-sentence``), so the tools number the page's sentences as the dataset does, and
its gold evidence (title, sentence id) can be checked exactly against what a run was shown.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import date
from html import escape
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import quote

from react_cli.core.errors import UsageError
from react_cli.infra.files import replacing_mode
from react_cli.infra.untrusted import BadInput, json_records, read_text
from react_cli.wiki.titles import fever_text, fever_title
from react_cli.wiki.zim import INSTALL_ZIM, SENTENCE_ATTRIBUTE, silenced

MAX_CORPUS_BYTES = 1 << 30
_REFERS = ("may refer to:", "可以指：", "可能指：")
MAX_FEVER_SENTENCE = 100_000  # a page of the dump has a few hundred at most


@dataclass
class BuildReport:
    """What went into the archive."""

    articles: int
    duplicates: int


class CorpusArticle(NamedTuple):
    """One article of a corpus; ``sentences`` its own sentence list, where it has one."""

    title: str
    text: str
    sentences: tuple[str, ...] | None = None


def read_corpus(path: Path) -> Iterator[CorpusArticle]:
    """The articles of a corpus file, in file order (duplicates included)."""
    try:
        raw = read_text(path, MAX_CORPUS_BYTES)
    except (OSError, BadInput) as exc:
        raise UsageError(f"cannot read corpus {str(path)!r}: {exc}") from None
    try:
        for where, record in json_records(raw, str(path)):
            if not isinstance(record, dict):
                raise UsageError(f"{where}: expected a JSON object")
            if "context" in record:
                yield from _hotpot_paragraphs(record["context"], where)
            elif isinstance(record.get("title"), str) and isinstance(record.get("text"), str):
                yield CorpusArticle(record["title"], record["text"])
            elif isinstance(record.get("id"), str) and isinstance(record.get("lines"), str):
                yield _fever_page(record["id"], record["lines"], where)
            else:
                raise UsageError(
                    f"{where}: expected {{title, text}}, a HotpotQA 'context' "
                    "or a FEVER page {id, lines}"
                )
    except BadInput as exc:  # a record that is not JSON
        raise UsageError(str(exc)) from None


def _hotpot_paragraphs(context: Any, where: str) -> Iterator[CorpusArticle]:
    """A HotpotQA context, in either layout, as one article per paragraph, with its
    sentences."""
    malformed = UsageError(f"{where}: malformed HotpotQA context")
    if isinstance(context, dict):
        titles, paragraphs = context.get("title"), context.get("sentences")
        if not isinstance(titles, list) or not isinstance(paragraphs, list):
            raise malformed
        pairs: Iterator[tuple[Any, Any]] = zip(titles, paragraphs, strict=False)
    elif isinstance(context, list):
        if not all(isinstance(item, list) and len(item) == 2 for item in context):
            raise malformed
        pairs = ((item[0], item[1]) for item in context)
    else:
        raise malformed
    for title, sentences in pairs:
        if not isinstance(title, str) or not isinstance(sentences, list):
            raise malformed
        kept = tuple(str(s) for s in sentences)
        yield CorpusArticle(title, "".join(kept).strip(), kept)


def _fever_page(page: str, lines: str, where: str) -> CorpusArticle:
    """A page of FEVER's dump, its sentences at their numbers (the dump skips some)."""
    numbered: dict[int, str] = {}
    for line in lines.split("\n"):
        number, _, rest = line.partition("\t")
        if not number.strip() and not rest:
            continue
        if not number.isdigit() or int(number) > MAX_FEVER_SENTENCE:
            raise UsageError(f"{where}: a FEVER line that does not start with its number")
        numbered[int(number)] = fever_text(rest.split("\t", 1)[0]).strip()
    sentences = tuple(numbered.get(n, "") for n in range(max(numbered, default=-1) + 1))
    return CorpusArticle(fever_title(page), " ".join(s for s in sentences if s), sentences)


def article_html(title: str, text: str, sentences: tuple[str, ...] | None = None) -> str:
    """The page a corpus article becomes: paragraphs, headings, disambiguation entries; with
    ``sentences``, one paragraph of them, each in an element of its own."""
    body = _text_html(text) if sentences is None else [_sentences_html(sentences)]
    content = "".join([f'<h1>{escape(title)}</h1><div id="mw-content-text">', *body, "</div>"])
    head = f'<head><meta charset="utf-8"><title>{escape(title)}</title></head>'
    return f"<!DOCTYPE html><html>{head}<body>{content}</body></html>"


def _text_html(text: str) -> list[str]:
    parts = []
    entries = False
    for line in (line.strip() for line in text.split("\n")):
        heading = _heading(line)
        if not line:
            continue
        if heading:
            level, name = heading
            parts.append(f"<h{level}>{escape(name)}</h{level}>")
            entries = False
        elif entries:
            href = quote(_path(line))
            parts.append(f'<ul><li><a href="{href}">{escape(line)}</a></li></ul>')
        else:
            parts.append(f"<p>{escape(line)}</p>")
            entries = line.endswith(_REFERS)
    return parts


def _sentences_html(sentences: tuple[str, ...]) -> str:
    """A paragraph of sentences, each numbered from 0 in an element of its own."""
    marked = (
        f'<span {SENTENCE_ATTRIBUTE}="{n}">{escape(sentence)}</span>'
        for n, sentence in enumerate(sentences)
    )
    return f"<p>{''.join(marked)}</p>"


def _heading(line: str) -> tuple[int, str] | None:
    """``(level, name)`` of a ``== Name ==`` line (2 to 6 marks, the same on both sides)."""
    for level in range(6, 1, -1):
        marks = "=" * level
        if len(line) >= 2 * level and line.startswith(marks) and line.endswith(marks):
            return level, line[level:-level].strip()
    return None


def _path(title: str) -> str:
    return title.replace(" ", "_")


def build_zim(
    corpus: Path, out: Path, *, language: str = "eng", name: str = "", force: bool = False
) -> BuildReport:
    """Write ``out`` from ``corpus``: one HTML article per title (first one wins).

    The archive is written under a temporary name and renamed to ``out`` only once complete,
    so a failure or Ctrl-C never leaves a partial archive that looks valid. An existing
    ``out`` is replaced only with ``force``.
    """
    try:
        from libzim.writer import Creator, Hint, Item, StringProvider
    except ImportError:
        raise UsageError(f"building ZIM archives needs libzim: {INSTALL_ZIM}") from None
    if out.is_dir():
        raise UsageError(f"{str(out)!r} is a folder: give the path of the .zim file to write")
    if out.exists() and not force:
        raise UsageError(f"{str(out)!r} already exists: choose another name or pass --force")

    class Page(Item):  # type: ignore[misc]
        def __init__(self, article: CorpusArticle) -> None:
            super().__init__()
            self.title, self.text, self.sentences = article

        def get_path(self) -> str:
            return _path(self.title)

        def get_title(self) -> str:
            return self.title

        def get_mimetype(self) -> str:
            return "text/html"

        def get_contentprovider(self) -> StringProvider:
            return StringProvider(article_html(self.title, self.text, self.sentences))

        def get_hints(self) -> dict[Any, int]:
            return {Hint.FRONT_ARTICLE: True}

    seen: set[str] = set()
    duplicates = 0
    pages = []
    for article in read_corpus(corpus):
        title = " ".join(article.title.split())
        if not title or _path(title) in seen:
            duplicates += 1
            continue
        seen.add(_path(title))
        pages.append(Page(article._replace(title=title)))
    if not pages:
        raise UsageError(f"corpus {str(corpus)!r} has no articles")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create {str(out.parent)!r}: {exc.strerror or exc}") from None
    partial = out.with_name(f".{out.name}.partial")
    # libzim itself writes to "<name>.tmp" and renames it when it finishes.
    leftovers = (partial, partial.with_name(partial.name + ".tmp"))
    creator = Creator(str(partial)).config_indexing(True, language).config_verbose(False)
    try:
        with _deferred_interrupt() as interrupted, silenced(1), creator:
            creator.set_mainpath(pages[0].get_path())
            for page in pages:
                if interrupted.is_set():
                    raise KeyboardInterrupt
                creator.add_item(page)
            for key, value in {
                "Title": name or corpus.stem,
                "Language": language,
                "Creator": "react-cli",
                "Publisher": "react-cli",
                "Description": f"Built by react-cli wiki build-zim from {corpus.name}",
                "Name": corpus.stem,
                "Date": date.today().isoformat(),
            }.items():
                creator.add_metadata(key, value)
        if interrupted.is_set():
            raise KeyboardInterrupt
        os.chmod(partial, replacing_mode(out))  # a replaced archive keeps its permissions
        os.replace(partial, out)
    except (RuntimeError, OSError) as exc:
        _remove(leftovers)
        detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise UsageError(f"cannot write {str(out)!r}: {detail}") from None
    except BaseException:  # Ctrl-C: libzim still closes the archive, with what it had
        _remove(leftovers)
        raise
    return BuildReport(len(pages), duplicates)


def _remove(paths: tuple[Path, ...]) -> None:
    for path in paths:
        with suppress(OSError):
            path.unlink()


@contextmanager
def _deferred_interrupt() -> Iterator[threading.Event]:
    """Ctrl-C sets the event instead of raising: raised inside libzim's callbacks it would
    surface as a garbled RuntimeError or SystemError. The build loop checks the event."""
    event = threading.Event()
    main = threading.current_thread() is threading.main_thread()
    if not main or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield event
        return
    signal.signal(signal.SIGINT, lambda *_: event.set())
    try:
        yield event
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
