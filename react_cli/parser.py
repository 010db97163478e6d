"""Pure functions that read what a model wrote. Nothing here does I/O or raises on bad input."""

from __future__ import annotations

import re
from dataclasses import dataclass

VALID_ACTIONS_HINT = (
    "Invalid action. Valid actions are Search[entity], Lookup[keyword] and Finish[answer]."
)

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


# --- Thought / Action parsing -------------------------------------------------------------
#
# Every pattern below is linear: no nested quantifiers, and adjacent repeated classes are
# separated by a mandatory token, so a 1 MB run of "[" or "Action:" cannot blow up.

_LEAD = r"[ \t>#*_`\-]*"  # quote marks, bullets and markdown emphasis before a label
# "Action", "**Action 2:**", "__Action__：", "Action 7 :" ... at the start of a line.
_LINE_ACTION_LABEL = re.compile(
    rf"^{_LEAD}(?:action|行动|行動)[ \t*_]*(?:\d+[ \t*_]*)?[:：]", re.IGNORECASE | re.MULTILINE
)
# The same label in the middle of a line ("I should search X. Action 1: Search[X]"). Only
# the capitalised word counts here, so "the action: ..." inside a thought is left alone.
_INLINE_ACTION_LABEL = re.compile(
    r"(?<=[ \t])[*_`]*(?:Action|ACTION|行动|行動)[ \t*_]*(?:\d+[ \t*_]*)?[:：]"
)
# An unlabelled action that starts a line ("Search[X]", "`Finish[y]`").
_LINE_ACTION = re.compile(
    rf"^{_LEAD}[\"']?(?=(?:search|lookup|finish)[ \t]*[\[［])", re.IGNORECASE | re.MULTILINE
)
_ACTION_HEAD = re.compile(r"(?P<kind>search|lookup|finish)[ \t]*[\[［]", re.IGNORECASE)
_BEFORE_ACTION = re.compile(r"[\s*_`\"'>]*")
_BRACKET = re.compile(r"[\[\]［］]")
# "Thought 1:", "*Thought*:", "**Thought 1:**" echoed back at the start of a line.
_THOUGHT_LABEL = re.compile(
    rf"^{_LEAD}(?:thought|思考)[ \t*_]*(?:\d+[ \t*_]*)?[:：](?:[*_]+(?=\s|$))?", re.IGNORECASE
)
_EMPHASIS_ONLY = "*_`"


@dataclass(frozen=True)
class Action:
    """One tool call; ``kind`` is lower-case so callers can compare without normalising."""

    kind: str
    argument: str

    def __str__(self) -> str:
        """Canonical spelling (``Search[x]``) for prompts and logs, whatever the model wrote."""
        return f"{self.kind.capitalize()}[{self.argument}]"


@dataclass(frozen=True)
class ParsedStep:
    """What one model turn contained.

    ``action`` is None when no valid action was found. ``action_text`` is what the model
    wrote at the action position (without label or emphasis) so the agent can echo it back
    next to an "invalid action" observation; it is None only when there was no action at all.
    """

    thought: str
    action: Action | None
    action_text: str | None


def parse_step(text: str) -> ParsedStep:
    """Split a model continuation after ``Thought k:`` into thought and first action.

    One "action site" decides: an ``Action`` label (any emphasis, colon or step number) or a
    line that starts with ``Search[``/``Lookup[``/``Finish[``; a site at the start of a line
    wins over an inline label (see :func:`_first_action_site`). The thought is everything
    before it, as one line; the action must follow the label directly.
    """
    if not text:
        return ParsedStep("", None, None)
    text = cut_at_observation(strip_think(text))
    site = _first_action_site(text)
    if site is None:
        return ParsedStep(_clean_thought(text), None, None)
    site_start, body_start = site
    action, action_text = _read_action(text, body_start)
    return ParsedStep(_clean_thought(text[:site_start]), action, action_text)


def parse_action(text: str) -> Action | None:
    """Parse a bare action such as ``Search[x]`` or ``Action 3: **Finish[y]**``.

    Unlike :func:`parse_step` nothing is stripped first, so an argument that happens to
    contain ``</think>`` survives a round trip through ``ParsedStep.action_text``.
    """
    if not text:
        return None
    site = _first_action_site(text)
    return _read_action(text, site[1] if site else 0)[0]


def _first_action_site(text: str) -> tuple[int, int] | None:
    """(where the thought ends, where the action text begins) for the chosen action site.

    As in every original ReAct implementation, an action starts a line: the earliest
    line-start site wins, even over an earlier inline ``Action:`` inside a thought
    ("... so I will finish. Action: finish[a sentence].\nAction: finish[X]"). An inline
    label counts only when no line starts with an action.
    """
    for patterns in ((_LINE_ACTION_LABEL, _LINE_ACTION), (_INLINE_ACTION_LABEL,)):
        sites = [(m.start(), m.end()) for m in (p.search(text) for p in patterns) if m]
        if sites:
            return min(sites)
    return None


def action_line_end(text: str) -> int | None:
    """Where the line holding the chosen action site ends in ``text`` (``<think>`` blocks
    already stripped); None when there is no action site. Text after it is not part of the step.
    """
    site = _first_action_site(cut_at_observation(text))
    return None if site is None else _line_end(text, site[1])


def _read_action(text: str, pos: int) -> tuple[Action | None, str | None]:
    """Read the action that starts (after emphasis/quotes) at ``pos``; never raises."""
    lead = _BEFORE_ACTION.match(text, pos)
    pos = lead.end() if lead else pos
    line_end = _line_end(text, pos)
    raw = text[pos:line_end].strip().strip(_EMPHASIS_ONLY).strip() or None
    head = _ACTION_HEAD.match(text, pos, line_end)
    if not head:
        return None, raw
    close = _closing_bracket(text, head.end(), line_end)
    if close is None:
        return None, raw
    kind = head.group("kind").lower()
    argument = text[head.end() : close].strip()
    if not argument and kind != "finish":
        return None, raw
    return Action(kind, argument), text[head.start() : close + 1]


def _line_end(text: str, pos: int) -> int:
    end = text.find("\n", pos)
    return len(text) if end < 0 else end


def _closing_bracket(text: str, start: int, end: int) -> int | None:
    """Index of the ``]`` that balances the ``[`` just before ``start``, on the same line.

    Falls back to the last ``]`` on the line when the brackets don't balance, so
    ``Finish[a [b]`` still yields ``a [b``; None when the line has no ``]`` at all.
    """
    depth = 1
    for match in _BRACKET.finditer(text, start, end):
        depth += 1 if match.group() in "[［" else -1
        if depth == 0:
            return match.start()
    last = max(text.rfind("]", start, end), text.rfind("］", start, end))
    return last if last >= 0 else None


def _clean_thought(text: str) -> str:
    """One-line thought: labels and emphasis-only lines dropped, whitespace runs collapsed.

    It is re-sent as ``Thought k: <thought>``, so line breaks must not survive.
    """
    parts = []
    for line in text.splitlines():
        line = _THOUGHT_LABEL.sub("", line, count=1).strip()
        if line.strip(_EMPHASIS_ONLY):
            parts.append(line)
    return " ".join(" ".join(parts).split())
