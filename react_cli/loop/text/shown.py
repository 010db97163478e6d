"""How a text-protocol reply is shown while it streams: its thought, as the parser will read
it, and never its action (the loop tells that once the reply is read).

The first line of a ``Thought k:`` reply streams a word at a time, holding back what may yet
turn out to be an action: a line that starts with a tool's name or an ``Action`` label, a
word that may become an inline ``Action:`` label (the rest of that line waits for the line's
end), the word still being written. Later lines wait for a line that starts with an action,
which makes them part of the thought (shown then, a label the model wrote at the start of one,
``Thought 2:``, dropped: the thought goes on), or for the reply's end, which makes them the
ignored tail (``Reply.ignored``, shown dimmed) unless an inline label on one of them was the
action. A label the model echoed at the very start (``Thought 1: Thought 1: …``) is skipped.

Each line is examined once, when it ends (the one being written, only at its new words and
within ``MAX_HEAD`` characters), and text is kept in pieces, joined once: linear in the reply,
whatever pieces it comes in.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from react_cli.loop.text.parser import action_site
from react_cli.tools.base import ToolSpec

# A label the model echoed after the one the prompt ends with ("Thought 1: Thought 1: I ..."),
# on the reply's first line: a line break ends the window, however the reply streams in.
_ECHOED_LABEL = re.compile(r"[ \t]*[*_]*thought[ \t*_]*(?:\d+[ \t*_]*)?[:：][*_]*", re.IGNORECASE)
ECHO_WINDOW = 24  # characters held at the start of a reply until an echoed label is ruled out
MAX_HEAD = 1000  # characters of the first line examined while it streams: past it, it waits
_LEAD = " \t>#*_`-\"'"  # what may come before a tool's name or a label at the start of a line
_EMPHASIS = "*_`"
_INLINE_WORDS = ("Action", "ACTION", "行动", "行動")  # an inline label's word (case matters)
_LABEL_WORDS = ("action", "行动", "行動")  # a label's word at the start of a line (any case)
_SPACE = re.compile(r"[ \t]+")
_FIRST_WORD = re.compile(r"[^ \t\[［:：]*")


class ThoughtShown:
    """One ``Thought k:`` reply of a run with tools ``specs``, shown as it streams."""

    def __init__(self, specs: Sequence[ToolSpec]) -> None:
        self.specs = specs
        self._starts = frozenset(spec.name.casefold() for spec in specs) | set(_LABEL_WORDS)
        self._head: str | None = ""  # the reply's start, until an echoed label is ruled out
        self._line: list[str] = []  # the line being written, in pieces
        self._first = True  # the line being written is the first
        self._streaming = True  # the first line streams (not held back for its end)
        self._unshown = ""  # of the first line as it streams: what is not shown yet
        self._shown = 0  # of the first line: how much is shown
        self._held: list[str] = []  # text after what is shown: thought if an action line comes
        self._held_size = 0
        self._inline: int | None = None  # where in the held text an inline label's action is
        self._done = False  # the thought has ended: nothing more is shown

    def feed(self, text: str) -> str:
        if self._done:
            return ""
        if self._head is not None:
            self._head += text
            if len(self._head) < ECHO_WINDOW and "\n" not in self._head:
                return ""
            text, self._head = _unechoed(self._head), None
        shown = []
        pieces = text.split("\n")
        for number, piece in enumerate(pieces):
            self._line.append(piece)
            if self._streaming and self._first:
                self._unshown += piece
            if number < len(pieces) - 1 and not self._done:
                shown.append(self._line_ended("".join(self._line)))
                self._line = []
        if self._first and self._streaming and not self._done:
            shown.append(self._stream())
        return "".join(shown)

    def end(self) -> str:
        """The reply is complete: the rest of its thought, wherever its action was."""
        if self._head is not None:
            self._line, self._head = [_unechoed(self._head)], None
        if self._done:
            return ""
        self._done = True
        line = "".join(self._line)
        site = action_site(line, self.specs)
        if self._first:  # one line: thought up to its action, if it holds one
            return self._first_upto(len(line) if site is None else site[0], line).rstrip()
        if site is not None and site[1]:
            return self._held_upto(self._held_size)
        if self._inline is not None:
            return self._held_upto(self._inline)
        if site is not None:  # an inline label on the last line: thought up to it
            self._hold(line, site[0])
            return self._held_upto(self._inline or 0)
        return ""  # no action: the lines after the first are the ignored tail

    def _line_ended(self, line: str) -> str:
        """``line`` has ended: what of the text it lets be shown."""
        site = action_site(line, self.specs)
        if self._first:
            self._first = False
            if site is None:
                return self._first_upto(len(line), line) + "\n"
            thought = len(line[: site[0]].rstrip())
            shown = self._first_upto(thought, line)
            if site[1]:  # the first line is the action's: the thought is what came before it
                self._done = True
            else:  # an inline label: its action, or thought if a line starts with one
                rest = line[max(thought, self._shown) :] + "\n"
                self._hold(rest, site[0] - thought, line=False)
            return shown
        if site is not None and site[1]:  # an action starts this line: what waited is thought
            self._done = True
            return self._held_upto(self._held_size)
        self._hold(line + "\n", None if site is None else site[0])
        return ""

    def _hold(self, text: str, inline: int | None, *, line: bool = True) -> None:
        """Keep ``text`` (an inline label ``inline`` characters in) until it is told apart;
        of a ``line`` after the first, a label the model wrote at its start (``Thought 2:``)
        is dropped."""
        unlabelled = _without_label(text) if line else text
        if inline is not None and self._inline is None:
            self._inline = self._held_size + max(0, inline - (len(text) - len(unlabelled)))
        self._held.append(unlabelled)
        self._held_size += len(unlabelled)

    def _held_upto(self, end: int) -> str:
        """The held text up to ``end``: the end of the thought."""
        return "".join(self._held)[:end].rstrip()

    def _first_upto(self, end: int, line: str) -> str:
        """The first line (``line``, whole) shown up to ``end``."""
        piece = line[self._shown : end] if end > self._shown else ""
        self._shown = max(self._shown, end)
        return piece

    def _stream(self) -> str:
        """What of the first line, still being written, may be shown now: up to the first
        word that may yet be part of an action (or the word still being written)."""
        line = self._unshown
        if len(line) > MAX_HEAD:  # a word this long: the line waits for its end
            self._streaming = False
            return ""
        if self._shown == 0 and self._may_start_action(line):
            return ""
        safe, word_start = 0, 0  # the end of the last word that may be shown, the next's start
        for space in _SPACE.finditer(line):
            word = line[word_start : space.start()]
            if word and (word_start or self._shown) and _may_be_inline_label(word):
                self._streaming = False  # the rest of the line waits for its end
                break
            safe, word_start = space.start(), space.end()
        self._unshown, self._shown = line[safe:], self._shown + safe
        return line[:safe]

    def _may_start_action(self, line: str) -> bool:
        """Whether the first line, as far as it is written, may still start with an action:
        its first word (after marks and quotes) is still being written, or is a tool's name
        or ``Action``."""
        head = line.lstrip(_LEAD)
        match = _FIRST_WORD.match(head)
        word = match.group() if match else ""
        return len(word) == len(head) or word.rstrip("*_").casefold() in self._starts


def _unechoed(head: str) -> str:
    """The reply's start without a label the model echoed."""
    echo = _ECHOED_LABEL.match(head)
    return head[echo.end() :] if echo else head


def _may_be_inline_label(word: str) -> bool:
    """Whether ``word`` (after a space) may be, or become, an inline ``Action`` label."""
    bare = word.lstrip(_EMPHASIS)
    return bool(bare) and any(
        bare.startswith(label) or label.startswith(bare) for label in _INLINE_WORDS
    )


def _without_label(line: str) -> str:
    """A later line of a thought as shown: a ``Thought N:`` label the model wrote dropped."""
    label = _ECHOED_LABEL.match(line)
    return line[label.end() :].lstrip(" \t") if label else line
