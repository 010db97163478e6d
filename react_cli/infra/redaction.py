"""Secrets kept out of every message, log line and trace: one policy for the whole tool.

A secret reaches text in disguise: ``repr`` of an exception argument, JSON in a server's error
body, percent-encoding in a URL, base64 in a Basic ``Authorization`` header, HTML in an error
page. ``Redactor`` knows each secret in all those forms (and in two of them nested, e.g. JSON
inside a ``repr``) and replaces any of them with ``***``. The model client, the Wikipedia
backends and the HTTP debug log each hold one built from their secrets: the API key, and the
user information and query string of their URL; their session teaches it every other
credential a request carries as it is sent (``~/.netrc``, a proxy's user information).

It masks every text that comes back from a server, not only error messages: a server may echo
its request (a wiki page quoting its URL, an endpoint quoting its ``Authorization`` header), so
completions (``stream`` as they arrive), observations (``json``) and error bodies all pass it.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import functools
import html
import json
import re
import threading
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple
from urllib.parse import parse_qsl, quote, quote_plus, unquote, urlsplit, urlunsplit

from react_cli.core.errors import UsageError

MASK = "***"
MIN_QUERY_VALUE_CHARS = 8  # one query value is a secret of its own from this length (tokens)
MIN_SECRET_CHARS = 4
"""A shorter form is never masked: a one-letter password masked in a Wikipedia page would turn
every ``a`` of its text into ``***`` (and keep nothing secret: four characters are guessed at
once)."""


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
    return frozenset(form for form in forms if len(form) >= MIN_SECRET_CHARS)


@functools.lru_cache(maxsize=64)
def _alternation(forms: tuple[str, ...]) -> re.Pattern[str]:
    """One pattern matching any of ``forms``, tried in the order given (longest first)."""
    return re.compile("|".join(map(re.escape, forms)))


class _Forms(NamedTuple):
    """What a redactor knows, replaced whole when it learns more (threads read it unlocked)."""

    by_length: tuple[str, ...] = ()  # longest first: the alternation tries them in this order
    ordered: tuple[str, ...] = ()  # in code point order, to find the forms a text begins
    firsts: frozenset[str] = frozenset()  # the first character of each


class Redactor:
    """Replaces every known secret, in every escaped form, with ``***``.

    Cheap on text holding none of them (one substring test per form), linear on text that
    does: one pass of an alternation of literals, longest first. The alternation is of the
    forms the text holds (the only ones that can match in it), compiled once per process for
    the same forms: a run that never meets a secret never compiles one, and one that does
    compiles the few forms it met, not the few hundred of each secret. ``learn`` adds secrets
    met later (an eval's threads share one redactor: it is safe to call from threads).
    """

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        self._lock = threading.Lock()
        self._secrets: frozenset[str] = frozenset()
        self._known = _Forms()
        self.learn(secrets)

    def learn(self, secrets: Iterable[str | None]) -> None:
        """Mask ``secrets`` too from now on."""
        new = {secret for secret in secrets if secret} - self._secrets
        if not new:
            return
        with self._lock:
            forms = set(self._known.by_length)
            for secret in new:
                forms |= escaped_forms(secret)
            self._secrets |= new
            self._known = _Forms(
                tuple(sorted(forms, key=lambda form: (-len(form), form))),
                tuple(sorted(forms)),
                frozenset(form[0] for form in forms),
            )

    def __call__(self, text: str) -> str:
        present = _held(self._known.by_length, text)
        return _alternation(present).sub(MASK, text) if present else text

    def json(self, value: Any) -> Any:
        """A JSON value (a server's answer) with every string in it, keys too, redacted: a
        copy, made without recursion (a hostile answer may nest as deep as the parser went)."""
        if not self._known.by_length:
            return value
        root = [value]
        todo: list[tuple[Any, Any]] = [(root, 0)]  # (container, key) of each value to redact
        while todo:
            container, key = todo.pop()
            item = container[key]
            if isinstance(item, str):
                container[key] = self(item)
            elif isinstance(item, list):
                container[key] = items = list(item)
                todo += [(items, index) for index in range(len(items))]
            elif isinstance(item, dict):
                container[key] = fields = {self(str(k)): v for k, v in item.items()}
                todo += [(fields, k) for k in fields]
        return root[0]

    def stream(self, sink: Callable[[str], None]) -> StreamRedactor:
        """A sink for text that arrives in pieces, passing it on to ``sink`` redacted."""
        return StreamRedactor(self, sink)

    def log(self, log: Callable[[str], None] | None) -> Callable[[str], None] | None:
        """``log`` with every line redacted first (None stays None)."""
        if log is None:
            return None
        sink = log
        return lambda line: sink(self(line))

    def settle(self, text: str) -> tuple[str, str]:
        """``text`` (the start of a longer one) split into what is settled, redacted, and the
        rest, held back from the first place where a form may be starting, so that the
        settled parts joined are exactly the redacted whole."""
        known = self._known
        forms = known.by_length
        if not forms:
            return text, ""
        start = max(0, len(text) - len(forms[0]) + 1)  # no longer suffix can start a form
        open_at = next(
            (
                at
                for at in range(start, len(text))
                if text[at] in known.firsts and _begins(known.ordered, text[at:])
            ),
            len(text),
        )
        present = _held(forms, text)
        if not present:
            return text[:open_at], text[open_at:]
        # a match starting before open_at is final: no longer form can still match there
        out, done = [], 0
        for match in _alternation(present).finditer(text):
            if match.start() >= open_at:
                break
            out += [text[done : match.start()], MASK]
            done = match.end()
        cut = max(open_at, done)
        out.append(text[done:cut])
        return "".join(out), text[cut:]


def _held(forms: tuple[str, ...], text: str) -> tuple[str, ...]:
    """The ``forms`` that occur in ``text``, in their order: their alternation matches in
    ``text`` exactly where that of all ``forms`` would (a form it does not hold matches nowhere
    in it)."""
    return tuple(form for form in forms if form in text)


def _begins(ordered: tuple[str, ...], text: str) -> bool:
    """Whether ``text`` begins a longer one of the ``ordered`` forms."""
    at = bisect.bisect_left(ordered, text)
    while at < len(ordered) and ordered[at].startswith(text):
        if len(ordered[at]) > len(text):
            return True
        at += 1
    return False


class StreamRedactor:
    """Text arriving in pieces (a streamed completion), passed on redacted as soon as it can be.

    What is passed on is exactly the redacted whole: text is held back only from where a
    secret's form may be starting (``Redactor.settle``) until the next piece settles it, so a
    secret split across pieces is masked and ordinary text streams at once. ``flush`` passes
    on what is held when the text ends.
    """

    def __init__(self, redactor: Redactor, sink: Callable[[str], None]) -> None:
        self._redactor = redactor
        self._sink = sink
        self._held = ""

    def __call__(self, piece: str) -> None:
        settled, self._held = self._redactor.settle(self._held + piece)
        if settled:
            self._sink(settled)

    def flush(self) -> None:
        held, self._held = self._held, ""
        if held:
            self._sink(self._redactor(held))


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
