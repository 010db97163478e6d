"""A conversation's turns as a follow-up question is given them, and as a trace records that.

A :class:`Turn` is one earlier question of a conversation, its answer and the calls its run
made (each observation cut to a line: the turn's own trace keeps it whole). An
:class:`Earlier` is what a new question gets of the turns before it: the turns, the most tokens
a protocol may spend showing them (``max_history_tokens``; the newest kept, the oldest
dropped, :meth:`Earlier.kept`), and what the tools carry over (the page of the last Search,
for a follow-up ``Lookup``). Each protocol shows the turns its own way (``loop.text``: an
``Earlier in this conversation:`` block; ``loop.tools``: the earlier messages). A
:class:`ConversationRecord` is a trace's ``conversation`` field: which conversation, which
turn, and the context it was given, so a re-run needs nothing else.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from react_cli.core import fields
from react_cli.core.records import CHARS_PER_TOKEN, ToolCall
from react_cli.core.trajectory import Run

DEFAULT_MAX_HISTORY_TOKENS = 1000
LINE_CHARS = 120
"""An earlier observation is cut to this many characters: a line, enough to recall it by."""
MAX_TEXT_CHARS = 1 << 20
"""The longest text a recorded turn may hold (a question read from stdin is at most 1 MiB)."""
MAX_CARRIED = 16  # entries a turn's carried tool state may hold
MAX_TURN_STEPS = 1000
MAX_TURNS = 100_000
ID_PATTERN = re.compile(r"[0-9A-Za-z_-]{1,64}")
"""A conversation's id: a file name in the home directory's ``conversations/`` as it is."""


def tokens(text: str) -> int:
    """The tokens ``text`` is counted as against ``max_history_tokens`` (an estimate)."""
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def one_line(text: str, limit: int = LINE_CHARS) -> str:
    """``text`` on one line, cut at a word to at most ``limit`` characters (`` …`` ends it)."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 2]
    cut = cut[: cut.rindex(" ")] if " " in cut else cut
    return cut.rstrip() + " …"


@dataclass(frozen=True)
class TurnStep:
    """One call of an earlier question's run: the thought of the reply that made it, the call,
    its observation cut to a line, and the step of that reply (calls of one reply share it)."""

    thought: str
    call: ToolCall
    observation: str
    reply: int

    def to_json(self) -> dict[str, Any]:
        call = {"name": self.call.name, "argument": self.call.argument, "id": self.call.id}
        return {
            "thought": self.thought,
            "call": call,
            "observation": self.observation,
            "reply": self.reply,
        }

    @classmethod
    def from_json(cls, data: Any) -> TurnStep:
        data = _object(data, "a turn's step")
        call = _object(data.get("call"), "a step's call")
        name = fields.needed(_text(call, "name"), "name")
        argument = fields.needed(_text(call, "argument"), "argument")
        reply = fields.needed(fields.whole(data.get("reply"), "reply", low=1), "reply")
        return cls(
            thought=_text(data, "thought") or "",
            call=ToolCall(name, argument, _text(call, "id")),
            observation=_text(data, "observation") or "",
            reply=reply,
        )


@dataclass(frozen=True)
class Turn:
    """An earlier question of a conversation, its answer (None: it got none) and its calls."""

    question: str
    answer: str | None
    steps: tuple[TurnStep, ...] = ()

    @classmethod
    def of(cls, run: Run) -> Turn:
        """The turn ``run`` makes: each call it ran (Finish too), observations cut to a line."""
        steps = []
        for step in (step for step in run.steps if step.error_text is None):
            thought = step.thought  # the reply's, with its first call
            for action in step.actions:
                if action.call is not None:
                    observation = one_line(action.observation)
                    steps.append(TurnStep(thought, action.call, observation, step.index))
                    thought = ""
        return cls(run.question, run.answer, tuple(steps))

    def to_json(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "answer": self.answer,
            "steps": [step.to_json() for step in self.steps],
        }

    @classmethod
    def from_json(cls, data: Any) -> Turn:
        """A recorded turn; ValueError or TypeError saying what is wrong."""
        data = _object(data, "a turn")
        steps = data.get("steps") or []
        if not isinstance(steps, list) or len(steps) > MAX_TURN_STEPS:
            raise fields.FieldError("steps", steps, f"not a list of at most {MAX_TURN_STEPS}")
        return cls(
            question=fields.needed(_text(data, "question"), "question"),
            answer=_text(data, "answer"),
            steps=tuple(TurnStep.from_json(step) for step in steps),
        )


