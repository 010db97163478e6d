"""Hypothesis strategies for hostile local input, one per class the tool must survive:
size, depth, encoding, control characters, numbers, wrong shapes.

JSON values are produced as raw JSON text ("literals"), so they can hold what ``json.dumps``
never writes: ``NaN``, ``1e400``, 5,000-digit integers, lone-surrogate escapes, 10^5 levels of
nesting. ``inject`` puts one into a document in place of one of its values.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

PLACEHOLDER = "@@hostile@@"


def cli_fuzz(max_examples: int) -> settings:
    """Settings for a hypothesis test that drives the CLI: ``max_examples`` runs, no deadline
    (a run's time depends on the machine's load; each test bounds it itself), and the test's
    function-scoped runner reused across examples (each run cleans its environment)."""
    return settings(
        max_examples=max_examples,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )


# Text people and programs really send: letters of several scripts, white space, controls,
# C1 controls, bidi overrides, escape sequences, markup, and (in argv) lone surrogates.
_PIECES = st.one_of(
    st.characters(categories=["L", "N", "P", "S", "Zs"]),
    st.sampled_from(["\x00", "\x07", "\x1b", "\x7f", "\x9b", "\u202e", "\u200b", "\n", "\t"]),
    st.sampled_from(["\x1b[31m", "\x1b]0;title\x07", "[bold]", "[/]", "${HOME}", "\ufeff"]),
)
text = st.lists(_PIECES, max_size=20).map("".join)
surrogate = st.characters(categories=["Cs"])
any_text = st.lists(st.one_of(_PIECES, surrogate), max_size=20).map("".join)
"""Text as argv or a surrogate-escaped file name gives it to Python: lone surrogates included."""

deep_literal = st.sampled_from([50, 99, 100, 101, 1_000, 100_000]).flatmap(
    lambda depth: st.sampled_from(["[" * depth + "]" * depth, '{"a":' * depth + "1" + "}" * depth])
)
number_literal = st.sampled_from(
    [
        "1e400",
        "-1e400",
        "1e-400",
        "NaN",
        "Infinity",
        "-Infinity",
        "9" * 5000,
        "-" + "9" * 101,
        "1" + "0" * 99,
        "123456789012345678901234567890",
        "0.1e1",
        "-0",
        "1.7976931348623157e308",
    ]
)
string_literal = st.one_of(
    text.map(json.dumps),
    st.lists(st.integers(0xD800, 0xDFFF), min_size=1, max_size=3).map(
        lambda cs: '"a' + "".join(f"\\u{c:04x}" for c in cs) + 'b"'
    ),
    st.sampled_from(['"\\u0000\\u001b[2J"', '"' + "x" * 200_000 + '"', '""', '"   "']),
)
shape_literal = st.sampled_from(
    ["null", "true", "false", "0", "-1", "[]", "{}", "[1, 2]", '{"a": 1}']
)
json_literal = st.one_of(deep_literal, number_literal, string_literal, shape_literal)
"""One hostile JSON value, as JSON text."""
json_value = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
"""Any JSON value of a small nested shape, as Python objects (where a well-formed document
holds something of the wrong shape)."""


def inject(document: Any, path: tuple[str | int, ...], literal: str) -> str:
    """``document`` as JSON text with the value at ``path`` replaced by ``literal``."""
    if not path:
        return literal
    copy = json.loads(json.dumps(document))
    parent = copy
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = PLACEHOLDER
    return json.dumps(copy, indent=1).replace(json.dumps(PLACEHOLDER), literal, 1)


def paths(document: Any, prefix: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    """Every path to a value in ``document`` (the document itself included)."""
    found = [prefix]
    if isinstance(document, dict):
        for key, value in document.items():
            found += paths(value, (*prefix, key))
    elif isinstance(document, list):
        for index, value in enumerate(document):
            found += paths(value, (*prefix, index))
    return found


@st.composite
def mutated(draw: st.DrawFn, document: Any) -> bytes:
    """``document`` as a file, damaged one way: a value replaced, cut short, bytes that are not
    UTF-8, a byte-order mark, emptied, or blown up in size."""
    original = json.dumps(document, indent=1).encode()
    how = draw(st.sampled_from(["value", "value", "value", "cut", "bytes", "bom", "empty", "big"]))
    if how == "value":
        path = draw(st.sampled_from(paths(document)))
        return inject(document, path, draw(json_literal)).encode("utf-8", "surrogatepass")
    if how == "cut":
        return original[: draw(st.integers(0, len(original) - 1))]
    if how == "bytes":
        at = draw(st.integers(0, len(original)))
        junk = draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00", b"\xe2\x82"]))
        return original[:at] + junk + original[at:]
    if how == "bom":
        return b"\xef\xbb\xbf" + original
    if how == "empty":
        return draw(st.sampled_from([b"", b"\n", b"   "]))
    padding = b'"' + b"p" * 500_000 + b'"'  # half a megabyte in one string
    if isinstance(document, dict):
        return original[:-1] + b', "padding": ' + padding + b"}"
    return original[:-1] + b", " + padding + b"]"
