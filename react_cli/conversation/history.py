"""One conversation: its turns in order, what its next question is given, and how it is kept.

Every question asked with ``ask`` or ``chat`` is a turn of a conversation (a new one unless
the question continues one). A turn keeps what a follow-up may be shown of it (question,
answer, its calls with observations cut to a line: ``core.conversation.Turn``), what its tools
left to carry over (the page of its last Search), and where its trace is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from react_cli.core import fields
from react_cli.core.conversation import (
    ID_PATTERN,
    MAX_TURNS,
    ConversationRecord,
    Earlier,
    Turn,
    carried_from_json,
)
from react_cli.core.trajectory import Run
from react_cli.traces.trace import new_run_id

VERSION = 1


@dataclass(frozen=True)
class StoredTurn:
    """A turn as its conversation keeps it: the turn, what its tools left to carry (empty:
    nothing new), its trace's path (None: it wrote none) and when it was asked."""

    turn: Turn
    carried: dict[str, str] = field(default_factory=dict)
    trace: str | None = None
    created: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            **self.turn.to_json(),
            "carried": self.carried,
            "trace": self.trace,
            "created": self.created,
        }

    @classmethod
    def from_json(cls, data: Any) -> StoredTurn:
        turn = Turn.from_json(data)
        return cls(
            turn,
            carried_from_json(data.get("carried")),
            fields.optional_text(data, "trace"),
            fields.optional_text(data, "created"),
        )


@dataclass
class Conversation:
    """A conversation's id, when it started, and its turns (the first is turn 1); ``saved``:
    how many of them its file held when it was read or last written (the others are this
    command's, not kept yet)."""

    id: str
    created: str
    turns: list[StoredTurn] = field(default_factory=list)
    saved: int = 0

    @property
    def unsaved(self) -> list[StoredTurn]:
        """The turns this command added that its file does not hold yet."""
        return self.turns[self.saved :]

    @classmethod
    def start(cls, created: datetime) -> Conversation:
        return cls(new_run_id(), created.isoformat())

    @property
    def carried(self) -> dict[str, str]:
        """What the tools carry into the next question: what the last turn that left
        anything left (a turn that searched nothing leaves the page before it in place)."""
        return next((turn.carried for turn in reversed(self.turns) if turn.carried), {})

    def earlier(self, max_tokens: int) -> Earlier:
        """What the next question is given: the answered turns that may fit ``max_tokens``
        (each protocol keeps the newest of them its rendering fits) and the carried state."""
        return Earlier.within([turn.turn for turn in self.turns], max_tokens, self.carried)

    def record(self, earlier: Earlier) -> ConversationRecord:
        """The ``conversation`` of the next question's trace: this one, its turn, ``earlier``."""
        return ConversationRecord(self.id, len(self.turns) + 1, earlier)

    def add(self, run: Run, carried: dict[str, str], trace: Path | None, created: datetime) -> None:
        """The next turn: ``run`` (a question's whole run), what its tools left to carry,
        where its trace went."""
        where = None if trace is None else str(trace.absolute())
        self.turns.append(StoredTurn(Turn.of(run), carried, where, created.isoformat()))

    def to_json(self) -> dict[str, Any]:
        return {
            "version": VERSION,
            "id": self.id,
            "created": self.created,
            "turns": [turn.to_json() for turn in self.turns],
        }

    @classmethod
    def from_json(cls, data: Any) -> Conversation:
        """A kept conversation; ValueError or TypeError saying what is wrong."""
        if not isinstance(data, dict):
            raise TypeError(f"the top level is {type(data).__name__}, not an object")
        version = data.get("version")
        if version != VERSION or isinstance(version, bool):
            raise fields.FieldError("version", version, f"not {VERSION}")
        conversation_id = fields.needed(fields.optional_text(data, "id"), "id")
        if not ID_PATTERN.fullmatch(conversation_id):
            raise fields.FieldError("id", conversation_id, "not a conversation id")
        turns = data.get("turns")
        if not isinstance(turns, list) or len(turns) > MAX_TURNS:
            raise fields.FieldError("turns", turns, "not a list of turns")
        kept = []
        for number, turn in enumerate(turns, start=1):
            try:
                kept.append(StoredTurn.from_json(turn))
            except (TypeError, ValueError) as exc:
                raise ValueError(f"turn {number}: {exc}") from None
        created = fields.optional_text(data, "created") or ""
        return cls(conversation_id, created, kept, saved=len(kept))
