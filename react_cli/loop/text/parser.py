"""Pure functions that read what a model wrote in the text protocol: its thought and action,
and what is kept.

An action is ``Name[argument]`` with a name of the run's tool set, in any case; the patterns
that find one are built from the set's names (once per set of names). Which part of a reply
goes back into the prompt, and which part the loop ignores, is decided here too. Nothing here
does I/O or raises on bad input.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from react_cli.core.records import ToolCall
from react_cli.loop.text.cutter import cut_at_observation, strip_think
from react_cli.tools.base import FINISH, ToolSpec
from react_cli.tools.paper import PAPER_TOOLS

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
_BEFORE_ACTION = re.compile(r"[\s*_`\"'>]*")
# "Thought 1:", "*Thought*:", "**Thought 1:**" echoed back at the start of a line.
_THOUGHT_LABEL = re.compile(
    rf"^{_LEAD}(?:thought|思考)[ \t*_]*(?:\d+[ \t*_]*)?[:：](?:[*_]+(?=\s|$))?", re.IGNORECASE
)
_EMPHASIS_ONLY = "*_`"


@dataclass(frozen=True)
class _Actions:
    """The patterns of one set of action names: an unlabelled action that starts a line
    (``Search[X]``, ```Finish[y]```), and the head of an action (its name and bracket)."""

    line_action: re.Pattern[str]
    head: re.Pattern[str]
    spelling: dict[str, str]  # folded name -> the set's spelling


@lru_cache(maxsize=64)
def _actions(names: tuple[str, ...]) -> _Actions:
    # Literal alternatives, longest first: linear (each is tried once at each place).
    alternatives = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))
    return _Actions(
        re.compile(
            rf"^{_LEAD}[\"']?(?=(?:{alternatives})[ \t]*[\[［])", re.IGNORECASE | re.MULTILINE
        ),
        re.compile(rf"(?P<name>{alternatives})[ \t]*[\[［]", re.IGNORECASE),
        {name.casefold(): name for name in names},
    )


def _for(specs: Sequence[ToolSpec]) -> _Actions:
    return _actions(tuple(spec.name for spec in specs))


@dataclass(frozen=True)
class ParsedStep:
    """What one model turn contained.

    ``call`` is None when no valid action was found. ``action_text`` is what the model wrote
    at the action position (without label or emphasis) so the loop can echo it back next to
    an "invalid action" observation; it is None only when there was no action at all.
    """

    thought: str
    call: ToolCall | None
    action_text: str | None


def parse_step(text: str, specs: Sequence[ToolSpec] = PAPER_TOOLS) -> ParsedStep:
    """Split a model continuation after ``Thought k:`` into thought and first action.

    One "action site" decides: an ``Action`` label (any emphasis, colon or step number) or a
    line that starts with a tool's ``Name[``; a site at the start of a line wins over an
    inline label (see :func:`_first_action_site`). The thought is everything before it, as
    one line; the action must follow the label directly.
    """
    if not text:
        return ParsedStep("", None, None)
    actions = _for(specs)
    text = cut_at_observation(strip_think(text))
    site = _first_action_site(text, actions)
    if site is None:
        return ParsedStep(_clean_thought(text), None, None)
    site_start, body_start = site
    call, action_text = _read_action(text, body_start, actions)
    return ParsedStep(_clean_thought(text[:site_start]), call, action_text)


def parse_action(text: str, specs: Sequence[ToolSpec] = PAPER_TOOLS) -> ToolCall | None:
    """Parse a bare action such as ``Search[x]`` or ``Action 3: **Finish[y]**``.

    Unlike :func:`parse_step` nothing is stripped first, so an argument that happens to
    contain ``</think>`` survives a round trip through ``ParsedStep.action_text``.
    """
    if not text:
        return None
    actions = _for(specs)
    site = _first_action_site(text, actions)
    return _read_action(text, site[1] if site else 0, actions)[0]


def _first_action_site(text: str, actions: _Actions) -> tuple[int, int] | None:
    """(where the thought ends, where the action text begins) for the chosen action site.

    As in every original ReAct implementation, an action starts a line: the earliest
    line-start site wins, even over an earlier inline ``Action:`` inside a thought
    ("... so I will finish. Action: finish[a sentence].\nAction: finish[X]"). An inline
    label counts only when no line starts with an action.
    """
    for patterns in ((_LINE_ACTION_LABEL, actions.line_action), (_INLINE_ACTION_LABEL,)):
        sites = [(m.start(), m.end()) for m in (p.search(text) for p in patterns) if m]
        if sites:
            return min(sites)
    return None


def action_site(text: str, specs: Sequence[ToolSpec] = PAPER_TOOLS) -> tuple[int, bool] | None:
    """Where the thought ends in ``text`` (read as it is: no ``<think>`` block stripped), and
    whether its action starts a line (else it follows an inline ``Action:`` label); None
    when it holds no action site."""
    site = _first_action_site(text, _for(specs))
    if site is None:
        return None
    start = site[0]
    return start, start == 0 or text[start - 1] == "\n"


def action_line_end(text: str, specs: Sequence[ToolSpec] = PAPER_TOOLS) -> int | None:
    """Where the line holding the chosen action site ends in ``text`` (``<think>`` blocks
    already stripped); None when there is no action site. Text after it is not part of the step.
    """
    site = _first_action_site(cut_at_observation(text), _for(specs))
    return None if site is None else _line_end(text, site[1])


def _read_action(text: str, pos: int, actions: _Actions) -> tuple[ToolCall | None, str | None]:
    """Read the action that starts (after emphasis/quotes) at ``pos``; never raises."""
    lead = _BEFORE_ACTION.match(text, pos)
    pos = lead.end() if lead else pos
    line_end = _line_end(text, pos)
    raw = text[pos:line_end].strip().strip(_EMPHASIS_ONLY).strip() or None
    head = actions.head.match(text, pos, line_end)
    if not head:
        return None, raw
    close = _closing_bracket(text, head.end(), line_end)
    if close is None:
        return None, raw
    name = actions.spelling[head.group("name").casefold()]
    argument = text[head.end() : close].strip()
    if not argument and name != FINISH.name:
        return None, raw
    return ToolCall(name, argument), text[head.start() : close + 1]


def _line_end(text: str, pos: int) -> int:
    end = text.find("\n", pos)
    return len(text) if end < 0 else end


# A JSON object's tokens: whole strings (escapes read, disjoint alternatives: linear) and runs
# of anything else, up to 256 of them in a row (a bound: the regex engine keeps a record per
# repetition, which for a 1 MB run outgrows the caches); a run of opening or of closing
# brackets and braces; a lone quote is a string that never ends. The depth moves by a token.
_JSON_TOKEN = re.compile(r'(?:"(?:[^"\\\n]|\\.)*"|[^"{}\[\]\n]+){1,256}|[{\[]+|[}\]]+|"')
_CLOSING_BRACKETS = re.compile(r"[\]］]+")  # the opening ones before a run are counted
_CLOSE_AFTER = re.compile(r"[ \t]*[\]］]")


def _json_end(text: str, start: int, end: int) -> int | None:
    """Index of the ``]`` that closes an action whose argument is the JSON object starting
    at ``start`` (``Edit[{"old": "a]", "new": "b"}]``: a bracket inside a string is text),
    when that object's braces and brackets balance before ``end``; else None."""
    depth = 0
    for token in _JSON_TOKEN.finditer(text, start, end):
        first, size = text[token.start()], token.end() - token.start()
        if first in "{[":
            depth += size
        elif first in "}]":
            if size < depth:
                depth -= size
                continue
            if depth == 0:
                return None
            close = _CLOSE_AFTER.match(text, token.start() + depth, end)
            return None if close is None else close.end() - 1
        elif size == 1 and first == '"':
            return None
    return None


