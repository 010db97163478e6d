"""The chat prompt's history file, read as untrusted input (imported only for a terminal chat:
it imports prompt_toolkit).

The file is prompt_toolkit's ``FileHistory`` format (``# time`` then ``+line`` for each line
of an entry), kept in the home directory. Only a regular file is read (a FIFO or a device is
never opened), only its last :data:`MAX_HISTORY_BYTES`, each entry cleaned of control
characters; entries are appended in one write each, never through a FIFO, and a symbolic link
at its name is neither read nor written through: the first entry replaces it with a file (the
home directory's policy, ``infra.files``). When the file cannot be used, one ``warning:`` line
says so and the chat goes on with a history of its own.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path

from prompt_toolkit.history import History

from react_cli.display.terminal import plain
from react_cli.infra.files import open_appending
from react_cli.infra.untrusted import BadInput, decode, open_regular

MAX_HISTORY_BYTES = 1 << 20
"""The most of the file read: its newest entries (a file grows by every line entered)."""


class KeptHistory(History):
    """The lines entered at the chat prompt, kept in ``path`` across chats."""

    def __init__(self, path: Path, warn: Callable[[str], None]) -> None:
        super().__init__()
        self.path = path
        self.warn = warn
        self.failed = False

    def load_history_strings(self) -> Iterable[str]:
        """The entries of the file, newest first (prompt_toolkit's order)."""
        if self.path.is_symlink():
            return []  # planted: never read, and replaced by the first entry stored
        try:
            with open_regular(self.path, follow_symlinks=False) as handle:
                size = os.fstat(handle.fileno()).st_size
                cut = size > MAX_HISTORY_BYTES
                if cut:
                    handle.seek(size - MAX_HISTORY_BYTES)
                data = handle.read(MAX_HISTORY_BYTES)
        except FileNotFoundError:
            return []
        except (OSError, BadInput) as exc:
            self._give_up(exc)
            return []
        entries = _entries(decode(data))
        return reversed(entries[1:] if cut else entries)  # a cut file's first entry is partial

    def store_string(self, string: str) -> None:
        """Append an entry; the file is created (private to its user) if need be, and a link
        planted at its name replaced by it (the home directory's policy)."""
        if self.failed:
            return
        lines = "".join(f"+{line}\n" for line in string.split("\n"))
        data = f"\n# {datetime.now()}\n{lines}".encode("utf-8", "replace")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = open_appending(self.path, 0o600)  # a FIFO without a reader: no wait
            try:
                os.write(fd, data)
            finally:
                os.close(fd)
        except OSError as exc:
            self._give_up(exc)

    def _give_up(self, exc: Exception) -> None:
        """Say once why the file is not used, then keep this chat's lines in memory."""
        if not self.failed:
            self.failed = True
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            self.warn(f"the chat history {self.path} {_said(reason)}: it is not kept")


def _said(reason: str) -> str:
    """``is a FIFO, not a regular file`` reads on as it is; ``Permission denied`` after
    ``cannot be used:``."""
    return reason if reason.startswith("is ") else f"cannot be used: {reason}"


def _entries(text: str) -> list[str]:
    """The entries of a history text, oldest first, each without control characters."""
    entries: list[str] = []
    lines: list[str] = []
    for line in text.split("\n"):
        if line.startswith("+"):
            lines.append(line[1:])
            continue
        if lines:
            entries.append(plain("\n".join(lines)))
        lines = []
    if lines:
        entries.append(plain("\n".join(lines)))
    return [entry for entry in entries if entry.strip()]
