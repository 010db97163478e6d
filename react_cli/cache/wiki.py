"""The Wikipedia backend behind the cache: what an entity resolved to, kept by the backend's
identity (the MediaWiki host root without credentials or query string, its variant; or the
ZIM archive's path, size and modification time) and the entity asked for.

What the file holds is read as untrusted: an entry of the wrong shape or size is a miss (and
is dropped). A result whose text the backend converted (a ZIM archive read in a Chinese
variant) carries its converter, which no file can hold: it is never cached. Failures are never
cached either (they raise).
"""

from __future__ import annotations

from typing import Any

from react_cli.cache.keys import digest
from react_cli.cache.store import CacheStore
from react_cli.infra.deadline import Deadline
from react_cli.infra.untrusted import dump_json, loads
from react_cli.wiki.base import MAX_ANSWER_BYTES, Article, SearchResult, WikiBackend

KIND = "wiki"
MAX_TITLE_CHARS = 1000
MAX_SIMILAR = 500


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
    return {
        "article": None if article is None else {"title": article.title, "text": article.text},
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
        article = Article(title, text)
    return SearchResult(article, similar, disambiguation, cached=True)
