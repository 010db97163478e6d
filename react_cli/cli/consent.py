"""The consent question on the terminal, which each command's session puts (``tools.consent``).

A call that needs consent, on a terminal (stdin and stderr both: ``ask``, ``chat``, ``replay
--live-tools``), is shown on stderr (the tool, where it comes from, its arguments: cleaned of
escape sequences and control characters, every secret the run knows masked, long values cut
with what was left out said) and asked ``Run it? [y]es / [n]o / [a]lways this tool``. Typed
ahead keys are dropped first, so nothing typed before the question was shown answers it; the
answer is a line (y, yes, n, no, a, always, any case); Ctrl-D is no; Ctrl-C stops the run as
it does anywhere. Anywhere else nobody is asked, and a call the rules do not allow is refused.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.console import Console
from rich.text import Text

from react_cli.infra.redaction import Redactor
from react_cli.tools.consent import Answer

if TYPE_CHECKING:
    from react_cli.display.render import Renderer
    from react_cli.settings.settings import Settings
    from react_cli.tools.base import ToolSpec

PROMPT = "Run it? [y]es / [n]o / [a]lways this tool "
ANSWERS = {
    "y": Answer.YES,
    "yes": Answer.YES,
    "n": Answer.NO,
    "no": Answer.NO,
    "a": Answer.ALWAYS,
    "always": Answer.ALWAYS,
}
MAX_VALUE_CHARS = 2_000  # of one argument's value, as shown
MAX_VALUE_LINES = 40
MAX_NAME_CHARS = 100  # of an argument's name
MAX_ANSWER_CHARS = 1_000  # of a line read as the answer


def terminal_question(settings: Settings, renderer: Renderer | None) -> TerminalQuestion | None:
    """How a command with ``settings`` asks a call's consent (its session's rules decide
    first): on a terminal, the question, printed after ``renderer``'s line ends; elsewhere
    nobody is asked (None)."""
    if not on_a_terminal():
        return None
    from react_cli.display.terminal import make_console
    from react_cli.settings.secrets import known_secrets

    console = renderer.console if renderer is not None else make_console()
    before = renderer.pause if renderer is not None else None
    redactor = Redactor(known_secrets(settings, os.environ))
    return TerminalQuestion(console, redactor, before)


def on_a_terminal() -> bool:
    """Whether there is someone to ask: stdin (the answer) and stderr (the question) are a
    terminal."""
    streams = (sys.stdin, sys.stderr)
    return all(stream is not None and stream.isatty() for stream in streams)


def _read_line() -> str:
    """A line typed at the terminal, read from its file descriptor (nothing held in a buffer
    that the chat's prompt, which reads the descriptor too, would not see): a terminal in
    canonical mode hands over one line a read; "" at the end of input."""
    import os

    from react_cli.infra.untrusted import decode

    return decode(os.read(sys.stdin.fileno(), MAX_ANSWER_CHARS))


@dataclass
class TerminalQuestion:
    """The question, on ``console`` (stderr), its texts through ``redactor``; ``before`` ends
    the trajectory's line; ``read`` gives the answer's line ("" at the end of input)."""

    console: Console
    redactor: Redactor
    before: Callable[[], None] | None = None
    read: Callable[[], str] = _read_line

    def __call__(self, spec: ToolSpec, argument: str) -> Answer:
        if self.before is not None:
            self.before()
        try:
            self._show(spec, argument)
            _drop_typed_ahead()
            return self._answer()
        except KeyboardInterrupt:  # it stops the run, whose end goes on a line of its own
            self.console.file.write("\n")
            raise

    def _answer(self) -> Answer:
        """Ask until the answer is one (Ctrl-D: no). The prompt is written in one write, not
        through the console: a Ctrl-C that lands as it is printed must not leave it in the
        console's buffer, to be printed again."""
        with self.console.capture() as captured:
            self.console.print(Text(PROMPT, style="bold yellow"), end="")
        prompt = captured.get()
        while True:
            self.console.file.write(prompt)
            self.console.file.flush()
            line = self.read()
            if not line:  # Ctrl-D, or the end of input
                self.console.print()
                return Answer.NO
            answer = ANSWERS.get(line.strip().casefold())
            if answer is not None:
                return answer
            self.console.print(Text("Answer y (yes), n (no) or a (always this tool).", "dim"))

    def _show(self, spec: ToolSpec, argument: str) -> None:
        """The tool, its origin, and each argument on a line of its own."""
        origin = spec.origin.describe() if spec.origin is not None else "this process"
        self.console.print(
            Text.assemble(
                ("Consent needed: ", "bold yellow"),
                (self._clean(spec.name), "bold"),
                f" from {self._clean(origin)} would run with:",
            )
        )
        for name, value in _arguments(spec, argument):
            # twice what is shown is cleaned and masked whole: a secret cut there is never shown
            head = self._clean(value[: 2 * MAX_VALUE_CHARS])
            cut = "\n".join(head.split("\n")[:MAX_VALUE_LINES])[:MAX_VALUE_CHARS]
            label = f"  {self._clean(name[:MAX_NAME_CHARS])}: "
            body = Text(cut.replace("\n", "\n" + " " * len(label)))
            whole = len(head) if len(value) <= 2 * MAX_VALUE_CHARS else len(value)
            left = whole - len(cut)
            if left > 0:
                body.append(f" … ({left:,} more characters not shown)", style="dim")
            self.console.print(Text.assemble((label, "cyan"), body))

    def _clean(self, text: str) -> str:
        from react_cli.display.terminal import plain

        return self.redactor(plain(text))


def _arguments(spec: ToolSpec, argument: str) -> list[tuple[str, str]]:
    """The call's arguments by name, each value as text (JSON for what is not text); the
    argument as it came when it cannot be read against the tool's schema."""
    from react_cli.tools.schema import ArgumentError

    try:
        arguments = spec.arguments(argument)
    except ArgumentError:
        return [(spec.argument, argument)]
    return [
        (name, value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
        for name, value in arguments.items()
    ]


def _drop_typed_ahead() -> None:
    """Drop what was typed before the question showed: a key pressed while the model was
    thinking must not answer it."""
    try:
        import termios

        termios.tcflush(sys.stdin.fileno(), termios.TCIFLUSH)
    except (ImportError, OSError, ValueError, AttributeError):  # not a terminal after all
        pass
