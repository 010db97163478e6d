"""Pure functions that read what a model wrote. Nothing here does I/O or raises on bad input."""

from __future__ import annotations

import re

# A line that, ignoring leading spaces and markdown emphasis/quote marks, starts with the
# word "Observation": the model is inventing the tool's answer, so we cut there.
_OBSERVATION_LINE = re.compile(r"^[ \t]*(?:[*_#>][ \t]*)*observation\b", re.IGNORECASE | re.MULTILINE)
_LINE_PREFIX_JUNK = re.compile(r"^[ \t]*(?:[*_#>][ \t]*)*")
_THINK_BLOCK = re.compile(r"<think>.*?(?:</think>|\Z)", re.DOTALL | re.IGNORECASE)
_THINK_CLOSE = re.compile(r"^.*?</think>", re.DOTALL | re.IGNORECASE)


def cut_at_observation(text: str) -> str:
    """Drop everything from the first invented ``Observation`` line on (and the newline before)."""
    match = _OBSERVATION_LINE.search(text)
    if not match:
        return text
    head = text[: match.start()]
    if head.endswith("\n"):
        head = head[:-1]
    return head.removesuffix("\r")


def strip_think(text: str) -> str:
    """Remove ``<think>…</think>`` reasoning blocks (an unclosed one runs to the end)."""
    if "</think>" in text.lower() and "<think>" not in text.lower():
        text = _THINK_CLOSE.sub("", text, count=1)  # opening tag was part of the prompt template
    return _THINK_BLOCK.sub("", text)


def _may_become_observation_line(partial_line: str) -> bool:
    rest = _LINE_PREFIX_JUNK.sub("", partial_line).lower()
    return "observation".startswith(rest) or bool(_OBSERVATION_LINE.match(partial_line))


class ObservationCutter:
    """Streaming form of :func:`cut_at_observation`.

    ``feed`` returns the part of the stream that is safe to show now: a line that might still
    turn into an ``Observation`` line (and the newline before it) is held back until it can't.
    Once the cut happens, ``done`` is true and further input is ignored.
    """

    def __init__(self) -> None:
        self._buffer = ""
        self._sent = 0
        self.done = False

    @property
    def text(self) -> str:
        """Everything kept so far (the final text once the stream has ended)."""
        return cut_at_observation(self._buffer)

    def feed(self, chunk: str) -> str:
        if self.done or not chunk:
            return ""
        self._buffer += chunk
        if _OBSERVATION_LINE.search(self._buffer):
            self.done = True
            self._buffer = cut_at_observation(self._buffer)
            return self._emit(len(self._buffer))
        last_newline = self._buffer.rfind("\n")
        safe = len(self._buffer)
        if _may_become_observation_line(self._buffer[last_newline + 1 :]):
            safe = max(last_newline, 0)
            if safe and self._buffer[safe - 1] == "\r":
                safe -= 1
        return self._emit(safe)

    def flush(self) -> str:
        """Call at the end of the stream: returns whatever was held back and is kept."""
        self._buffer = cut_at_observation(self._buffer)
        return self._emit(len(self._buffer))

    def _emit(self, upto: int) -> str:
        if upto <= self._sent:
            return ""
        out = self._buffer[self._sent : upto]
        self._sent = upto
        return out
