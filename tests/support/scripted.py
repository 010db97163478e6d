"""In-process stand-ins for the model and the tools, for loop tests and benchmarks."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from react_cli.core.records import Usage
from react_cli.core.trajectory import Run
from react_cli.infra.deadline import Deadline
from react_cli.llm.base import Completion, Model, ModelRequest, TextSink, cut_whole
from react_cli.loop.agent import Agent
from react_cli.loop.events import Observer
from react_cli.loop.limits import Limits
from react_cli.loop.prompts import PromptTemplate
from react_cli.loop.text.protocol import TextProtocol
from react_cli.tools.base import ToolResult, ToolSet, ToolSpec
from react_cli.tools.paper import LOOKUP, SEARCH


def template(prefix: str) -> PromptTemplate:
    """A template that is ``prefix`` itself (no question marker to fill)."""
    return PromptTemplate("test", prefix)


@dataclass
class ScriptedModel:
    """Answers each call with the next scripted text (cut like the real client cuts)."""

    outputs: list[str]
    tokens_per_call: int = 10
    chunk: int = 0  # streams each text in pieces of this many characters (0: at once)
    calls: list[tuple[str, list[str]]] = field(default_factory=list)
    requests: list[ModelRequest] = field(default_factory=list)

    def complete(
        self, request: ModelRequest, *, deadline: Deadline, on_text: TextSink | None = None
    ) -> Completion:
        self.calls.append((request.prompt, list(request.stop)))
        self.requests.append(request)
        if not self.outputs:
            raise AssertionError("the scripted model ran out of outputs")
        text = cut_whole(request.cutter(), self.outputs.pop(0))
        if request.stop == ("\n",):
            text = text.split("\n", 1)[0]
        if on_text is not None:
            for start in range(0, len(text), self.chunk or len(text) or 1):
                on_text(text[start : start + (self.chunk or len(text))])
        n = self.tokens_per_call  # 0: like a server that reports no usage
        return Completion(text, Usage(n, n) if n else None, 0.0)


@dataclass
class DictTools:
    """Search answers from a dict of observations; Lookup echoes the keyword."""

    pages: dict[str, str]
    searches: list[str] = field(default_factory=list)

    def search(self, entity: str, *, deadline: Deadline) -> ToolResult:
        self.searches.append(entity)
        if entity in self.pages:
            return ToolResult(self.pages[entity], {"resolved_title": entity})
        return ToolResult(f"Could not find [{entity}]. Similar: [].")

    def lookup(self, keyword: str, *, deadline: Deadline) -> ToolResult:
        return ToolResult(f"(Result 1 / 1) Something about {keyword}.")

    def tool_set(self) -> ToolSet:
        """The paper's Search and Lookup, answered by this object."""
        return ToolSet([_Bound(SEARCH, self, "search"), _Bound(LOOKUP, self, "lookup")])


@dataclass(frozen=True)
class _Bound:
    spec: ToolSpec
    target: DictTools
    method: str

    def call(self, argument: str, *, deadline: Deadline) -> ToolResult:
        result: ToolResult = getattr(self.target, self.method)(argument, deadline=deadline)
        return result


@dataclass
class Loop:
    """The text protocol's loop over ``tools``' pages, run from a prompt prefix (a test's
    shorthand for building the agent, its template and a tool set for each run)."""

    model: Model
    tools: DictTools
    limits: Limits | None = None
    observer: Observer | None = None
    clock: Callable[[], float] = time.monotonic
    thoughts: bool = True
    constrain: bool = False

    def run(self, prefix: str, question: str, deadline: Deadline | None = None) -> Run:
        protocol = TextProtocol(thoughts=self.thoughts, constrain=self.constrain)
        agent = Agent(self.model, protocol, self.limits, self.observer, self.clock)
        return agent.run(template(prefix), question, self.tools.tool_set(), deadline)
