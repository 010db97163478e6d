"""Wikipedia backends and the Search/Lookup session.

This package is imported on the CLI's start-up path, so nothing here imports requests or
bs4 at module level: each backend's opener imports its own dependencies when called.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from react_cli.errors import UsageError
from react_cli.records import RetryObserver
from react_cli.wiki.base import Article, SearchOutcome, WikiBackend, WikiSession

if TYPE_CHECKING:
    from react_cli.http import RetryPolicy

__all__ = ["Article", "SearchOutcome", "WikiBackend", "WikiSession", "open_backend"]

Opener = Callable[..., WikiBackend]


def open_backend(
    spec: str,
    *,
    contact: str | None = None,
    policy: RetryPolicy | None = None,
    timeout_s: float = 20.0,
    variant: str | None = None,
    debug_log: Callable[[str], None] | None = None,
    on_retry: RetryObserver | None = None,
) -> WikiBackend:
    """The backend a ``--wiki`` value names: ``https://en.wikipedia.org`` or ``zim:PATH``.

    ``debug_log`` receives one line per HTTP request and answer (``--debug``), ``on_retry``
    each retry wait as it starts.
    """
    scheme = spec.split(":", 1)[0].lower() if ":" in spec else ""
    opener = _OPENERS.get(scheme)
    if opener is None:
        from react_cli.redaction import redact_url

        raise UsageError(
            f"unknown Wikipedia backend {redact_url(spec)!r}: expected the URL of a MediaWiki "
            "host, e.g. https://en.wikipedia.org, or zim:PATH for a Kiwix ZIM archive"
        )
    return opener(
        spec,
        contact=contact,
        policy=policy,
        timeout_s=timeout_s,
        variant=variant,
        debug_log=debug_log,
        on_retry=on_retry,
    )


def _open_mediawiki(
    url: str,
    *,
    contact: str | None,
    policy: RetryPolicy | None,
    timeout_s: float,
    variant: str | None,
    debug_log: Callable[[str], None] | None,
    on_retry: RetryObserver | None,
) -> WikiBackend:
    """A MediaWikiBackend on a host root such as ``https://en.wikipedia.org``."""
    from react_cli.redaction import Redactor, redact_url, url_secrets

    try:
        host = urlsplit(url).hostname
    except ValueError:  # "http://[::1"
        host = None
    if not host:
        raise UsageError(
            f"Wikipedia URL {redact_url(url)!r} has no valid host, e.g. https://en.wikipedia.org"
        )
    from react_cli.http import make_session, user_agent
    from react_cli.wiki.mediawiki import MediaWikiBackend

    session = make_session(
        user_agent(contact), policy, debug_log, on_retry, Redactor(url_secrets(url))
    )
    return MediaWikiBackend(url, session, timeout_s, variant, policy=policy, on_retry=on_retry)


def _open_zim(
    spec: str,
    *,
    contact: str | None,
    policy: RetryPolicy | None,
    timeout_s: float,
    variant: str | None,
    debug_log: Callable[[str], None] | None,
    on_retry: RetryObserver | None,
) -> WikiBackend:
    """A ZimBackend on the archive ``zim:PATH`` names (libzim is an optional extra)."""
    from react_cli.wiki.zim import open_zim

    path = spec.split(":", 1)[1]
    if not path:
        raise UsageError("--wiki zim:PATH needs the path of a .zim file")
    return open_zim(path, variant)


# Scheme of the backend spec -> opener.
_OPENERS: dict[str, Opener] = {
    "http": _open_mediawiki,
    "https": _open_mediawiki,
    "zim": _open_zim,
}
