"""In-process stand-ins for the model and the tools, for loop tests and benchmarks."""

from __future__ import annotations

from dataclasses import dataclass, field

from react_cli.cutter import cut_at_observation
from react_cli.deadline import Deadline
from react_cli.records import Completion, TextSink, ToolResult, Usage


@dataclass
class ScriptedModel:
    """Answers each call with the next scripted text (cut like the real client cuts)."""

    outputs: list[str]
    tokens_per_call: int = 10
    calls: list[tuple[str, list[str]]] = field(default_factory=list)

    def complete(
        self, prompt: str, stop: list[str], *, deadline: Deadline, on_text: TextSink | None = None
    ) -> Completion:
        self.calls.append((prompt, stop))
        if not self.outputs:
            raise AssertionError("the scripted model ran out of outputs")
        text = cut_at_observation(self.outputs.pop(0))
        if stop == ["\n"]:
            text = text.split("\n", 1)[0]
        if on_text is not None:
            on_text(text)
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
