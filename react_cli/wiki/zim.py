"""Wikipedia from a local Kiwix ZIM archive (``--wiki zim:PATH``), read with libzim.

Resolution follows the live backend: the title as written or a case variant (redirects
followed), then a case-insensitive match among the title suggestions, else a miss whose
"Similar" titles come from the full-text index, or from title suggestions when the archive
has none (old archives). Pages are reduced to article text by ``wiki.html``. With a Chinese
``variant`` the text is converted by OpenCC, the maintained converter on PyPI.

An article's source is the archive (file name, UUID, date) and the entry's path, which an
archive never changes; a page that keeps its sentence list (an archive ``wiki build-zim``
made from HotpotQA) gives it too, so sentences are numbered as the corpus numbers them.
"""

from __future__ import annotations

import os
import posixpath
import re
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

from react_cli.core.errors import UsageError, WikiError
from react_cli.core.sources import Wiki, WikiKind
from react_cli.core.wording import quoted
from react_cli.infra.deadline import Deadline
from react_cli.infra.sizelimit import TooLarge, check_size
from react_cli.infra.untrusted import decode, not_regular
from react_cli.wiki.base import MAX_ANSWER_BYTES, REQUEST_FAILED, Article, SearchResult
from react_cli.wiki.html import article_text
from react_cli.wiki.titles import case_variants, title_query

if TYPE_CHECKING:
    from libzim.reader import Archive, Entry
    from libzim.suggestion import SuggestionSearcher

SIMILAR_LIMIT = 5
MAX_REDIRECTS = 10
# MediaWiki variant -> OpenCC configuration converting any Chinese text to it.
OPENCC_CONFIGS = {
    "zh-cn": "t2s",
    "zh-hans": "t2s",
    "zh-sg": "t2s",
    "zh-my": "t2s",
    "zh-tw": "s2twp",
    "zh-hant": "s2t",
    "zh-hk": "s2hk",
    "zh-mo": "s2hk",
}
INSTALL_ZIM = "pip install 'react-cli[zim]'"
INSTALL_ZH = "pip install 'react-cli[zh]'"
# Markers of a disambiguation page: an element id, a text, or a class among an element's classes.
_DISAMBIGUATION_TEXT = re.compile(r'id="disambigbox"|may refer to:|可以指：|可能指：')
_CLASS = re.compile(r'class="([^"]*)"')
_DISAMBIGUATION_CLASSES = frozenset({"disambig", "dmbox-disambig"})
# What libzim raises on a damaged archive: its own errors, a name that is not UTF-8 (its
# message too may be), an entry that a listing names but that is not there.
_DAMAGE = (RuntimeError, UnicodeDecodeError, KeyError)
MESSAGE_CHARS = 160
METADATA_CHARS = 100  # of an archive's Date or Language
SENTENCE_ATTRIBUTE = "data-sentence"
"""Marks an element holding one sentence of a page that keeps its sentence list."""

Converter = Callable[[str], str]


def open_zim(path: str, variant: str | None = None) -> ZimBackend:
    """A backend on the archive at ``path``; UsageError when it cannot be used."""
    file = Path(path).expanduser()
    kind = not_regular(file, follow_symlinks=True)  # libzim would block on a FIFO
    if kind is not None:
        raise UsageError(f"ZIM file {str(file)!r} is {kind}, not a regular file")
    if not file.is_file():
        raise UsageError(f"ZIM file not found: {str(file)!r}{_not_installed(file.name)}")
    try:
        from libzim.reader import Archive
    except ImportError:
        raise UsageError(f"reading ZIM archives needs libzim: {INSTALL_ZIM}") from None
    converters = _converters(variant)
    try:
        # libzim prints index warnings ("No stemming for language 'zh'") on stderr when it
        # opens the archive's indexes; open them all now, quietly, before any output.
        with silenced(2):
            backend = ZimBackend(Archive(file), *converters, name=file.name)
            backend.open_indexes()
    except _DAMAGE as exc:
        raise UsageError(f"{str(file)!r} is not a readable ZIM archive ({_damage(exc)})") from None
    return backend


def _not_installed(name: str) -> str:
    """For a bare name: that no archive of that name is installed either, and how to get one."""
    from react_cli.settings.archives import is_bare_name, zim_folder
    from react_cli.settings.resolve import home_dir

    if not is_bare_name(name):
        return ""
    return (
        f", nor an archive named {name} in {zim_folder(home_dir())}: 'react-cli wiki get "
        f"{name}' downloads it from Kiwix's catalog ('react-cli wiki list' shows those installed)"
    )


