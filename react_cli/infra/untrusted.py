"""The one gate for bytes from outside: text made valid Unicode, JSON bounded and cleaned.

Files, stdin and argv come from outside: a lone surrogate (a ``"\\ud800"`` escape, or an argv
byte that is not UTF-8) cannot be encoded again, so it would break the trace or the row that
quotes it; JSON nested 10^5 levels deep, ``1e400``, ``NaN`` or a 5,000-digit integer would
surface as RecursionError, OverflowError or ValueError far from the file that held them. Text is
cleaned here, once, where it enters; JSON is refused here with a message saying what is wrong.
Answers from servers go through :func:`loads`: cleaned the same way, any depth the parser
takes, a number no reader of ours would take (``NaN``, ``1e400``, 300 digits) read as null,
their shape checked by the code that reads them. Whatever react-cli writes goes through
:func:`dump_json`, which refuses what these readers refuse, so it always reads back.
"""

from __future__ import annotations

import errno
import json
import math
import os
import re
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

MAX_JSON_DEPTH = 100
"""Containers nested deeper than this are refused (our own files nest 6 levels at most)."""
MAX_NUMBER_CHARS = 100
"""A JSON number literal longer than this is refused (Python's int() stops at 4,300 digits)."""

REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")
# A \uD800-\uDFFF escape in JSON text: only then can the decoded strings hold a lone surrogate.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


class BadInput(ValueError):
    """Why bytes from outside were refused, in words fit for ``Error: <file>: ...``."""


def clean_text(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD, so it always encodes as UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub(REPLACEMENT, text)
    return text


# CSI sequences, OSC sequences with their terminator (BEL or ST), other two-byte escapes. An
# OSC without a terminator is not swallowed to the end of the text: its ESC alone is removed.
ESCAPE_SEQUENCE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
CONTROL_CHARACTER = re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]"
)
"""Control characters but ``\\n`` and ``\\t``, zero-width characters and bidirectional
overrides: what no terminal should be sent and no prompt should hold."""


def plain(text: str) -> str:
    """``text`` without escape sequences and control characters (``\\n``, ``\\t`` kept), lone
    surrogates replaced by U+FFFD: fit for a terminal, a prompt or a trace."""
    return clean_text(CONTROL_CHARACTER.sub("", ESCAPE_SEQUENCE.sub("", text)))


def decode(data: bytes) -> str:
    """Bytes as text, every invalid UTF-8 sequence replaced by U+FFFD (stdin, never refused)."""
    return data.decode("utf-8", errors="replace")


def size_text(limit: int) -> str:
    """``1 MiB``, ``64 MiB``, ``1 GiB``: a byte limit as people read it."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if limit >= size:
            return f"{limit / size:g} {unit}"
    return f"{limit} bytes"


_KINDS = {
    stat.S_IFDIR: "a directory",
    stat.S_IFIFO: "a FIFO",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
    stat.S_IFLNK: "a symbolic link",
}


def not_regular(path: Path, *, follow_symlinks: bool) -> str | None:
    """What ``path`` is ("a FIFO", ...) when it exists and is not a regular file, else None.

    Reading a FIFO blocks, reading a device may never end, replacing either destroys it.
    """
    try:
        mode = path.stat().st_mode if follow_symlinks else path.lstat().st_mode
    except OSError:  # missing, or unreachable: what uses the path next says why
        return None
    return None if stat.S_ISREG(mode) else _KINDS.get(stat.S_IFMT(mode), "not a regular file")


def read_at_most(stream: BinaryIO, limit: int) -> bytes:
    """All of ``stream`` if it holds at most ``limit`` bytes; BadInput (never a full memory)
    if it holds more (stdin may be an endless pipe)."""
    data = stream.read(limit + 1)
    if len(data) > limit:
        raise BadInput(f"larger than {size_text(limit)}")
    return data


def open_regular(path: Path, *, follow_symlinks: bool = True) -> BinaryIO:
    """``path`` opened for reading if it is a regular file (a symbolic link to one too, unless
    ``follow_symlinks`` is False: then a link is refused, as any other kind of file).

    Anything else is refused before a byte is read, and without ever blocking: opening a FIFO
    waits for a writer and reading it may never end, a device may be endless (``/dev/zero``)
    or answer only when it likes. The path is opened non-blocking and the open file itself is
    checked, so nothing put in its place between a check and the open is read either.
    IsADirectoryError for a directory, BadInput for another kind of file; other OSErrors
    (missing file, no permission) are left to the caller, who names the file.
    """
    found = path.stat() if follow_symlinks else path.lstat()
    _check_regular(found.st_mode, path)  # a FIFO is not even opened (its writer waits)
    nofollow = 0 if follow_symlinks else os.O_NOFOLLOW  # a link planted since: ELOOP
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | nofollow)
    try:
        _check_regular(os.fstat(fd).st_mode, path)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _check_regular(mode: int, path: Path) -> None:
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    if not stat.S_ISREG(mode):
        kind = _KINDS.get(stat.S_IFMT(mode))
        raise BadInput(f"is {kind}, not a regular file" if kind else "is not a regular file")


def read_bytes(path: Path, limit: int) -> bytes:
    """At most ``limit`` bytes of a regular file (see :func:`open_regular`); BadInput if it
    holds more, or is not a regular file."""
    with open_regular(path) as handle:
        return read_at_most(handle, limit)


def utf8(data: bytes) -> str:
    """Bytes that must be UTF-8 text (a leading byte-order mark is dropped); BadInput if not."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BadInput(
            f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})"
        ) from None


