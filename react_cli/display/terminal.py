"""Text fit for a terminal: untrusted text without escape sequences or control characters,
JSON likewise, the one way a console is made, and durations as people read them.

Apart from the renderer so that error lines, listings and exports can clean text without
importing the loop's vocabulary.
"""

from __future__ import annotations

import re
from typing import IO

from rich.console import Console

from react_cli.infra.untrusted import dump_json

# CSI sequences, OSC sequences with their terminator (BEL or ST), other two-byte escapes. An
# OSC without a terminator is not swallowed to the end of the text: its ESC alone is removed.
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")


def plain(text: str) -> str:
    """Text safe for a terminal: escape sequences and control characters removed (\\n, \\t kept)."""
    return _CONTROL.sub("", _ANSI.sub("", text))


def safe_json(data: object, *, indent: int | None = None) -> str:
    """Strict JSON (``untrusted.dump_json``, the one writer) safe for a terminal: control
    characters JSON-escapes cannot miss.

    ``json.dumps`` escapes C0 controls but leaves C1 ones (U+009B is an 8-bit CSI) and
    bidirectional overrides raw; they are written as ``\\uXXXX`` escapes, still valid JSON.
    """
    text = dump_json(data, indent=indent)
    return _CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def make_console(file: IO[str] | None = None, *, stderr: bool = True) -> Console:
    return Console(
        file=file, stderr=stderr, highlight=False, markup=False, emoji=False, soft_wrap=True
    )


def format_seconds(seconds: float) -> str:
    return f"{seconds:.2f} s" if seconds < 60 else f"{int(seconds // 60)} min {seconds % 60:.0f} s"