@contextmanager
def silenced(fd: int) -> Iterator[None]:
    """File descriptor ``fd`` (1 or 2) sent to the null device within the block: libzim
    writes warnings and progress lines there directly, not through Python."""
    (sys.stdout if fd == 1 else sys.stderr).flush()
    saved = os.dup(fd)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), fd)
        yield
    finally:
        os.dup2(saved, fd)
        os.close(saved)


def _converters(variant: str | None) -> tuple[Converter | None, list[Converter]]:
    """The converter to ``variant`` and those giving a query's other script forms."""
    if variant is None or variant == "zh":
        return None, []
    config = OPENCC_CONFIGS.get(variant.lower())
    if config is None:
        known = ", ".join(OPENCC_CONFIGS)
        raise UsageError(f"unknown --variant {quoted(variant)} for a ZIM archive: expected {known}")
    try:
        import opencc
    except ImportError:
        raise UsageError(
            f"--variant {variant} on a ZIM archive needs OpenCC to convert the text: {INSTALL_ZH}"
        ) from None
    to_variant = opencc.OpenCC(config).convert
    return to_variant, [opencc.OpenCC("t2s").convert, opencc.OpenCC("s2t").convert]


class ZimBackend:
    """Resolves entities in a ZIM archive like Wikipedia's "go" box; implements WikiBackend."""

    def __init__(
        self,
        archive: Archive,
        convert: Converter | None = None,
        title_forms: list[Converter] | None = None,
        *,
        name: str | None = None,
    ) -> None:
        self._archive = archive
        self.wiki = Wiki(
            WikiKind.ZIM,
            archive=name or Path(str(archive.filename)).name,
            uuid=str(archive.uuid),
            date=_metadata(archive, "Date"),
            language=_metadata(archive, "Language"),
        )
        self._convert = convert
        self._title_forms = title_forms or []
        self._old_scheme = not archive.has_new_namespace_scheme
        self._suggester: SuggestionSearcher | None = None
        self._suggester_lock = threading.Lock()  # searches may come from several threads

    def open_indexes(self) -> None:
        """Open the title index now (libzim opens it lazily, on the first suggestion)."""
        self._suggest("a")

    def search(self, entity: str, *, deadline: Deadline) -> SearchResult:
        """Exact title (or a case variant), then a case-insensitive suggestion, else similar
        (a local read: ``deadline`` never matters)."""
        query = title_query(entity)
        if not query:
            return SearchResult(None)
        try:
            entry = self._find(query)
            if entry is None:
                return SearchResult(None, self._similar(query))
            item = entry.get_item()
            check_size(item.size, MAX_ANSWER_BYTES)  # before reading it
            html = decode(bytes(item.content))
            text, sentences = article_text(html), _sentences(html)
            if self._convert:
                text = self._convert(text)
                sentences = sentences and tuple(map(self._convert, sentences))
            article = Article(
                entry.title,
                text,
                self._convert,
                wiki=self.wiki,
                revision=entry.path,
                sentences=sentences,
            )
            if _is_disambiguation(html):
                return SearchResult(article, self._entries(entry, html), disambiguation=True)
            return SearchResult(article)
        except TooLarge as exc:
            raise WikiError(f"{REQUEST_FAILED}the ZIM page for {query!r} is {exc}") from None
        except _DAMAGE as exc:
            raise WikiError(f"{REQUEST_FAILED}ZIM archive read error ({_damage(exc)})") from None

    def _find(self, query: str) -> Entry | None:
        """The article for ``query``: a title as written or in another case or script."""
        forms = [query, *(form(query) for form in self._title_forms)]
        candidates = dict.fromkeys(v for form in forms for v in case_variants(form) or [form])
        for title in candidates:
            if self._archive.has_entry_by_title(title):
                entry = self._article(self._archive.get_entry_by_title(title))
                if entry is not None:
                    return entry
        wanted = query.casefold()
        for entry in self._suggestions(list(candidates)):
            if entry.title.casefold() == wanted:
                return entry
        return None

    def _similar(self, query: str) -> list[str]:
        """Full-text search titles, else title suggestions: the paper's "Similar" list."""
        if self._archive.has_fulltext_index:
            from libzim.search import Query, Searcher

            search = Searcher(self._archive).search(Query().set_query(query))
            paths = list(search.getResults(0, SIMILAR_LIMIT * 2))
            entries = [self._article(self._archive.get_entry_by_path(p)) for p in paths]
        else:
            entries = self._suggestions(case_variants(query) or [query])
        titles = [entry.title for entry in entries if entry is not None]
        return list(dict.fromkeys(titles))[:SIMILAR_LIMIT]

    def _suggestions(self, queries: list[str]) -> list[Entry]:
        """Articles the title index suggests for any of ``queries``, redirects followed."""
        found: dict[str, Entry] = {}
        for text in queries:
            for path in self._suggest(text):
                entry = self._article(self._archive.get_entry_by_path(path))
                if entry is not None:
                    found.setdefault(entry.path, entry)
        return list(found.values())

    def _suggest(self, text: str) -> list[str]:
        """Paths the title index suggests for ``text``, from one reused searcher."""
        with self._suggester_lock:
            if self._suggester is None:
                from libzim.suggestion import SuggestionSearcher

                self._suggester = SuggestionSearcher(self._archive)
            return list(self._suggester.suggest(text).getResults(0, SIMILAR_LIMIT * 2))

    def _article(self, entry: Entry) -> Entry | None:
        """``entry`` with redirects followed, if it is an HTML article."""
        for _ in range(MAX_REDIRECTS):
            if not entry.is_redirect:
                break
            entry = entry.get_redirect_entry()
        if entry.is_redirect or (self._old_scheme and not entry.path.startswith("A/")):
            return None
        return entry if entry.get_item().mimetype.startswith("text/html") else None

    def _entries(self, page: Entry, html: str) -> list[str]:
        """A disambiguation page's entries: the first article link of each list item.

        One walk over the page that counts the list items still waiting for their first link,
        so deeply nested lists cost no more than flat ones.
        """
        from bs4 import BeautifulSoup, Tag

        soup = BeautifulSoup(html, "lxml")
        root = soup.find(id="mw-content-text") or soup
        titles: list[str] = []
        links = waiting = 0  # links seen; open list items that have seen none since they opened
        stack: list[tuple[Iterator[Any], int | None]] = [(iter(root.children), None)]
        while stack:
            children, opened_at = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
                if opened_at == links:  # a list item closing without a link
                    waiting -= 1
                continue
            if not isinstance(child, Tag):
                continue
            if child.name == "a" and child.has_attr("href"):
                target = self._link_target(page.path, child["href"]) if waiting else None
                if target is not None and target.title != page.title:
                    titles.append(target.title)
                links, waiting = links + 1, 0
            if child.name == "li":
                waiting += 1
            stack.append((iter(child.children), links if child.name == "li" else None))
        return list(dict.fromkeys(titles))

    def _link_target(self, base: str, href: Any) -> Entry | None:
        """The article a relative link of the page at ``base`` points to."""
        parts = urlsplit(str(href))
        if parts.scheme or parts.netloc or not parts.path:
            return None
        path = posixpath.normpath(posixpath.join(posixpath.dirname(base), unquote(parts.path)))
        if not self._archive.has_entry_by_path(path):
            return None
        return self._article(self._archive.get_entry_by_path(path))


