"""Where ``chat`` reads its lines: a prompt on a terminal, one question a line from a pipe.

On a terminal the prompt is prompt_toolkit's (the ``chat`` extra: line editing, and the
history in the home directory's ``chat_history``), imported only then: ``--help``, ``ask`` and
a piped chat never pay its 0.2 s. Without it, a plain ``input()`` prompt, said once. Piped
lines are read as they come (a program may write a question, read its answer, then write the
next), each at most :data:`MAX_LINE_BYTES`, any bytes taken (what is not UTF-8 becomes U+FFFD).
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TextIO

from react_cli.cli.question import MAX_STDIN_BYTES
from react_cli.infra import interrupts

if TYPE_CHECKING:
    from prompt_toolkit.application import Application

PROMPT = "react-cli> "
HISTORY_NAME = "chat_history"
MAX_LINE_BYTES = MAX_STDIN_BYTES
TOO_LONG = None
"""What :func:`piped_lines` yields for a line longer than :data:`MAX_LINE_BYTES`."""
EXTRA_HINT = "line editing and history need prompt_toolkit: pip install 'react-cli[chat]'"

Reader = Callable[[], str]
"""The next line typed (EOFError at the end, KeyboardInterrupt for Ctrl-C at the prompt)."""


def terminal_reader(history: Path, warn: Callable[[str], None]) -> Reader:
    """The prompt of a chat on a terminal: prompt_toolkit's, with its history kept in
    ``history``; a plain prompt (``hint:`` once) when prompt_toolkit is not installed."""
    try:
        from prompt_toolkit import PromptSession
    except ImportError:
        print(f"hint: {EXTRA_HINT}", file=sys.stderr, flush=True)
        return lambda: input(PROMPT)
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

    from react_cli.cli.history import KeptHistory

    bindings = KeyBindings()

    @bindings.add("c-c")
    def _clear_or_interrupt(event: KeyPressEvent) -> None:
        """Ctrl-C clears what is typed; at an empty prompt it is the interrupt."""
        buffer = event.app.current_buffer
        if buffer.text:
            buffer.reset()
        else:
            event.app.exit(exception=KeyboardInterrupt, style="class:aborting")

    session: PromptSession[str] = PromptSession(
        history=KeptHistory(history, warn), key_bindings=bindings
    )

    def read() -> str:
        kept = [(signum, signal.getsignal(signum)) for signum in interrupts.STOPPING]
        try:
            return session.prompt(PROMPT, pre_run=lambda: _stop_on_signals(session.app))
        finally:  # the loop's close set them to their defaults
            for signum, handler in kept:
                if handler is not None:
                    signal.signal(signum, handler)

    return read


def _stop_on_signals(app: Application[str]) -> None:
    """While the prompt reads keys (raw mode, in prompt_toolkit's event loop), a stopping
    signal ends it as Ctrl-C at an empty prompt does, from a callback of the loop. Raised from
    a signal handler, KeyboardInterrupt landed in whatever the loop ran (the history being
    read, say): prompt_toolkit printed it as a traceback, waited for ENTER, and left the
    terminal raw."""
    import asyncio

    def stop(signum: int) -> None:
        interrupts.remember(signum)
        if app.is_running and not app.is_done:
            app.exit(exception=KeyboardInterrupt, style="class:aborting")

    loop = asyncio.get_running_loop()
    for signum in interrupts.STOPPING:
        try:
            loop.add_signal_handler(signum, stop, signum)
        except (NotImplementedError, RuntimeError, ValueError):
            return  # not the main thread, or no such loop: Python's handlers stay


def piped_lines(stdin: TextIO) -> Iterator[str | None]:
    """Each line of ``stdin`` as it arrives, decoded; :data:`TOO_LONG` for a line longer than
    :data:`MAX_LINE_BYTES` (the rest of it is skipped, never held)."""
    from react_cli.infra.untrusted import decode

    buffer: _Lines | None = getattr(stdin, "buffer", None)
    if buffer is None:  # a text stream without bytes underneath (an embedding program's)
        buffer = _Encoded(stdin)
    while True:
        line = buffer.readline(MAX_LINE_BYTES + 2)
        if not line:
            return
        if len(line.rstrip(b"\r\n")) <= MAX_LINE_BYTES:
            yield decode(line)
            continue
        while line and not line.endswith(b"\n"):  # the rest of the long line
            line = buffer.readline(MAX_LINE_BYTES)
        yield TOO_LONG


class _Lines(Protocol):
    def readline(self, size: int = -1, /) -> bytes: ...


class _Encoded:
    """A text stream read as UTF-8 bytes, a line at a time."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def readline(self, size: int = -1, /) -> bytes:
        return self.stream.readline(size).encode("utf-8", "surrogatepass")
