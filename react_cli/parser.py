"""Pure functions that read what a model wrote: its thought and action, and what is kept.

Which part of a reply goes back into the prompt, and which part the loop ignores, is decided
here too. Nothing here does I/O or raises on bad input.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from react_cli.cutter import cut_at_observation, strip_think
from react_cli.records import StrEnum

VALID_ACTIONS_HINT = (
    "Invalid action. Valid actions are Search[entity], Lookup[keyword] and Finish[answer]."
)
_NON_SPACE = re.compile(r"\S")

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


class ActionKind(StrEnum):
    """The three actions of the paper, as the parser normalises them (lower case)."""

    SEARCH = "search"
    LOOKUP = "lookup"
    FINISH = "finish"


@dataclass(frozen=True)
class Action:
    """One action the model wrote: its kind and its argument."""

    kind: ActionKind
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
    kind = ActionKind(head.group("kind").lower())
    argument = text[head.end() : close].strip()
    if not argument and kind is not ActionKind.FINISH:
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


def kept_in_prompt(text: str) -> str:
    """The part of a model output that goes back into the prompt: reasoning blocks removed,
    cut after the line holding the parsed action (later lines are unrequested extra steps)."""
    text = strip_think(text)
    end = action_line_end(text)
    return (text if end is None else text[:end]).rstrip()


def ignored_text(text: str, *, thought_call: bool) -> str:
    """The end of a model output the loop does not keep: what follows the action's line, or,
    for a ``Thought k:`` call without an action, what follows its first line (a base model's
    invented next step or ``Question:`` block, an echoed instruction). A suffix of ``text``;
    empty when everything is kept or ``<think>`` blocks make the split unclear."""
    stripped = strip_think(text)
    end = action_line_end(stripped)
    if end is None:
        first = _NON_SPACE.search(stripped)
        if not thought_call or first is None:
            return ""
        end = stripped.find("\n", first.start())
    tail = stripped[end:] if end >= 0 else ""
    return tail if tail.strip() and text.endswith(tail) else ""


def first_line(text: str) -> str:
    """The first non-blank line of a model output, reasoning blocks removed: the thought the
    loop keeps when it asks for the action alone."""
    return next((line for line in strip_think(text).split("\n") if line.strip()), "").rstrip()
