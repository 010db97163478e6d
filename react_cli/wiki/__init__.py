"""Wikipedia backends: MediaWiki hosts and Kiwix ZIM archives.

This package is imported on the CLI's start-up path, so nothing here imports requests or
bs4 at module level: the backend a ``--wiki`` value names is imported when it is opened.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from react_cli.core.errors import UsageError
from react_cli.core.records import RetryObserver
from react_cli.wiki.base import Article, SearchResult, WikiBackend

if TYPE_CHECKING:
    from react_cli.infra.limiter import Limiter
    from react_cli.infra.retry import RetryPolicy

__all__ = ["Article", "SearchResult", "WikiBackend", "backend_identity", "open_backend"]


def backend_identity(spec: str, variant: str | None) -> dict[str, object]:
    """What identifies the backend a ``--wiki`` value names, for the cache: a MediaWiki host
    root without credentials or query string, or a ZIM archive's resolved path, size and
    modification time (another archive at the same path is another backend); its variant."""
    from react_cli.infra.credentials import redact_url

    if spec.split(":", 1)[0].lower() != "zim":
        return {"backend": redact_url(spec), "variant": variant}
    path = Path(spec.split(":", 1)[1]).expanduser()
    try:
        found = path.stat()
        stamp: object = [found.st_size, found.st_mtime_ns]
    except OSError:
        stamp = None
    return {"backend": f"zim:{path.resolve()}", "file": stamp, "variant": variant}


def open_backend(
    spec: str,
    *,
    contact: str | None = None,
    policy: RetryPolicy | None = None,
    timeout_s: float = 20.0,
    variant: str | None = None,
    debug_log: Callable[[str], None] | None = None,
    on_retry: RetryObserver | None = None,
    limiter: Limiter | None = None,
) -> WikiBackend:
    """The backend a ``--wiki`` value names: ``https://en.wikipedia.org`` (a MediaWiki host
    root) or ``zim:PATH`` (a Kiwix ZIM archive; libzim is an optional extra).

    For a MediaWiki host, ``contact`` goes into the User-Agent, ``debug_log`` receives one
    line per HTTP request and answer (``--debug``), ``on_retry`` each retry wait as it starts,
    and ``limiter`` lets its requests through (a ZIM archive makes none).
    """
    from react_cli.core.wording import quoted
    from react_cli.infra.credentials import redact_url, url_secrets
    from react_cli.infra.redaction import Redactor

    scheme = spec.split(":", 1)[0].lower() if ":" in spec else ""
    if scheme == "zim":
        from react_cli.wiki.zim import open_zim

        path = spec.split(":", 1)[1]
        if not path:
            raise UsageError("--wiki zim:PATH needs the path of a .zim file")
        return open_zim(path, variant)
    if scheme not in ("http", "https"):
        raise UsageError(
            f"unknown Wikipedia backend {quoted(redact_url(spec))}: expected the URL of a "
            "MediaWiki host, e.g. https://en.wikipedia.org, or zim:PATH for a Kiwix ZIM archive"
        )
    try:
        host = urlsplit(spec).hostname
    except ValueError:  # "http://[::1"
        host = None
    if not host:
        raise UsageError(
            f"Wikipedia URL {quoted(redact_url(spec))} has no valid host, e.g. https://en.wikipedia.org"
        )
    from react_cli.infra.http import make_session, user_agent
    from react_cli.wiki.mediawiki import MediaWikiBackend

    redactor = Redactor(url_secrets(spec))
    session = make_session(user_agent(contact), debug_log, redactor)
    return MediaWikiBackend(
        spec,
        session,
        timeout_s,
        variant,
        policy=policy,
        on_retry=on_retry,
        redactor=redactor,
        limiter=limiter,
    )
