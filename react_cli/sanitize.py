"""Text and JSON from outside made safe to keep, print and write back, once, where it enters.

Invalid UTF-8 becomes U+FFFD (never an error that drops a run); so do lone surrogates, which
JSON can carry as ``"\\ud800"`` escapes and which no UTF-8 writer (terminal, trace file) accepts.
JSON nested deeper than the parser's recursion limit is malformed data, not a crash.
"""

from __future__ import annotations

import json
import re
from typing import Any

REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")  # only escapes can yield one in JSON


def clean_text(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD."""
    return _SURROGATE.sub(REPLACEMENT, text)


def decode(data: bytes) -> str:
    """UTF-8 bytes as text, invalid sequences replaced."""
    return data.decode("utf-8", errors="replace")


def loads(data: bytes | str) -> Any:
    """JSON from outside: ``ValueError`` for anything malformed (also nesting too deep to parse),
    strings (keys too) free of lone surrogates."""
    text = decode(data) if isinstance(data, bytes) else data
    try:
        value = json.loads(text)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    if _SURROGATE_ESCAPE.search(text):
        value = _clean_strings(value)
    return value


def _clean_strings(value: Any) -> Any:
    """``value`` with ``clean_text`` applied to every string in it, without recursion (the
    parser accepts nesting as deep as the interpreter's whole recursion limit)."""
    if isinstance(value, str):
        return clean_text(value)
    if not isinstance(value, (dict, list)):
        return value
    stack = [value]
    while stack:
        node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, item in list(items):
            if isinstance(item, str):
                node[key] = clean_text(item)
            elif isinstance(item, (dict, list)):
                stack.append(item)
        if isinstance(node, dict):
            for key in [k for k in node if _SURROGATE.search(k)]:
                node[clean_text(key)] = node.pop(key)
    return value