def read_text(path: Path, limit: int) -> str:
    """A UTF-8 text file of at most ``limit`` bytes; BadInput or OSError otherwise."""
    return utf8(read_bytes(path, limit))


def parse_json(text: str) -> Any:
    """One JSON value, refused (BadInput) unless it is valid JSON within the bounds above.

    Strings come back clean (see :func:`clean_text`), numbers finite.
    """
    try:
        value = json.loads(text, parse_constant=_constant, parse_float=_float, parse_int=_int)
    except json.JSONDecodeError as exc:
        where = f", line {exc.lineno}" if "\n" in text.rstrip() else ""
        if exc.pos >= len(text.rstrip()):
            raise BadInput(f"truncated JSON{where}") from None
        raise BadInput(f"not JSON ({exc.msg}){where}") from None
    except RecursionError:
        raise BadInput(_too_deep()) from None
    return _checked(value, clean=_SURROGATE_ESCAPE.search(text) is not None)


def is_json_list(text: str) -> bool:
    """Whether a file of records is one JSON list (else JSON Lines: one record a line)."""
    return text.lstrip().startswith("[")


def json_records(text: str, source: str) -> Iterator[tuple[str, Any]]:
    """``(where, record)`` for each record of one JSON list (``"<source> item 3"``, from 1) or
    of JSON Lines (``"<source> line 7"``, split by :func:`lines`, blank lines skipped), parsed
    by :func:`parse_json`.

    BadInput names where the text is not JSON: ``"<source> line 7: truncated JSON"``.
    """
    if is_json_list(text):
        try:
            items = parse_json(text)
        except BadInput as exc:
            raise BadInput(f"{source}: {exc}") from None
        for number, item in enumerate(items, 1):
            yield f"{source} item {number}", item
        return
    for number, line in enumerate(lines(text), 1):
        if line.strip():
            try:
                record = parse_json(line)
            except BadInput as exc:
                raise BadInput(f"{source} line {number}: {exc}") from None
            yield f"{source} line {number}", record


def lines(text: str) -> list[str]:
    """The lines of a JSON Lines text, split at ``\\n`` (and ``\\r\\n``) alone: JSON allows
    U+2028, U+2029, U+0085 and the other breaks ``str.splitlines`` knows raw inside strings."""
    return [line.removesuffix("\r") for line in text.split("\n")]


def loads(data: bytes | str) -> Any:
    """JSON from a server (the model endpoint, Wikipedia): ``ValueError`` for anything
    malformed, nesting too deep to parse too; strings (keys too) free of lone surrogates; a
    number :func:`parse_json` would refuse (``NaN``, ``1e400``, more than
    :data:`MAX_NUMBER_CHARS` characters) read as None, so what a server said can always be
    written again (``models --json``) and a reader of its fields sees it as missing."""
    text = decode(data) if isinstance(data, bytes) else data
    try:
        value = json.loads(
            text, parse_constant=_no_number, parse_float=_server_float, parse_int=_server_int
        )
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    return _checked(value, clean=_SURROGATE_ESCAPE.search(text) is not None, max_depth=None)


