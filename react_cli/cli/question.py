"""The question a command was given: its words joined, or stdin read within a bound."""

from __future__ import annotations

import io
import sys

from react_cli.core.errors import UsageError

MAX_STDIN_BYTES = 1 << 20


def read_question(words: list[str] | None) -> str:
    """The question from the argument's words (joined, as ``llm`` does), or from stdin for
    ``-`` or no argument when stdin is piped.

    Any bytes are accepted: what is not UTF-8 becomes U+FFFD (see ``untrusted.clean_text``).
    """
    from react_cli.infra.untrusted import BadInput, size_text

    if words is None or words == ["-"]:
        if sys.stdin is None or sys.stdin.isatty():
            raise UsageError("no question given: pass QUESTION or pipe it on stdin")
        try:
            argument = _read_stdin(MAX_STDIN_BYTES)
        except BadInput:
            limit = size_text(MAX_STDIN_BYTES)
            raise UsageError(f"the question on stdin is larger than {limit}") from None
    else:
        argument = " ".join(words)
    question = question_text(argument)
    if not question:
        raise UsageError("the question is empty")
    return question


def question_text(text: str) -> str:
    """A question as it is asked: on one line, single spaces, always valid UTF-8."""
    from react_cli.infra.untrusted import clean_text

    return " ".join(clean_text(text).split())


def _read_stdin(limit: int) -> str:
    """At most ``limit`` bytes of stdin as text, decoded here whatever the locale says;
    BadInput when it holds more."""
    from react_cli.infra.untrusted import decode, read_at_most

    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is None:  # a text stream without bytes underneath (an embedding program's)
        buffer = io.BytesIO(sys.stdin.read(limit + 1).encode("utf-8", "surrogatepass"))
    return decode(read_at_most(buffer, limit))
