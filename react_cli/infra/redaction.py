"""Secrets kept out of every message, log line and trace: one policy for the whole tool.

A secret reaches text in disguise: ``repr`` of an exception argument, JSON in a server's error
body, percent-encoding in a URL, base64 in a Basic ``Authorization`` header, HTML in an error
page. ``Redactor`` knows each secret in all those forms (and in two of them nested, e.g. JSON
inside a ``repr``) and replaces any of them with ``***``. The model client, the Wikipedia
backends and the HTTP debug log each hold one built from their secrets: the API key, and the
user information and query string of their URL.
"""

from __future__ import annotations

import base64
import functools
import html
import json
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from urllib.parse import parse_qsl, quote, quote_plus, unquote, urlsplit, urlunsplit

from react_cli.core.errors import UsageError

MASK = "***"
MIN_QUERY_VALUE_CHARS = 8  # one query value is a secret of its own from this length (tokens)


def _inner(quoted: str) -> str:
    """A quoted literal without its delimiters (``'x'`` -> ``x``, ``b'x'`` -> ``x``)."""
    return quoted[quoted.index(quoted[-1]) + 1 : -1]


_HEX_ESCAPE = re.compile("%[0-9A-F]{2}")


def _python(render: Callable[[str], str]) -> tuple[Callable[[str], str], ...]:
    """A Python literal's inner text, as written alone and inside one that escapes ``'``."""
    return (
        lambda s: _inner(render(s)),
        lambda s: _inner(render(s + "'\"")).removesuffix("\\'\""),
    )


# Each way a message may spell a string: as Python source (str or its UTF-8 bytes), as JSON
# (PHP's too, with "\/"), URL- or form-encoded, as HTML, as base64 (Basic auth).
_ESCAPES: tuple[Callable[[str], str], ...] = (
    *_python(repr),
    *_python(ascii),
    *_python(lambda s: repr(s.encode("utf-8", "surrogatepass"))),
    lambda s: json.dumps(s)[1:-1],
    lambda s: json.dumps(s, ensure_ascii=False)[1:-1],
    lambda s: json.dumps(s)[1:-1].replace("/", "\\/"),
    lambda s: quote(s, safe=""),
    lambda s: quote(s),
    lambda s: _HEX_ESCAPE.sub(lambda m: m.group().lower(), quote(s, safe="")),
    lambda s: quote_plus(s),
    lambda s: html.escape(s),
    lambda s: base64.b64encode(s.encode("utf-8", "surrogatepass")).decode(),
)


@functools.lru_cache(maxsize=64)
def escaped_forms(secret: str) -> frozenset[str]:
    """``secret`` as written and under every escape, once or twice nested (remembered for the
    few secrets a process meets: every client and backend builds a ``Redactor`` of its own)."""
    forms = {secret, unquote(secret)}
    for _ in range(2):
        forms |= {escape(form) for form in forms for escape in _ESCAPES}
    return frozenset(form for form in forms if form)


@functools.lru_cache(maxsize=64)
def _alternation(forms: tuple[str, ...]) -> re.Pattern[str]:
    """One pattern matching any of ``forms``, tried in the order given (longest first)."""
    return re.compile("|".join(map(re.escape, forms)))


class Redactor:
    """Replaces every known secret, in every escaped form, with ``***``.

    Cheap on text holding none of them (one substring test per form), linear on text that
    does: one pass of an alternation of literals, longest first. The alternation (a few hundred
    literals per secret) is compiled the first time a text holds a secret, so a run that never
    meets one never pays for it, and once per process for the same secrets.
    """

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        forms: set[str] = set()
        for secret in secrets:
            if secret:
                forms |= escaped_forms(secret)
        self._forms = tuple(sorted(forms, key=lambda form: (-len(form), form)))

    def __call__(self, text: str) -> str:
        if not any(form in text for form in self._forms):
            return text
        return _alternation(self._forms).sub(MASK, text)

    def log(self, log: Callable[[str], None] | None) -> Callable[[str], None] | None:
        """``log`` with every line redacted first (None stays None)."""
        if log is None:
            return None
        sink = log
        return lambda line: sink(self(line))


def url_secrets(url: str) -> list[str]:
    """What of a URL must never be shown: its user information (``user:password``), the
    password alone, the whole query string and each long query value (all of an unparsable
    URL)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return [url]
    userinfo = parts.netloc.rpartition("@")[0]
    secrets = [userinfo, userinfo.partition(":")[2], parts.query]
    secrets += [v for _, v in parse_qsl(parts.query) if len(v) >= MIN_QUERY_VALUE_CHARS]
    return [secret for secret in secrets if secret]


def redact_url(url: str, *, keep_query: bool = False) -> str:
    """A URL fit for messages, logs and traces: user and password dropped, and the query
    string unless ``keep_query`` (a debug log shows the API parameters; pass the line through
    a ``Redactor`` holding the URL's own secrets)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "(a malformed URL)"
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, host, parts.path, parts.query if keep_query else "", ""))


SECRET_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "cookie", "set-cookie", "api-key", "x-api-key"}
)


_SCHEMES = frozenset({"basic", "bearer", "digest", "token"})


def redact_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """Headers fit for a log: the values of credential headers replaced by ``***`` (an
    ``Authorization`` scheme such as ``Bearer`` kept, which says how the request authenticated)."""
    return {k: _masked(v) if k.lower() in SECRET_HEADERS else v for k, v in headers.items()}


def _masked(value: str) -> str:
    scheme, _, credentials = value.partition(" ")
    return f"{scheme} {MASK}" if credentials and scheme.lower() in _SCHEMES else MASK


_KEY_CHARS = frozenset(map(chr, range(0x21, 0x7F)))  # printable ASCII without the space
_CONTROL_NAMES = {"\r": "a carriage return", "\n": "a line feed", "\t": "a tab"}


def check_api_key(key: str | None) -> None:
    """Refuse an API key no endpoint could accept, saying what and where, never what it is.

    Keys are printable ASCII without spaces; anything else is a copy-and-paste accident (a
    trailing CR from a CRLF ``.env`` file, curly quotes, a zero-width space) that would
    otherwise fail inside the HTTP library, in a message quoting the key.
    """
    if key is None:
        return
    bad = [i for i, char in enumerate(key) if char not in _KEY_CHARS]
    if not bad:
        return
    first = key[bad[0]]
    more = f" (and {len(bad) - 1} more such characters)" if len(bad) > 1 else ""
    hint = "; a CRLF .env file?" if first == "\r" else ""
    raise UsageError(
        f"the API key (--api-key, OPENAI_API_KEY or api_key in the config file) has "
        f"{_describe(first)} at character {bad[0] + 1} of {len(key)}{more}{hint}: API keys "
        "are printable ASCII without spaces"
    )


def _describe(char: str) -> str:
    """What a stray character is, by its code point and Unicode name, never by itself."""
    code = f"U+{ord(char):04X}"
    if char in _CONTROL_NAMES:
        return f"{_CONTROL_NAMES[char]} ({code})"
    name = unicodedata.name(char, "")
    if not name:
        return f"a control or unassigned character ({code})"
    return f"{'a space' if char.isspace() else 'a character'} ({code} {name})"
