"""What looks like a credential, and how it is shown: the names that say their value is one
(an environment variable's, an option's, a header's, a query parameter's), URLs and headers
that carry one, their secrets for a :class:`~react_cli.infra.redaction.Redactor` to learn, and
their forms fit to show; and the characters an API key may hold.

The one rule behind what a stdio server's environment withholds, what ``--mcp`` arguments
mask, and what every client teaches its redactor.
"""

from __future__ import annotations

import base64
import binascii
import re
import unicodedata
from collections.abc import Callable, Mapping
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from react_cli.core.errors import UsageError
from react_cli.infra.redaction import MASK

MIN_QUERY_VALUE_CHARS = 8  # one query value is a secret of its own from this length (tokens)


_WORDS = re.compile(r"[a-z]+")
_HOLDS = ("token", "secret", "password", "passwd", "passphrase", "credential", "apikey")
_ENDS = ("key", "auth")  # short: only at a word's end (``KEYBOARD``, ``AUTHOR`` are not)
_IS = frozenset({"pass", "pat", "authorization", "cookie", "bearer", "jwt", "sig", "signature"})
_NOT = ("tokeniz",)  # ``TOKENIZERS_PARALLELISM``


def secret_name(name: str) -> bool:
    """Whether a name (an environment variable's, an option's, a header's, a query
    parameter's, a ``key=value`` argument's) says its value is a credential: one of its words
    (runs of letters, any case) holds token, secret, password, passwd, passphrase, credential
    or apikey, ends with key or auth, or is pass, pat, authorization, cookie, bearer, jwt, sig
    or signature, a plural too. ``GITHUB_TOKEN``, ``--api-key``, ``X-Api-Key``,
    ``AWS_SECRET_ACCESS_KEY``, ``access_token``, ``DB_PASS``, ``SSH_AUTH_SOCK`` are;
    ``TOKENIZERS_PARALLELISM``, ``GIT_AUTHOR_NAME``, ``KEYBOARD``, ``XAUTHORITY`` are not."""
    for word in _WORDS.findall(name.lower()):
        if word.startswith(_NOT):
            continue
        for form in {word, word.removesuffix("s")}:
            if any(part in form for part in _HOLDS) or form.endswith(_ENDS) or form in _IS:
                return True
    return False


def secret_url(value: str) -> bool:
    """Whether ``value`` is a URL that carries a credential: user information (``user:pass@``,
    a token as the user), or a query parameter named like one (``?token=``, ``?api_key=``,
    ``?sig=``); an unparsable URL does if it holds an ``@``."""
    if "://" not in value:
        return False
    try:
        parts = urlsplit(value.strip())
    except ValueError:
        return "@" in value
    named = (key for key, _ in parse_qsl(parts.query, keep_blank_values=True))
    return "@" in parts.netloc or any(secret_name(key) for key in named)


def url_secrets(url: str) -> list[str]:
    """What of a URL must never be shown: its user information (``user:password``), the
    password alone, the whole query string, each long query value and the value of each
    parameter named like a credential (all of an unparsable URL)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return [url]
    userinfo = parts.netloc.rpartition("@")[0]
    secrets = [userinfo, userinfo.partition(":")[2], parts.query]
    secrets += [
        value
        for key, value in parse_qsl(parts.query)
        if len(value) >= MIN_QUERY_VALUE_CHARS or secret_name(key)
    ]
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
    return {
        k: masked_credential(v) if k.lower() in SECRET_HEADERS else v for k, v in headers.items()
    }


def masked_credential(value: str) -> str:
    """A credential's value as shown: ``***``, or ``Bearer ***`` (the scheme kept)."""
    scheme, _, credentials = value.partition(" ")
    return f"{scheme} {MASK}" if credentials and scheme.lower() in _SCHEMES else MASK


_CREDENTIAL_HEADERS = SECRET_HEADERS - {"cookie", "set-cookie"}
"""Headers that carry the user's credentials (cookies are the server's own, and change)."""


def header_secrets(headers: Mapping[str, str | bytes]) -> list[str]:
    """The credentials a request's headers carry, however they got there (an API key, URL user
    information, a ``~/.netrc`` entry): the credentials of each ``Authorization``-like header,
    and of Basic ones the ``user:password`` they encode and the password alone."""
    found: list[str] = []
    for name, raw in headers.items():
        if name.lower() not in _CREDENTIAL_HEADERS:
            continue
        found += credential_secrets(raw.decode("latin-1") if isinstance(raw, bytes) else raw)
    return found


def credential_secrets(value: str) -> list[str]:
    """What a credential's value holds: itself, or of an ``Authorization``-like one
    (``Bearer X``, ``Basic X``) its credentials, and of Basic ones the ``user:password`` they
    encode and the password alone."""
    scheme, _, credentials = value.strip().partition(" ")
    if not credentials or scheme.lower() not in _SCHEMES:
        return [value]
    found = [credentials.strip()]
    if scheme.lower() == "basic":
        found += _basic_secrets(credentials.strip())
    return found


def _basic_secrets(token: str) -> list[str]:
    """``user:password`` and the password of a Basic token (nothing if it is not base64)."""
    try:
        raw = base64.b64decode(token, validate=True)
    except (binascii.Error, ValueError):
        return []
    try:
        pair = raw.decode("utf-8")
    except UnicodeDecodeError:
        pair = raw.decode("latin-1")
    return [pair, pair.partition(":")[2]]


_KEY_CHARS = frozenset(map(chr, range(0x21, 0x7F)))  # printable ASCII without the space
_CONTROL_NAMES = {"\r": "a carriage return", "\n": "a line feed", "\t": "a tab"}


def check_api_key(key: str | None) -> None:
    """Refuse an API key no endpoint could accept, saying what and where, never what it is.

    Keys are printable ASCII without spaces; anything else is a copy-and-paste accident (a
    trailing CR from a CRLF ``.env`` file, curly quotes, a zero-width space) that would
    otherwise fail inside the HTTP library, in a message quoting the key.
    """
    check_characters(
        key,
        _KEY_CHARS.__contains__,
        "the API key (--api-key, OPENAI_API_KEY or api_key in the config file)",
        "API keys are printable ASCII without spaces",
    )


def check_characters(
    value: str | None, allowed: Callable[[str], bool], what: str, rule: str
) -> None:
    """UsageError naming the first character of ``value`` that is not ``allowed``, where it
    is and how many more there are, by code point and name, never the value itself: ``what``
    has it, ``rule`` says what is allowed."""
    bad = [i for i, char in enumerate(value or "") if not allowed(char)]
    if value is None or not bad:
        return
    first = value[bad[0]]
    more = f" (and {len(bad) - 1} more such characters)" if len(bad) > 1 else ""
    hint = "; a CRLF .env file?" if first == "\r" else ""
    raise UsageError(
        f"{what} has {_describe(first)} at character {bad[0] + 1} of {len(value)}{more}{hint}: "
        f"{rule}"
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