def dump_json(data: Any, indent: int | None = None) -> str:
    """Strict JSON text that can always be written as UTF-8 (lone surrogates become U+FFFD)
    and that :func:`parse_json` reads back: the one JSON writer (files and stdout alike).

    A number parse_json would refuse (not finite, more than :data:`MAX_NUMBER_CHARS`
    characters) is a ValueError naming where it is: every number from outside is bounded
    where it enters, so one reaching here is a bug that must not write a file its own readers
    refuse (a trace ``replay`` rejects, a summary that loses the eval).
    """
    _check_numbers(data)
    return clean_text(json.dumps(data, ensure_ascii=False, indent=indent, allow_nan=False))


def _check_numbers(data: Any) -> None:
    """ValueError for the first number of ``data`` (walked without recursion) that is not
    finite or is written in more than :data:`MAX_NUMBER_CHARS` characters."""
    stack: list[tuple[Any, str]] = [(data, "")]
    while stack:
        value, where = stack.pop()
        if isinstance(value, dict):
            stack.extend((item, f"{where}.{key}") for key, item in value.items())
        elif isinstance(value, (list, tuple)):
            stack.extend((item, f"{where}[{n}]") for n, item in enumerate(value))
        elif isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"refusing to write {value} at {where or 'the top'}: not JSON")
        elif isinstance(value, int) and not _short_int(value):
            raise ValueError(
                f"refusing to write a number of more than {MAX_NUMBER_CHARS} characters at "
                f"{where or 'the top'}: react-cli would not read it back"
            )


_LARGEST_INT: int = 10**MAX_NUMBER_CHARS  # a whole number below it fits (with its sign: one less)


def _short_int(value: int) -> bool:
    return -(_LARGEST_INT // 10) < value < _LARGEST_INT


def _no_number(name: str) -> None:
    return None


def _server_float(literal: str) -> float | None:
    if len(literal) > MAX_NUMBER_CHARS:
        return None
    value = float(literal)
    return value if math.isfinite(value) else None


def _server_int(literal: str) -> int | None:
    return int(literal) if len(literal) <= MAX_NUMBER_CHARS else None


def _too_deep() -> str:
    return f"nested more than {MAX_JSON_DEPTH} levels deep"


def _constant(name: str) -> Any:
    raise BadInput(f"{name} is not a number JSON allows")


def _number(literal: str) -> str:
    if len(literal) > MAX_NUMBER_CHARS:
        raise BadInput(f"a number of {len(literal):,} characters (at most {MAX_NUMBER_CHARS})")
    return literal


def _float(literal: str) -> float:
    value = float(_number(literal))
    if not math.isfinite(value):
        raise BadInput(f"the number {literal} is out of range")
    return value


def _int(literal: str) -> int:
    return int(_number(literal))


def _checked(value: Any, *, clean: bool, max_depth: int | None = MAX_JSON_DEPTH) -> Any:
    """``value`` with its depth checked (up to ``max_depth``) and, if ``clean``, every string
    cleaned, in place; without recursion (the parser accepts nesting as deep as the
    interpreter's whole recursion limit)."""
    if isinstance(value, str):
        return clean_text(value) if clean else value
    if max_depth is None and not clean:
        return value
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        container, depth = stack.pop()
        if max_depth is not None and depth > max_depth:
            raise BadInput(_too_deep())
        if isinstance(container, dict):
            if clean:
                for key in [k for k in container if clean_text(k) is not k]:
                    container[clean_text(key)] = container.pop(key)
            items: Iterable[tuple[Any, Any]] = container.items()
        elif isinstance(container, list):
            items = enumerate(container)
        else:
            continue
        for slot, item in items:
            if isinstance(item, (dict, list)):
                stack.append((item, depth + 1))
            elif clean and isinstance(item, str):
                container[slot] = clean_text(item)
    return value
