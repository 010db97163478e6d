"""Size limits on what arrives from outside, checked while it arrives.

One policy for the model endpoint, Wikipedia and ZIM archives: a body is counted as it is read
(after decompression, so a small gzip bomb cannot inflate past the limit) and reading stops at
the limit; a stored item whose size is known is refused before it is read.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator


class TooLarge(Exception):
    """More than ``limit`` bytes arrived; the caller says from where in its own error."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"larger than {limit:,} bytes")
        self.limit = limit


def check_size(size: int, limit: int) -> None:
    """Raise ``TooLarge`` when ``size`` bytes exceed ``limit``."""
    if size > limit:
        raise TooLarge(limit)


def read_capped(chunks: Iterable[bytes], limit: int) -> bytes:
    """The chunks joined; ``TooLarge`` as soon as they pass ``limit`` bytes."""
    body = bytearray()
    for chunk in chunks:
        body += chunk
        check_size(len(body), limit)
    return bytes(body)


def capped_lines(chunks: Iterable[bytes], limit: int) -> Iterator[bytes]:
    """The lines of a byte stream (ended by LF, CRLF or CR, as in SSE), without their ends;
    ``TooLarge`` once a line passes ``limit`` bytes. Each chunk is scanned once, so a line
    that arrives a byte at a time costs no more than one that arrives whole."""
    pending: list[bytes] = []  # the unfinished line, in pieces
    size = 0
    for chunk in chunks:
        lines = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
        for line in lines[:-1]:
            if pending:
                pending.append(line)
                line, pending, size = b"".join(pending), [], 0
            check_size(len(line), limit)
            yield line
        if lines[-1]:
            pending.append(lines[-1])
            size += len(lines[-1])
            check_size(size, limit)
    if pending:
        yield b"".join(pending)
