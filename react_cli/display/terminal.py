"""Text fit for a terminal: untrusted text without escape sequences or control characters,
JSON likewise, a word quoted for the shell exactly, the one way a console is made, and
durations as people read them.

Apart from the renderer so that error lines, listings and exports can clean text without
importing the loop's vocabulary.
"""

from __future__ import annotations

import os
import shlex
from typing import IO

from rich.console import Console

from react_cli.infra.untrusted import CONTROL_CHARACTER as _CONTROL
from react_cli.infra.untrusted import dump_json
from react_cli.infra.untrusted import plain as plain  # text safe for a terminal: re-exported


def safe_json(data: object, *, indent: int | None = None) -> str:
    """Strict JSON (``untrusted.dump_json``, the one writer) safe for a terminal: control
    characters JSON-escapes cannot miss.

    ``json.dumps`` escapes C0 controls but leaves C1 ones (U+009B is an 8-bit CSI) and
    bidirectional overrides raw; they are written as ``\\uXXXX`` escapes, still valid JSON.
    """
    text = dump_json(data, indent=indent)
    return _CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def shell_word(word: str) -> str:
    """``word`` quoted for the shell exactly, as one line of printable text that ``plain``
    leaves as it is: a command printed for pasting names what it says.

    In single quotes (``shlex.quote``) when every character is printable; else in bash's
    ``$'...'`` (zsh and ksh read it too), each character that is not (a line break, an escape,
    a byte of a file name that is not UTF-8) written as the ``\\xHH`` of its bytes.
    """
    if word.isprintable():
        return shlex.quote(word)
    return "$'" + "".join(map(_ansi_c, word)) + "'"


def _ansi_c(char: str) -> str:
    """One character inside ``$'...'``."""
    if char in "\\'":
        return "\\" + char
    if char.isprintable():
        return char
    try:
        raw = os.fsencode(char)  # a file name's undecodable byte is given back as it was
    except UnicodeEncodeError:  # a lone surrogate no file name holds
        raw = char.encode("utf-8", "surrogatepass")
    return "".join(f"\\x{byte:02x}" for byte in raw)


MIN_WIDTH, MAX_WIDTH = 40, 10_000
"""The widths a console lays text out in: ``COLUMNS=0`` made rich print nothing at all, and a
table narrower than its borders cuts every cell; a wider layout a narrow terminal wraps."""


def make_console(file: IO[str] | None = None, *, stderr: bool = True) -> Console:
    """The one way a console is made: no markup, highlighting or emoji codes, and a width
    (``COLUMNS``, else the terminal's) kept between ``MIN_WIDTH`` and ``MAX_WIDTH``, so no width
    loses output. Tables fold what does not fit (``Column(overflow="fold")``), never cut it."""
    console = Console(
        file=file, stderr=stderr, highlight=False, markup=False, emoji=False, soft_wrap=True
    )
    console.width = min(max(console.width, MIN_WIDTH), MAX_WIDTH)
    return console


def format_seconds(seconds: float) -> str:
    return f"{seconds:.2f} s" if seconds < 60 else f"{int(seconds // 60)} min {seconds % 60:.0f} s"
