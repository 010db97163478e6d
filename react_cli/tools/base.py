"""Tools: what the model may call, as one set the parser, the prompts, replay and the renderer
all read.

A :class:`Tool` is a declaration (:class:`ToolSpec`: its name, what its argument is, what it
does) and a call that never raises: a failure is a :class:`ToolResult` whose observation says
so. A :class:`ToolSet` holds one run's tools by name, any case, with Finish built in (the loop
ends the run on it; it has no call). Tools may keep state for their run (Wikipedia's Lookup
reads the page of the last Search: tools sharing state are one ``toolbox.Toolbox``), so
every run gets a set of its own; a tool or a box that :class:`Carries` its state lets a
conversation's next question take it up (a follow-up's Lookup reads the page the question
before it found).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from react_cli.core.errors import UsageError
from react_cli.core.sources import PageSource
from react_cli.core.trajectory import RefusedBy, Step
from react_cli.infra.deadline import Deadline
from react_cli.infra.untrusted import BadInput, parse_json
from react_cli.tools.origin import BUILT_IN, ToolOrigin
from react_cli.tools.schema import ArgumentError, checked, example, one_text_schema


@dataclass(frozen=True)
class ToolSpec:
    """A tool as the model is told of it: ``Search[entity], which searches ...`` (the
    description completes the paper's "which ..." clause), or as a native function declaration
    (:meth:`declaration`: ``search`` with the JSON Schema of its arguments).

    A tool of one text argument needs no schema (it is made from ``argument``); one that takes
    more gives ``parameters``, its arguments' JSON Schema, and receives them as JSON text.
    ``origin`` says where it came from (None: a tool registered in this process that did not
    say); ``needs_consent``, that a call runs only when the user allows it (``tools.consent``:
    an MCP tool its server does not mark read-only, a ``@tool(needs_consent=True)``)."""

    name: str  # as the model writes it, e.g. "Search"
    argument: str  # what its argument is, e.g. "entity"
    description: str
    parameters: dict[str, Any] | None = field(default=None, compare=False)
    origin: ToolOrigin | None = field(default=None, compare=False)
    needs_consent: bool = field(default=False, compare=False)

    @property
    def function_name(self) -> str:
        """Its name as a native function: lower case, only the characters OpenAI allows."""
        name = "".join(c if c.isascii() and (c.isalnum() or c in "_-") else "_" for c in self.name)
        return name.lower()[:64] or "tool"

    @property
    def schema(self) -> dict[str, Any]:
        """The JSON Schema of its arguments: ``parameters``, or one text ``argument``."""
        return self.parameters if self.parameters is not None else one_text_schema(self.argument)

    def declaration(self) -> dict[str, Any]:
        """The tool as an OpenAI ``tools`` entry."""
        description = self.description[:1].upper() + self.description[1:]
        function = {"name": self.function_name, "description": description}
        return {"type": "function", "function": {**function, "parameters": self.schema}}

    def argument_from(self, arguments: Any) -> str:
        """The argument a call with these JSON ``arguments`` runs with: the one text, or
        (a tool with ``parameters``) the arguments as JSON text; ArgumentError when they do
        not fit the schema."""
        fitted = checked(self.function_name, self.schema, arguments)
        if self.parameters is None:
            return str(fitted[self.argument])
        return json.dumps(fitted, ensure_ascii=False, sort_keys=True)

    def arguments(self, argument: str) -> dict[str, Any]:
        """The arguments a call with ``argument`` passes: the one text, or (a tool with
        ``parameters``) the JSON object ``argument`` holds, checked against the schema;
        ArgumentError saying how to write the call (``Concat[{"a": "...", "b": "..."}]``)."""
        if self.parameters is None:
            return {self.argument: argument}
        how = f"write {self.name}[{example(self.schema)}]"
        if len(argument) > MAX_ARGUMENTS_CHARS:
            raise ArgumentError(f"the arguments of {self.name} are too long: {how}")
        try:
            value = parse_json(argument)
        except BadInput as exc:
            raise ArgumentError(f"{self.name} takes a JSON object ({exc}): {how}") from None
        if not isinstance(value, dict):
            raise ArgumentError(f"{self.name} takes a JSON object: {how}")
        return checked(self.name, self.schema, value)

    def read_argument(self, argument: str) -> str:
        """The argument a call written ``Name[argument]`` runs with: the text itself (or the
        one value of a JSON object naming it), or (a tool with ``parameters``) its JSON object
        as canonical JSON text; ArgumentError when it does not fit (see :meth:`arguments`)."""
        if self.parameters is None:
            return self._one_text(argument)
        return json.dumps(self.arguments(argument), ensure_ascii=False, sort_keys=True)

    def _one_text(self, argument: str) -> str:
        """The text of a one-text call, also when the model wrote it as the JSON object of a
        native call (``read_file[{"path": "todo.txt"}]``: ``todo.txt``)."""
        if not (argument.startswith("{") and argument.endswith("}")):
            return argument
        try:
            value = parse_json(argument) if len(argument) <= MAX_ARGUMENTS_CHARS else None
        except BadInput:
            return argument
        if isinstance(value, dict) and list(value) == [self.argument]:
            said = value[self.argument]
            return said if isinstance(said, str) and said.strip() else argument
        return argument

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "name": self.name,
            "argument": self.argument,
            "description": self.description,
        }
        if self.parameters is not None:
            data["parameters"] = self.parameters
        if self.origin is not None:
            data["origin"] = self.origin.to_json()
        if self.needs_consent:
            data["needs_consent"] = True
        return data

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
        parameters = data.get("parameters")
        if parameters is not None and not isinstance(parameters, dict):
            raise TypeError("a tool's parameters are not an object")
        origin = data.get("origin")
        found = None if origin is None else ToolOrigin.from_json(origin)
        consent = data.get("needs_consent", False)
        if not isinstance(consent, bool):
            raise TypeError("a tool's needs_consent is not true or false")
        return cls(name, argument, description, parameters, found, consent)


MAX_ARGUMENTS_CHARS = 16_000  # the JSON object of a call written in the text protocol

FINISH = ToolSpec("Finish", "answer", "returns the answer and finishes the task.", origin=BUILT_IN)


NOTHING_NEW = "nothing_new"
"""A result's detail: the call brought nothing new (not found, no more results, a page
already seen), which ``--max-no-progress`` counts; recorded, so a replay counts it too."""


UNAVAILABLE = "unavailable"
"""A result's detail: the tool's server had stopped (a process that died, started again once
and dead again), so the call never ran; an eval counts its question as failed, so that
``--resume`` runs it again once the server is fixed."""


@dataclass
class ToolResult:
    """One tool call's result: the observation shown to the model, facts worth recording
    (``details``, e.g. ``resolved_title``; ``NOTHING_NEW``), why the call failed, if it did
    (the observation then says so to the model), the requests it had to make again, the
    page text it showed (``source``: a tool that reads no page has none), and what a Python
    tool printed (shown with ``-v``, never to the model, never recorded); for a call that
    needed consent, who refused it (nothing ran) and how long the user took to answer
    (``asked_s``: not the tool's time)."""

    observation: str
    details: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    retries: int = 0
    source: PageSource | None = None
    printed: str = ""
    refused: RefusedBy | str | None = None
    asked_s: float = 0.0

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


@runtime_checkable
class Carries(Protocol):
    """A tool (or the box of tools it is one of) whose state a conversation carries into its
    next question, as a few texts (Wikipedia's: ``{"page": title}``), so a trace can record
    them."""

    def carried(self, steps: Sequence[Step]) -> dict[str, str]:
        """What of the tool's state ``steps`` (a run's) leave to carry over; {} for nothing
        new (what was carried before still holds)."""
        ...

    def resume(self, carried: Mapping[str, str]) -> None:
        """Take up the state an earlier question left (before the run's first call)."""
        ...


class ToolSet:
    """One run's tools by name (matched in any case), Finish last; what carries their state:
    each tool that :class:`Carries` it, or whose ``box`` does (once for a box's tools)."""

    def __init__(self, tools: Iterable[Tool]) -> None:
        self._tools: dict[str, Tool] = {}
        self._carriers: list[Carries] = []
        for tool in tools:
            key = tool.spec.name.casefold()
            if key == FINISH.name.casefold() or key in self._tools:
                raise UsageError(f"two tools are named {tool.spec.name!r}")
            self._tools[key] = tool
            carrier = getattr(tool, "box", tool)
            if isinstance(carrier, Carries) and all(c is not carrier for c in self._carriers):
                self._carriers.append(carrier)

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    @property
    def specs(self) -> tuple[ToolSpec, ...]:
        """Every declaration, Finish last: what the model is told it may call."""
        return (*(tool.spec for tool in self), FINISH)

    def get(self, name: str) -> Tool | None:
        """The tool ``name`` calls, in any case (None for Finish and for no tool)."""
        return self._tools.get(name.casefold())

    def carried(self, steps: Sequence[Step]) -> dict[str, str]:
        """What the tools that carry their state leave after ``steps`` (see :class:`Carries`)."""
        state: dict[str, str] = {}
        for carrier in self._carriers:
            state.update(carrier.carried(steps))
        return state

    def resume(self, carried: Mapping[str, str]) -> None:
        """Give the tools that carry their state what an earlier question left."""
        if carried:
            for carrier in self._carriers:
                carrier.resume(carried)
