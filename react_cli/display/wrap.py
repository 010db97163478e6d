"""Streamed text wrapped as the renderer wraps an observation: at word boundaries, each
continuation line indented under the text after its label (``Thought 3:``), on a terminal
only (piped output keeps its lines whole).

Text arrives in pieces that may end mid-word, so the last word of a piece is held until what
follows shows whether it ended; spaces at a break are dropped. Widths are counted in terminal
cells (a CJK character takes two).
"""

from __future__ import annotations

import re

from rich.cells import cell_len

_TOKEN = re.compile(r"\n|[ \t]+|[^ \t\n]+")


class HangingWrap:
    """Where the cursor is on its line, and where a wrapped line starts (``width`` None: a
    console that is no terminal, nothing wrapped)."""

    def __init__(self, width: int | None) -> None:
        self.width = width
        self.column = 0
        self.indent = 0
        self._space = ""  # spaces not printed yet: dropped if a break comes instead
        self._word = ""  # the last word of the text so far, perhaps not complete yet

    def label(self, cells: int) -> None:
        """A label ``cells`` wide (its space included) starts a line: wrapped lines go under
        the text after it."""
        self.column = self.indent = cells
        self._space = self._word = ""

    def feed(self, text: str) -> str:
        """``text`` to print now, with line breaks (and indents) where words would overflow;
        its last word is held (``flush`` gives it) unless white space ends it."""
        if self.width is None:
            return text
        tokens, self._word = _TOKEN.findall(self._word + text), ""
        pieces: list[str] = []
        for n, token in enumerate(tokens):
            if token == "\n":
                pieces.append("\n")
                self.column = self.indent = 0
                self._space = ""
            elif token[0] in " \t":
                self._space += token
            elif n == len(tokens) - 1:  # the text ends in it: it may go on in the next piece
                self._word = token
            else:
                pieces.append(self._place(token))
        return "".join(pieces)

    def flush(self) -> str:
        """The word held, now that nothing follows it on this line."""
        word, self._word = self._word, ""
        return self._place(word) if word else ""

    def _place(self, word: str) -> str:
        """``word`` after the spaces held, or at the start of a new, indented line when it
        would overflow (a word wider than a line overflows it alone)."""
        assert self.width is not None
        space, self._space = self._space, ""
        cells = cell_len(word)
        if self.column > self.indent and self.column + cell_len(space) + cells > self.width:
            self.column = self.indent + cells
            return "\n" + " " * self.indent + word
        self.column += cell_len(space) + cells
        return space + word
