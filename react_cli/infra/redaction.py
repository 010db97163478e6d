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
What looks like a credential (a name, a URL, a header) is ``infra.credentials``'.
"""

from __future__ import annotations

import base64
import bisect
import functools
import html
import json
import re
import threading
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple
from urllib.parse import quote, quote_plus, unquote

MASK = "***"
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
