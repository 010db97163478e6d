"""The one redactor: every escaped form of a secret, anywhere in a message, is masked.

Each test escapes a whole message the way a library or server would (``repr`` of an exception,
JSON of an error body, percent-encoding of a URL, nested), redacts it, undoes the escaping and
checks the secret is gone: the escapes are computed here, independently of the redactor's own.
"""

from __future__ import annotations

import ast
import base64
import html
import itertools
import json
from collections.abc import Callable
from urllib.parse import quote, quote_plus, unquote, unquote_plus

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from react_cli.core.errors import UsageError
from react_cli.infra.credentials import check_api_key, redact_url, url_secrets
from react_cli.infra.redaction import MASK, Redactor

# (escape a whole message, undo it)
ESCAPES: dict[str, tuple[Callable[[str], str], Callable[[str], str]]] = {
    "raw": (lambda s: s, lambda s: s),
    "repr": (repr, ast.literal_eval),
    "ascii": (ascii, ast.literal_eval),
    "json": (json.dumps, json.loads),
    "json-utf8": (lambda s: json.dumps(s, ensure_ascii=False), json.loads),
    "php-json": (lambda s: json.dumps(s).replace("/", "\\/"), json.loads),
    "percent": (lambda s: quote(s, safe=""), unquote),
    "form": (quote_plus, unquote_plus),
    "html": (html.escape, html.unescape),
    "bytes-repr": (
        lambda s: repr(s.encode("utf-8", "surrogatepass")),
        lambda s: ast.literal_eval(s).decode("utf-8", "surrogatepass"),
    ),
    "json-in-repr": (lambda s: repr(json.dumps(s)), lambda s: json.loads(ast.literal_eval(s))),
    "repr-in-json": (lambda s: json.dumps(repr(s)), lambda s: ast.literal_eval(json.loads(s))),
}
SECRETS = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="*"), min_size=6, max_size=40
)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # a masked "\\" escape
@pytest.mark.parametrize("escape", ESCAPES)
@settings(max_examples=15, deadline=None)
@given(secret=SECRETS)
def test_every_escaped_form_is_masked(escape: str, secret: str) -> None:
    encode, decode = ESCAPES[escape]
    message = f"HTTP 401: Incorrect API key provided: {secret}; see 'docs' \"here\" 50% /x"
    redacted = Redactor([secret])(encode(message))
    assert secret not in decode(redacted)
    assert MASK in redacted


@settings(max_examples=25, deadline=None)
@given(user=SECRETS, password=SECRETS, token=SECRETS)
def test_url_credentials_and_query_values_are_secrets(user: str, password: str, token: str) -> None:
    userinfo = f"{quote(user, safe='')}:{quote(password, safe='')}"
    url = f"https://{userinfo}@h.example/v1?key={quote(token)}"
    redactor = Redactor(url_secrets(url))
    basic = base64.b64encode(f"{user}:{password}".encode()).decode()
    for text in (url, repr(url), json.dumps(url), f"Authorization: Basic {basic}"):
        redacted = redactor(text)
        assert quote(password, safe="") not in redacted and quote(token) not in redacted
        assert basic not in redacted
    assert redact_url(url) == "https://h.example/v1"


@st.composite
def streamed(draw: st.DrawFn) -> tuple[list[str], str, list[str]]:
    """Secrets, a text holding them (escaped, next to one another, cut short, between ordinary
    words) and that text cut into pieces at arbitrary places, as an endpoint streams it."""
    secrets = draw(st.lists(SECRETS, min_size=1, max_size=3))
    pieces = st.one_of(
        st.sampled_from(secrets).flatmap(
            lambda s: st.sampled_from([encode(s) for encode, _ in ESCAPES.values()])
        ),
        st.sampled_from(secrets).flatmap(lambda s: st.integers(1, len(s)).map(lambda n: s[:n])),
        st.text(max_size=8),
    )
    text = "".join(draw(st.lists(pieces, max_size=8)))
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=12)))
    bounds = [0, *cuts, len(text)]
    return secrets, text, [text[a:b] for a, b in itertools.pairwise(bounds)]


