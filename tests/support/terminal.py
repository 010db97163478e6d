"""A program on a real pseudo-terminal, driven as a person types: keys are sent only once the
program shows it reads them (a key typed while it is busy meets the terminal's line
discipline in cooked mode: it is echoed, and a Ctrl-C or Ctrl-D meant for the prompt is lost).

:meth:`Terminal.expect` waits for text on the screen (escape sequences and carriage returns
removed), searched only after the last match, so each wait is for new output.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import re
import select
import struct
import termios
import time

ESCAPES = re.compile(
    rb"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07|\x1b[()][0-9A-Za-z]|\x1b[=>]|\r"
)
CURSOR_SHOWN = b"\x1b[?25h"  # prompt_toolkit ends drawing its prompt with it: it reads keys now
UP, CTRL_A, CTRL_C, CTRL_D = b"\x1b[A", b"\x01", b"\x03", b"\x04"
PROMPT = b"react-cli>"  # prompt_toolkit draws the prompt's last space as a cursor move


class Terminal:
    """``argv`` run on a pseudo-terminal of ``rows`` × ``columns`` with ``env``."""

    def __init__(
        self, argv: list[str], env: dict[str, str], rows: int = 40, columns: int = 120
    ) -> None:
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: the program itself
            try:
                os.execvpe(argv[0], argv, env)
            finally:
                os._exit(127)
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        self.raw = b""
        self.mark = 0  # how much of ``raw`` the matches so far have consumed
        self.code: int | None = None

    @property
    def screen(self) -> str:
        """Everything shown so far, as text."""
        return ESCAPES.sub(b"", self.raw).decode("utf-8", "replace")

    def _read(self, deadline: float) -> bool:
        """Read more output; False once the program has closed the terminal."""
        ready, _, _ = select.select([self.fd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            raise TimeoutError(f"no output in time; the screen ends: {self.screen[-600:]!r}")
        try:
            chunk = os.read(self.fd, 65536)
        except OSError:  # EIO: the program closed it
            chunk = b""
        self.raw += chunk
        return bool(chunk)

    def _clean(self) -> tuple[bytes, list[int]]:
        """The output after the mark without escapes, and where each of its bytes ends in
        ``raw``."""
        text, ends, at = bytearray(), [], self.mark
        for escape in ESCAPES.finditer(self.raw, self.mark):
            text += self.raw[at : escape.start()]
            ends.extend(range(at + 1, escape.start() + 1))
            at = escape.end()
        text += self.raw[at:]
        ends.extend(range(at + 1, len(self.raw) + 1))
        return bytes(text), ends

    def expect(self, pattern: bytes, timeout: float = 20.0) -> re.Match[bytes]:
        """Wait for ``pattern`` in what was shown after the last match."""
        deadline = time.monotonic() + timeout
        while True:
            text, ends = self._clean()
            found = re.search(pattern, text)
            if found:
                self.mark = ends[found.end() - 1] if found.end() else self.mark
                return found
            if not self._read(deadline):
                raise EOFError(f"{pattern!r} never came; the screen ends: {self.screen[-600:]!r}")

    def ready(self, *, drawn: bool = True, timeout: float = 20.0) -> None:
        """Wait for the next prompt, until it reads keys (prompt_toolkit's: once drawn)."""
        self.expect(re.escape(PROMPT), timeout)
        deadline = time.monotonic() + timeout
        while drawn and CURSOR_SHOWN not in self.raw[self.mark :]:
            if not self._read(deadline):
                raise EOFError(f"the prompt was never drawn: {self.screen[-600:]!r}")
        if drawn:
            self.mark = self.raw.index(CURSOR_SHOWN, self.mark) + len(CURSOR_SHOWN)

    def send(self, keys: bytes) -> None:
        os.write(self.fd, keys)

    def wait(self, timeout: float = 20.0) -> int:
        """The program's exit code, once it ends (its output read to the end)."""
        deadline = time.monotonic() + timeout
        while self._read(deadline):
            pass
        _, status = os.waitpid(self.pid, 0)
        self.code = os.waitstatus_to_exitcode(status)
        os.close(self.fd)
        return self.code

    def close(self) -> None:
        """End the program if it still runs (a test that failed half way)."""
        if self.code is not None:
            return
        with contextlib.suppress(ProcessLookupError, ChildProcessError):
            os.kill(self.pid, 9)
            os.waitpid(self.pid, 0)
        with contextlib.suppress(OSError):
            os.close(self.fd)