@dataclass(frozen=True)
class Earlier:
    """What a question of a conversation is given of the questions before it: their turns,
    oldest first; the most tokens a protocol may spend showing them; and the tools' state the
    conversation carries over (see ``tools.base.ToolSet.resume``)."""

    turns: tuple[Turn, ...] = ()
    max_tokens: int = DEFAULT_MAX_HISTORY_TOKENS
    carried: Mapping[str, str] = field(default_factory=dict)

    def kept(self, size: Callable[[Turn], int]) -> tuple[Turn, ...]:
        """The newest turns whose renderings (``size`` tokens each) fit ``max_tokens``
        together, oldest first: the turn that would pass the budget is dropped, and every
        turn before it."""
        kept: list[Turn] = []
        total = 0
        for turn in reversed(self.turns):
            total += size(turn)
            if total > self.max_tokens:
                break
            kept.append(turn)
        return tuple(reversed(kept))

    @classmethod
    def within(cls, turns: list[Turn], max_tokens: int, carried: Mapping[str, str]) -> Earlier:
        """The context of a conversation's next question: its answered turns that could fit
        ``max_tokens`` at all (every protocol shows at least a turn's question and answer,
        so no protocol keeps more), and what the tools carry."""
        answered = [turn for turn in turns if turn.answer is not None]
        earlier = cls(tuple(answered), max_tokens, dict(carried))
        least = earlier.kept(lambda turn: tokens(turn.question + (turn.answer or "")))
        return cls(least, max_tokens, dict(carried))


@dataclass(frozen=True)
class ConversationRecord:
    """A trace's ``conversation``: its conversation's id, the run's turn in it (1 = first)
    and the context the run was given (None in a record that holds none)."""

    id: str
    turn: int
    earlier: Earlier | None = None

    def turn_json(self) -> dict[str, Any]:
        """Which conversation and turn, without the context: what listings show."""
        return {"id": self.id, "turn": self.turn}

    def to_json(self) -> dict[str, Any]:
        data = self.turn_json()
        if self.earlier is not None:
            data["max_history_tokens"] = self.earlier.max_tokens
            data["carried"] = dict(self.earlier.carried)
            data["earlier"] = [turn.to_json() for turn in self.earlier.turns]
        return data

    @classmethod
    def from_json(cls, data: Any) -> ConversationRecord:
        """A recorded ``conversation``; ValueError or TypeError saying what is wrong."""
        data = _object(data, "conversation")
        conversation_id = fields.needed(_text(data, "id"), "id")
        if not ID_PATTERN.fullmatch(conversation_id):
            raise fields.FieldError("id", conversation_id, "not a conversation id")
        turn = fields.needed(fields.whole(data.get("turn"), "turn", low=1), "turn")
        if "earlier" not in data:
            return cls(conversation_id, turn)
        turns = data["earlier"]
        if not isinstance(turns, list) or len(turns) > MAX_TURNS:
            raise fields.FieldError("earlier", turns, "not a list of turns")
        max_tokens = fields.whole(data.get("max_history_tokens"), "max_history_tokens")
        earlier = Earlier(
            tuple(Turn.from_json(turn) for turn in turns),
            DEFAULT_MAX_HISTORY_TOKENS if max_tokens is None else max_tokens,
            carried_from_json(data.get("carried")),
        )
        return cls(conversation_id, turn, earlier)


def carried_from_json(data: Any) -> dict[str, str]:
    """Recorded carried tool state: a small object of texts."""
    if data is None:
        return {}
    data = _object(data, "carried")
    if len(data) > MAX_CARRIED or not all(isinstance(v, str) for v in data.values()):
        raise fields.FieldError("carried", data, f"not an object of at most {MAX_CARRIED} texts")
    return {key: _bounded(value, key) for key, value in data.items()}


def _object(data: Any, what: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise TypeError(f"{what} is {type(data).__name__}, not an object")
    return data


def _text(data: Mapping[str, Any], key: str) -> str | None:
    value = fields.text(data.get(key), key)
    return None if value is None else _bounded(value, key)


def _bounded(value: str, key: str) -> str:
    if len(value) > MAX_TEXT_CHARS:
        raise fields.FieldError(key, value, "too long")
    return value
