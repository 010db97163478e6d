"""Tools: what the model may call, as one set the parser, the prompts, replay and the renderer
all read.

A :class:`Tool` is a declaration (:class:`ToolSpec`: its name, what its argument is, what it
does) and a call that never raises: a failure is a :class:`ToolResult` whose observation says
so. A :class:`ToolSet` holds one run's tools by name, any case, with Finish built in (the loop
ends the run on it; it has no call). Tools may keep state for their run (Wikipedia's Lookup
reads the page of the last Search), so every run gets a set of its own.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from react_cli.core.errors import UsageError
from react_cli.infra.deadline import Deadline


@dataclass(frozen=True)
class ToolSpec:
    """A tool as the model is told of it: ``Search[entity], which searches ...`` (the
    description completes the paper's "which ..." clause)."""

    name: str  # as the model writes it, e.g. "Search"
    argument: str  # what its argument is, e.g. "entity"
    description: str

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "argument": self.argument, "description": self.description}

    @classmethod
    def from_json(cls, data: Any) -> ToolSpec:
        """A recorded declaration; TypeError naming what is not text."""
        if not isinstance(data, dict):
            raise TypeError(f"a tool is {type(data).__name__}, not an object")
        name, argument, description = (data.get(k) for k in ("name", "argument", "description"))
        if not (isinstance(name, str) and isinstance(argument, str) and name):
            raise TypeError("a tool's name or argument is not text")
        if not isinstance(description, str):
            raise TypeError("a tool's description is not text")
        return cls(name, argument, description)


FINISH = ToolSpec("Finish", "answer", "returns the answer and finishes the task.")


NOTHING_NEW = "nothing_new"
"""A result's detail: the call brought nothing new (not found, no more results, a page
already seen), which ``--max-no-progress`` counts; recorded, so a replay counts it too."""


@dataclass
class ToolResult:
    """One tool call's result: the observation shown to the model, facts worth recording
    (``details``, e.g. ``resolved_title``; ``NOTHING_NEW``), why the call failed, if it did
    (the observation then says so to the model), and the requests it had to make again."""

    observation: str
    details: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    retries: int = 0

    @property
    def nothing_new(self) -> bool:
        """Whether the tool said the call brought nothing new."""
        return self.details.get(NOTHING_NEW) is True


class Tool(Protocol):
    """Something the model may call with one text argument."""

    @property
    def spec(self) -> ToolSpec: ...

    def call(self, argument: str, *, deadline: Deadline) -> ToolResult:
        """Run the call before ``deadline``; a failure is a result with ``error`` set."""
        ...


class ToolSet:
    """One run's tools by name (matched in any case), Finish last."""

    def __init__(self, tools: Iterable[Tool]) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            key = tool.spec.name.casefold()
            if key == FINISH.name.casefold() or key in self._tools:
                raise UsageError(f"two tools are named {tool.spec.name!r}")
            self._tools[key] = tool

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    @property
    def specs(self) -> tuple[ToolSpec, ...]:
        """Every declaration, Finish last: what the model is told it may call."""
        return (*(tool.spec for tool in self), FINISH)

    def get(self, name: str) -> Tool | None:
        """The tool ``name`` calls, in any case (None for Finish and for no tool)."""
        return self._tools.get(name.casefold())