def _closing_bracket(text: str, start: int, end: int) -> int | None:
    """Index of the ``]`` that balances the ``[`` just before ``start``, on the same line: the
    one after a JSON object's end when the argument is one (its strings may hold brackets).

    Falls back to the last ``]`` on the line when the brackets don't balance, so
    ``Finish[a [b]`` still yields ``a [b``; None when the line has no ``]`` at all.
    """
    first = _NON_SPACE.search(text, start, end)
    if first is not None and text[first.start()] == "{":
        close = _json_end(text, first.start(), end)
        if close is not None:
            return close
    depth, counted = 1, start
    for run in _CLOSING_BRACKETS.finditer(text, start, end):
        depth += text.count("[", counted, run.start()) + text.count("［", counted, run.start())
        if run.end() - run.start() >= depth:
            return run.start() + depth - 1
        depth, counted = depth - (run.end() - run.start()), run.end()
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


def kept_in_prompt(text: str, specs: Sequence[ToolSpec] = PAPER_TOOLS) -> str:
    """The part of a model output that goes back into the prompt: reasoning blocks removed,
    cut after the line holding the parsed action (later lines are unrequested extra steps)."""
    text = strip_think(text)
    end = action_line_end(text, specs)
    return (text if end is None else text[:end]).rstrip()


def ignored_text(text: str, *, thought_call: bool, specs: Sequence[ToolSpec] = PAPER_TOOLS) -> str:
    """The end of a model output the loop does not keep: what follows the action's line, or,
    for a ``Thought k:`` call without an action, what follows its first line (a base model's
    invented next step or ``Question:`` block, an echoed instruction). A suffix of ``text``;
    empty when everything is kept or ``<think>`` blocks make the split unclear."""
    stripped = strip_think(text)
    end = action_line_end(stripped, specs)
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
