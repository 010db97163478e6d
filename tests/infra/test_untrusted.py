"""The gate every local byte goes through: exact bounds, clean text, writers that never fail."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hostile import any_text, json_literal
from hypothesis import given, settings
from hypothesis import strategies as st

from react_cli.infra.files import write_json_atomic
from react_cli.infra.untrusted import (
    MAX_JSON_DEPTH,
    MAX_NUMBER_CHARS,
    BadInput,
    clean_text,
    decode,
    dump_json,
    parse_json,
)

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**30), 10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | any_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(any_text, inner, max_size=4),
    max_leaves=20,
)


def cleaned(value: Any) -> Any:
    """``value`` with every string cleaned (keys that become equal merge, the last one wins)."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {clean_text(k): cleaned(v) for k, v in value.items()}
    if isinstance(value, list):
        return [cleaned(item) for item in value]
    return value


@settings(deadline=None)
@given(text=any_text)
def test_clean_text_always_encodes_and_keeps_valid_text(text: str) -> None:
    cleaned = clean_text(text)
    cleaned.encode("utf-8")
    assert len(cleaned) == len(text)
    assert all(a == b or b == "\ufffd" for a, b in zip(text, cleaned, strict=True))
    assert (cleaned == text) == (not any("\ud800" <= c <= "\udfff" for c in text))


@settings(deadline=None)
@given(data=st.binary(max_size=200))
def test_decode_accepts_any_bytes(data: bytes) -> None:
    assert decode(data).encode("utf-8").decode("utf-8") == decode(data)


@settings(max_examples=100, deadline=None)
@given(value=json_values)
def test_what_is_written_is_read_back_clean(value: Any) -> None:
    text = dump_json({"v": value})
    text.encode("utf-8")  # never fails, whatever the strings held
    assert parse_json(text) == {"v": cleaned(value)}


@settings(max_examples=200, deadline=None)
@given(literal=json_literal)
def test_any_json_is_a_value_or_one_reason(literal: str) -> None:
    try:
        value = parse_json('{"a": ' + literal + "}")
    except BadInput as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    dump_json(value).encode("utf-8")
    for number in _numbers(value):
        assert math.isfinite(number)


def _numbers(value: Any) -> list[float]:
    if isinstance(value, bool):
        return []
    if isinstance(value, (int, float)):
        return [float(value)]
    if isinstance(value, dict):
        value = list(value.values())
    return [n for item in value for n in _numbers(item)] if isinstance(value, list) else []


def test_the_bounds_are_exact() -> None:
    assert parse_json("[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH) is not None
    with pytest.raises(BadInput, match=f"nested more than {MAX_JSON_DEPTH} levels deep"):
        parse_json("[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1))
    with pytest.raises(BadInput, match=f"nested more than {MAX_JSON_DEPTH} levels deep"):
        parse_json("[" * 100_000 + "]" * 100_000)
    assert parse_json("9" * MAX_NUMBER_CHARS) == int("9" * MAX_NUMBER_CHARS)
    with pytest.raises(BadInput, match="a number of 101 characters"):
        parse_json("9" * (MAX_NUMBER_CHARS + 1))
    for constant in ("NaN", "Infinity", "-Infinity"):
        with pytest.raises(BadInput, match="not a number JSON allows"):
            parse_json(f"[{constant}]")
    with pytest.raises(BadInput, match="out of range"):
        parse_json("-1e400")
    assert parse_json("1e-400") == 0.0


def test_surrogate_escapes_and_pairs() -> None:
    assert parse_json('["\\ud83d\\ude00", "\\ud800x", {"\\udfff": 1}]') == [
        "😀",
        "\ufffdx",
        {"\ufffd": 1},
    ]


def test_a_trace_holding_lone_surrogates_is_written_as_utf8(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    write_json_atomic(path, {"question": "Who \udcff is?", "steps": [{"raw": "\ud800"}]})
    assert json.loads(path.read_bytes().decode("utf-8"))["question"] == "Who \ufffd is?"