@settings(max_examples=40, deadline=None)
@given(streamed())
def test_text_redacted_as_it_streams_is_the_redacted_whole(
    case: tuple[list[str], str, list[str]],
) -> None:
    """However a text is cut into pieces, what passes on is exactly the redacted whole: a
    secret split across pieces is masked, and nothing is lost or shown twice."""
    secrets, text, pieces = case
    redactor = Redactor(secrets)
    shown: list[str] = []
    stream = redactor.stream(shown.append)
    for piece in pieces:
        stream(piece)
    stream.flush()
    assert "".join(shown) == redactor(text)


def test_an_answer_is_redacted_however_deep_it_nests() -> None:
    """A server's JSON is redacted in every string, keys too, without recursion."""
    deep: list[object] = ["sk-0123456789"]
    for _ in range(3_000):  # deeper than the recursion limit
        deep = [deep, {"sk-0123456789": "x sk-0123456789"}]
    redacted = Redactor(["sk-0123456789"]).json(deep)
    for _ in range(3_000):  # deeper than the recursion limit
        assert redacted[1] == {MASK: f"x {MASK}"}
        redacted = redacted[0]
    assert redacted == [MASK]


def test_ordinary_text_streams_at_once() -> None:
    """Only what may be the start of a secret waits for the next piece."""
    shown: list[str] = []
    stream = Redactor(["sk-0123456789"]).stream(shown.append)
    for piece in ("Thought: I s", "hould search", " it. sk-01", "23456789 and s"):
        stream(piece)
    assert shown == ["Thought: I ", "should search", " it. ", "*** and "]
    stream.flush()
    assert shown[-1] == "s"


def test_text_without_secrets_is_unchanged() -> None:
    """A form shorter than four characters is no secret to mask: a password of ``x`` would
    turn every ``x`` of a Wikipedia page into ``***``."""
    assert Redactor(["x", "%41"])("xAx") == "xAx"
    redactor = Redactor(["sk-0123456789", None, ""])
    assert redactor("nothing to hide: sk-01234") == "nothing to hide: sk-01234"
    assert Redactor()("anything") == "anything"


def test_unparsable_urls_never_raise() -> None:
    assert redact_url("http://[::1") == "(a malformed URL)"
    assert url_secrets("http://[::1") == ["http://[::1"]


@pytest.mark.parametrize(
    ("key", "said"),
    [
        ("sk-abcdef\r", "a carriage return (U+000D) at character 10 of 10; a CRLF .env file?"),
        ("sk-abc def", "a space (U+0020 SPACE) at character 7 of 10"),
        ("“sk-abcdef”", "a character (U+201C LEFT DOUBLE QUOTATION MARK) at character 1 of 11"),
        ("sk-abc\u200bdef", "(U+200B ZERO WIDTH SPACE) at character 7 of 10"),
        ("sk-\x00abc\x00", "a control or unassigned character (U+0000) at character 4 of 8 "),
        ("sk-é", "(U+00E9 LATIN SMALL LETTER E WITH ACUTE) at character 4 of 4"),
        ("\tsk", "a tab (U+0009) at character 1 of 3"),
    ],
)
def test_a_bad_api_key_is_named_and_placed_but_never_echoed(key: str, said: str) -> None:
    with pytest.raises(UsageError) as failure:
        check_api_key(key)
    message = str(failure.value)
    assert said in message
    assert "abc" not in message and "sk-" not in message


@settings(max_examples=100, deadline=None)
@given(st.text(min_size=1, max_size=60))
def test_any_key_is_accepted_only_if_printable_ascii(key: str) -> None:
    printable = all(0x21 <= ord(c) <= 0x7E for c in key)
    try:
        check_api_key(key)
    except UsageError as exc:
        assert not printable
        # The message says where the bad characters are and never quotes the rest of the key
        # (a key of one space is found in any message: it must depend on the good characters).
        masked = "".join("x" if 0x21 <= ord(c) <= 0x7E else c for c in key)
        with pytest.raises(UsageError) as again:
            check_api_key(masked)
        assert str(again.value) == str(exc)
    else:
        assert printable
