"""The URLs settings name: Wikipedia language hosts and variants, MediaWiki roots, usability.

Whether requests can use a URL at all is checked once, when the settings are resolved.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

from react_cli.core.errors import UsageError
from react_cli.core.wording import did_you_mean

LANGUAGES_FILE = Path(__file__).resolve().parents[1] / "data" / "wikipedia-languages.txt"
VARIANT_CODE = re.compile(r"[a-z]{2,3}(?:-[a-z0-9]{2,8})*")
ZH_DEFAULT_VARIANT = "zh-cn"
# Paths of a MediaWiki URL that are not its root: the API, index.php, or a page.
_NOT_A_ROOT = re.compile(r"/w(?:/(?:api|index)\.php)?/?$|/wiki(?:/.*)?$")


def lang_host(lang: str) -> str:
    """The live Wikipedia of a language code: ``zh`` -> ``https://zh.wikipedia.org``."""
    code = lang.strip().lower()
    known = wikipedia_languages()
    if code not in known:
        raise UsageError(
            f"--lang {did_you_mean(lang, known)} is not a Wikipedia language: "
            "give a code such as en, de or zh"
        )
    return f"https://{code}.wikipedia.org"


def wikipedia_languages() -> frozenset[str]:
    """The language editions of Wikipedia (package data; see the file for its source)."""
    lines = LANGUAGES_FILE.read_text(encoding="utf-8").splitlines()
    return frozenset(line for line in lines if line and not line.startswith("#"))


def wiki_root(wiki: str) -> str:
    """A MediaWiki URL given as its API or a page (``https://host/w/api.php``, ``.../wiki/X``)
    is the host root the backend wants; any other value is left as it is."""
    try:
        parts = urlsplit(wiki)
    except ValueError:  # an unparsable URL: refused with the reason by check_url
        return wiki
    if parts.scheme in ("http", "https") and parts.netloc and _NOT_A_ROOT.match(parts.path):
        return f"{parts.scheme}://{parts.netloc}"
    return wiki


def default_variant(wiki: str) -> str | None:
    """zh-cn for Chinese Wikipedia hosts, so text is not a mix of scripts; else none."""
    try:
        host = urlsplit(wiki).hostname or ""
    except ValueError:  # an unparsable URL: refused with the reason by check_url
        return None
    return ZH_DEFAULT_VARIANT if host.startswith("zh.") else None


def check_url(option: str, url: str) -> None:
    """UsageError unless ``url`` is an http(s) URL with a host that requests can use.

    The URL itself is not shown: it may hold a password.
    """
    problem = None
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port out of range or not a number
        host = parts.hostname
    except ValueError as exc:
        problem = str(exc)
    else:
        if parts.scheme.lower() not in ("http", "https"):
            problem = "it is not http:// or https://"
        elif not host:
            problem = "it has no host"
        elif not url.isprintable() or any(ch.isspace() for ch in url):
            problem = "it holds white space or control characters"
        else:
            try:
                host.encode("idna")
            except UnicodeError:
                problem = "its host is not a valid domain name"
    if problem is not None:
        raise UsageError(f"{option} is not a usable URL: {problem}")