def _sentences(html: str) -> tuple[str, ...] | None:
    """The sentence list of a page that keeps one (each sentence an element marked
    ``data-sentence``, numbered by document order); None for any other page."""
    if SENTENCE_ATTRIBUTE not in html:
        return None
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "lxml")
    marked = soup.find_all(True, attrs={SENTENCE_ATTRIBUTE: True})
    return tuple(element.get_text() for element in marked) or None


def _metadata(archive: Archive, name: str) -> str | None:
    """An archive's metadata text (``Date``, ``Language``) on one short line, if it has it."""
    try:
        if name not in archive.metadata_keys:
            return None
        text = " ".join(decode(bytes(archive.get_metadata(name))).split())
    except _DAMAGE:
        return None
    return text[:METADATA_CHARS] or None


def _is_disambiguation(html: str) -> bool:
    if _DISAMBIGUATION_TEXT.search(html):
        return True
    classes = (match.group(1).split() for match in _CLASS.finditer(html))
    return any(not _DISAMBIGUATION_CLASSES.isdisjoint(names) for names in classes)


def _damage(exc: BaseException) -> str:
    """What a libzim failure says about the archive, as one short line of text."""
    if isinstance(exc, UnicodeDecodeError):
        return "an entry whose name or message is not UTF-8 text"
    if isinstance(exc, KeyError):
        return "an entry it lists is missing"
    return " ".join(str(exc).split())[:MESSAGE_CHARS]
