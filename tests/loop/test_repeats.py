"""The repeated-action rule compares calls, not text: the tool, in any case, and the argument
it runs with (a JSON object's canonical form), however the model wrote the action: through the
real loop, in the text protocol and with native calls, for a tool of one argument and one of
two; a call with another argument is no repeat."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest
from scripted import ScriptedModel, template

from react_cli.core.records import StopReason, ToolCall, Usage
from react_cli.core.trajectory import Run
from react_cli.infra.deadline import Deadline
from react_cli.llm.base import Completion, Model, ModelRequest, TextSink
from react_cli.loop.agent import Agent
from react_cli.loop.limits import Limits
from react_cli.loop.protocol import Protocol
from react_cli.loop.text.protocol import TextProtocol
from react_cli.loop.tools.protocol import ToolsProtocol
from react_cli.tools.base import ToolResult, ToolSet, ToolSpec

PAIR = {
    "type": "object",
    "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
    "required": ["a", "b"],
}


@dataclass
class Echo:
    """A tool that answers its argument, whatever it is; counts its calls."""

    spec: ToolSpec
    calls: list[str] = field(default_factory=list)

    def call(self, argument: str, *, deadline: Deadline) -> ToolResult:
        self.calls.append(argument)
        return ToolResult(f"{self.spec.name} of {argument}")


@dataclass
class Calls:
    """Answers each request with the next native calls (their arguments' JSON text as given)."""

    replies: list[list[tuple[str, str]]]

    def complete(
        self, request: ModelRequest, *, deadline: Deadline, on_text: TextSink | None = None
    ) -> Completion:
        calls = tuple(
            ToolCall(name, arguments, f"c{len(self.replies)}_{n}")
            for n, (name, arguments) in enumerate(self.replies.pop(0))
        )
        return Completion("", Usage(10, 5), 0.0, 0, "tool_calls", calls)


def run(model: Model, protocol: Protocol, steps: int = 4) -> tuple[Run, list[str]]:
    search = Echo(ToolSpec("Search", "entity", "searches."))
    pair = Echo(ToolSpec("Pair", "a and b", "pairs two texts.", parameters=PAIR))
    agent = Agent(model, protocol, Limits(max_steps=steps, max_repeats=3))
    run = agent.run(template("Q\n"), "q", ToolSet([search, pair]))
    return run, search.calls + pair.calls


TEXT_REPEATS = {
    "one argument": [
        " a\nAction 1: Search[Ed Wood]",
        " b\n**Action 2:** search[ Ed Wood ]",
        " c\nSEARCH [Ed Wood]",
    ],
    "a JSON object": [
        ' a\nAction 1: Pair[{"a": "x", "b": "y"}]',
        ' b\nAction 2: pair[{"b": "y", "a": "x"}]',
        ' c\nAction 3: Pair[ {"a":"x",   "b":"y"} ]',
    ],
}
NATIVE_REPEATS = {
    "one argument": [
        [("search", '{"entity": "Ed Wood"}')],
        [("Search", '{"entity":"Ed Wood"}')],
        [("functions.search", '{ "entity" : "Ed Wood" }')],
    ],
    "reordered keys": [
        [("pair", '{"a": "x", "b": "y"}')],
        [("pair", '{"b": "y", "a": "x"}')],
        [("Pair", json.dumps({"b": "y", "a": "x"}, indent=2))],
    ],
    "in one reply": [[("pair", '{"a": "x", "b": "y"}')] * 2 + [("pair", '{"b": "y", "a": "x"}')]],
}


@pytest.mark.parametrize("written", TEXT_REPEATS.values(), ids=TEXT_REPEATS)
def test_the_same_call_written_otherwise_in_the_text_protocol_is_a_repeat(
    written: list[str],
) -> None:
    model = ScriptedModel([*written, " d\nAction 4: Finish[x]"])
    done, calls = run(model, TextProtocol())
    assert done.stop_reason == StopReason.REPEATED_ACTION and len(done.steps) == 3
    assert len(set(calls)) == 1  # the tool got one argument three times


@pytest.mark.parametrize("replies", NATIVE_REPEATS.values(), ids=NATIVE_REPEATS)
def test_the_same_native_call_with_its_keys_reordered_is_a_repeat(
    replies: list[list[tuple[str, str]]],
) -> None:
    done, calls = run(Calls([*replies, [("finish", '{"answer": "x"}')]]), ToolsProtocol())
    assert done.stop_reason == StopReason.REPEATED_ACTION
    assert len(calls) == 3 and len(set(calls)) == 1
    assert len(done.steps) == len(replies)


def test_another_argument_is_no_repeat_in_either_protocol() -> None:
    text = [
        " a\nAction 1: Search[Ed Wood]",
        " b\nAction 2: Search[Ed Wood]",
        " c\nAction 3: Search[ed wood]",  # another argument: Wikipedia may tell them apart
        " d\nAction 4: Finish[x]",
    ]
    done, _ = run(ScriptedModel(text), TextProtocol())
    assert done.stop_reason == StopReason.FINISH and done.answer == "x"
    native: list[list[tuple[str, Any]]] = [
        [("pair", '{"a": "x", "b": "y"}')],
        [("pair", '{"b": "y", "a": "x"}')],
        [("pair", '{"a": "y", "b": "x"}')],  # the values swapped: another call
        [("finish", '{"answer": "x"}')],
    ]
    done, calls = run(Calls(native), ToolsProtocol())
    assert done.stop_reason == StopReason.FINISH and len(set(calls)) == 2


def test_an_action_that_cannot_run_breaks_the_row() -> None:
    text = [
        " a\nAction 1: Search[Ed Wood]",
        " b\nAction 2: Search[Ed Wood]",
        " c\nAction 3: Pair[not an object]",  # invalid: no call
        " d\nAction 4: Search[Ed Wood]",
        " e\nAction 5: Finish[x]",
    ]
    done, _ = run(ScriptedModel(text), TextProtocol(), steps=5)
    assert done.stop_reason == StopReason.FINISH
