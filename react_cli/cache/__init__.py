"""The cache (``--cache``): model calls at temperature 0 and Wikipedia's answers, kept in
``<home>/cache/`` so a second run of the same questions makes no request.

It wraps the model client and the Wikipedia backend at their seams (``llm.base.Model`` and
``Sampler``, ``wiki.base.WikiBackend``), so neither the loop nor the tools know of it; hits
are marked on what they answer (``Completion.cached``, ``SearchResult.cached``). The file is
``store.CacheStore`` (SQLite in WAL mode); ``model`` and ``wiki`` are the wrappers.
"""

from __future__ import annotations

from pathlib import Path

from react_cli.cache.store import FILE_NAME, CacheStore, Warn

FOLDER = "cache"


def cache_path(home: Path) -> Path:
    """Where the cache of the home directory ``home`` lives."""
    return home / FOLDER / FILE_NAME


def open_cache(home: Path, max_mb: int, warn: Warn) -> CacheStore:
    """The home directory's cache, at most ``max_mb`` MiB; a file that cannot be used is one
    warning (``warn``) and a store that answers nothing."""
    return CacheStore(cache_path(home), max_mb << 20, warn)
