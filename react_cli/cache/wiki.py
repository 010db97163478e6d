"""The Wikipedia backend behind the cache: what an entity resolved to, kept by the backend's
identity (the MediaWiki host root without credentials or query string, its variant; or the
ZIM archive's path, size and modification time) and the entity asked for.

An entry keeps what the article's sources are made of (the wiki, the revision of the text,
its URL, the page's own sentence list), so a hit cites the same revision and numbers the same
sentences as the answer it replays. What the file holds is read as untrusted: an entry of the
wrong shape or size is a miss (and is dropped). A result whose text the backend converted (a
ZIM archive read in a Chinese variant) carries its converter, which no file can hold: it is
never cached. Failures are never cached either (they raise).
"""

from __future__ import annotations

from typing import Any

from react_cli.cache.keys import digest
from react_cli.cache.store import CacheStore
from react_cli.core.sources import Wiki
from react_cli.infra.deadline import Deadline
from react_cli.infra.untrusted import dump_json, loads
from react_cli.wiki.base import MAX_ANSWER_BYTES, Article, SearchResult, WikiBackend

KIND = "wiki"
MAX_TITLE_CHARS = 1000
MAX_SIMILAR = 500
MAX_URL_CHARS = 8192
MAX_SENTENCES = 100_000


class CachedBackend:
    """``backend`` with what its entities resolve to kept in ``store``."""

    def __init__(self, backend: WikiBackend, identity: dict[str, Any], store: CacheStore) -> None:
        self._backend = backend
        self._identity = identity
        self._store = store

    def search(self, entity: str, *, deadline: Deadline) -> SearchResult:
        key = digest(KIND, {**self._identity, "entity": entity})
        raw = self._store.get(key)
        if raw is not None:
            found = _result(raw)
            if found is not None:
                return found
            self._store.forget(key)
        result = self._backend.search(entity, deadline=deadline)
        if result.article is None or result.article.convert is None:
            self._store.put(key, KIND, dump_json(_entry(result)).encode())
        return result


def _entry(result: SearchResult) -> dict[str, Any]:
    article = result.article
    stored: dict[str, Any] | None = None
    if article is not None:
        stored = {"title": article.title, "text": article.text}
        if article.wiki is not None:
            stored["wiki"] = article.wiki.to_json()
        if article.revision is not None:
            stored["revision"] = article.revision
        if article.url is not None:
            stored["url"] = article.url
        if article.sentences is not None:
            stored["sentences"] = list(article.sentences)
    return {
        "article": stored,
        "similar": list(result.similar),
        "disambiguation": result.disambiguation,
    }


def _result(raw: bytes) -> SearchResult | None:
    """The stored result, marked cached; None for anything that is not a valid entry."""
    try:
        data = loads(raw)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    stored, similar = data.get("article"), data.get("similar")
    disambiguation = data.get("disambiguation")
    if not isinstance(similar, list) or len(similar) > MAX_SIMILAR:
        return None
    if not all(isinstance(s, str) and len(s) <= MAX_TITLE_CHARS for s in similar):
        return None
    if not isinstance(disambiguation, bool):
        return None
    article = None
    if stored is not None:
        if not isinstance(stored, dict):
            return None
        title, text = stored.get("title"), stored.get("text")
        if not (isinstance(title, str) and isinstance(text, str)):
            return None
        if len(title) > MAX_TITLE_CHARS or len(text) > MAX_ANSWER_BYTES:
            return None
        article = _article(stored, title, text)
        if article is None:
            return None
    return SearchResult(article, similar, disambiguation, cached=True)


def _article(stored: dict[str, Any], title: str, text: str) -> Article | None:
    """The stored article with where its text came from, or None if any of that is wrong."""
    wiki = None
    if stored.get("wiki") is not None:
        try:
            wiki = Wiki.from_json(stored["wiki"])
        except (TypeError, ValueError):
            return None
    revision = stored.get("revision")
    if revision is not None and not _revision(revision):
        return None
    url = stored.get("url")
    if url is not None and not (isinstance(url, str) and len(url) <= MAX_URL_CHARS):
        return None
    sentences = stored.get("sentences")
    if sentences is not None:
        if not isinstance(sentences, list) or len(sentences) > MAX_SENTENCES:
            return None
        if not all(isinstance(item, str) for item in sentences):
            return None
        if sum(map(len, sentences)) > MAX_ANSWER_BYTES:
            return None
    kept = tuple(sentences) if sentences is not None else None
    return Article(title, text, wiki=wiki, revision=revision, url=url, sentences=kept)


def _revision(value: object) -> bool:
    """A revision id (a whole number) or a ZIM entry path (short text)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return value >= 0
    return isinstance(value, str) and len(value) <= MAX_URL_CHARS
