"""What is cut from a model's text before anything reads it: invented observations, thinking.

An invented ``Observation`` line and everything after it go, at once or while the text
streams in; so do ``<think>`` blocks. Pure functions and one incremental cutter; nothing here
does I/O or raises on bad input.
"""

from __future__ import annotations

import re

# A line that, ignoring leading spaces and markdown emphasis/quote marks, starts with the
# word "Observation": the model is inventing the tool's answer, so we cut there. "Not followed
# by a letter" rather than \b, so "__Observation__:" and "Observation1:" are cut too while
# "Observations show" is not. The marks are one character class, not a repeated group, so
# a long run of them costs one cheap pass (a group per mark made the engine stack each one).
_JUNK = " \t*_#>"
_OBSERVATION_LINE = re.compile(
    rf"^[{re.escape(_JUNK)}]*observation(?![^\W\d_])", re.IGNORECASE | re.MULTILINE
)
_WORD = "observation"
# A start of the word, compared as _OBSERVATION_LINE compares it ("obſ" may still become it).
_WORD_START = re.compile("".join(f"(?:{c}" for c in _WORD) + ")?" * len(_WORD), re.IGNORECASE)
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


class ObservationCutter:
    """Streaming form of :func:`cut_at_observation`.

    ``feed`` returns the part of the stream that is safe to show now: a line that might still
    turn into an ``Observation`` line (and the newline before it) is held back until it can't.
    Once the cut happens, ``done`` is true and further input is ignored.

    Incremental: only the line still being written is examined, and of it only the first
    characters after its leading marks (``_rest``), so a feed costs the length of its chunk,
    however long the stream or the line.
    """

    def __init__(self) -> None:
        self._parts: list[str] = []  # everything fed (up to the cut, once done)
        self._length = 0
        self._unsent: list[str] = []  # the fed text after what feed has returned so far
        self._sent = 0
        self._line_start = 0  # where the line being written starts
        self._before_line = ""  # the character before that line's newline
        self._rest = ""  # that line's first characters after its leading marks
        self.done = False

    @property
    def text(self) -> str:
        """Everything kept so far (the final text once the stream has ended)."""
        return cut_at_observation("".join(self._parts))

    def feed(self, chunk: str) -> str:
        if self.done or not chunk:
            return ""
        base = self._length
        self._parts.append(chunk)
        self._unsent.append(chunk)
        self._length += len(chunk)
        pos = 0
        while True:
            newline = chunk.find("\n", pos)
            self._extend_line(chunk[pos : newline if newline >= 0 else len(chunk)])
            if _OBSERVATION_LINE.match(self._rest) and (newline >= 0 or self._decided()):
                return self._cut()
            if newline < 0:
                break
            self._before_line = chunk[newline - 1] if newline else self._last_before(base)
            self._line_start, self._rest = base + newline + 1, ""
            pos = newline + 1
        safe = self._length
        if self._may_become_observation_line():
            safe = max(self._line_start - 1, 0)
        if safe and self._char_before(safe) == "\r":
            safe -= 1  # a "\r" is dropped with the cut if "\nObservation" follows it
        return self._emit(safe)

    def flush(self) -> str:
        """Call at the end of the stream: returns whatever was held back and is kept."""
        kept = self.text
        self._parts, self._length = [kept], len(kept)
        return self._emit(len(kept))

    def _extend_line(self, segment: str) -> None:
        """Take in more of the line being written (``segment`` holds no newline)."""
        if self._decided() or not segment:
            return
        if not self._rest:
            segment = segment.lstrip(_JUNK)
        self._rest += segment[: len(_WORD) + 1 - len(self._rest)]

    def _decided(self) -> bool:
        """Whether the line's start is long enough to tell (the word and one more character)."""
        return len(self._rest) > len(_WORD)

    def _may_become_observation_line(self) -> bool:
        if self._decided():
            return False
        return bool(_WORD_START.fullmatch(self._rest) or _OBSERVATION_LINE.match(self._rest))

    def _char_before(self, index: int) -> str:
        """The character at ``index - 1``: the one before the newline that starts the line
        being written, or the last one fed (the only two ``feed`` asks for)."""
        if index == self._line_start - 1:
            return self._before_line
        return self._parts[-1][-1]

    def _last_before(self, base: int) -> str:
        """The last character fed before the chunk that starts at ``base``."""
        return self._parts[-2][-1] if base and len(self._parts) > 1 else ""

    def _cut(self) -> str:
        """Cut before the line being written (and its newline, and a "\r" before that)."""
        self.done = True
        end = max(self._line_start - 1, 0)
        if end and self._before_line == "\r":
            end -= 1
        kept = "".join(self._parts)[:end]
        self._parts, self._length = [kept], len(kept)
        return self._emit(end)

    def _emit(self, upto: int) -> str:
        if upto <= self._sent:
            return ""
        unsent = "".join(self._unsent)
        out, rest = unsent[: upto - self._sent], unsent[upto - self._sent :]
        self._unsent = [rest] if rest else []
        self._sent = upto
        return out
