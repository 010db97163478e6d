"""The tools protocol through the real loop, against a model scripted with native tool calls
and in-memory tools: the chat it builds, several calls in one reply, malformed calls, a reply
without a call, calls written into the text, the forced answer, the same observations as the
text protocol; and hostile call bytes, which never break a run."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from hostile import json_literal, text
from hypothesis import given, settings
from hypothesis import strategies as st
from scripted import DictTools, Loop, ScriptedModel

from react_cli.core.records import StopReason, ToolCall, Usage
from react_cli.core.trajectory import Cue, ErrorKind, Run
from react_cli.infra.deadline import Deadline
from react_cli.llm.base import CallKind, Completion, ModelRequest, TextSink
from react_cli.loop.agent import Agent
from react_cli.loop.events import ActionChosen, Event, ReplyStarted
from react_cli.loop.limits import Limits
from react_cli.loop.prompts import PromptTemplate
from react_cli.loop.tools.protocol import FOLLOWUP_CUE, FORCED_CUE, ToolsProtocol

SYSTEM = "Solve it with your tools."
PROMPT = PromptTemplate("t", f"{SYSTEM}\nQuestion: {{question}}\n")
QUESTION = "Who directed Ed Wood?"
PAGES = {"Ed Wood": "Ed Wood is a 1994 film directed by Tim Burton.", "Tim Burton": "A director."}


def call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(name, json.dumps(arguments), f"id-{name}-{len(json.dumps(arguments))}")


Reply = tuple[str, tuple[ToolCall, ...]]


@dataclass
class CallingModel:
    """Answers each request with the next (text, calls); records the requests."""

    replies: list[Reply]
    requests: list[ModelRequest] = field(default_factory=list)

    def complete(
        self, request: ModelRequest, *, deadline: Deadline, on_text: TextSink | None = None
    ) -> Completion:
        self.requests.append(request)
        text, calls = self.replies.pop(0)
        if on_text is not None and text:
            on_text(text)
        return Completion(text, Usage(10, 5), 0.0, 0, "tool_calls" if calls else "stop", calls)


@dataclass
class Events:
    seen: list[Event] = field(default_factory=list)

    def notify(self, event: Event) -> None:
        self.seen.append(event)


def run(
    replies: list[Reply], limits: Limits | None = None, *, thoughts: bool = True
) -> tuple[Run, CallingModel, DictTools, Events]:
    model, tools, events = CallingModel(list(replies)), DictTools(dict(PAGES)), Events()
    agent = Agent(model, ToolsProtocol(thoughts=thoughts), limits, events)
    return agent.run(PROMPT, QUESTION, tools.tool_set()), model, tools, events


def test_a_run_is_a_chat_of_calls_and_tool_answers() -> None:
    first = call("search", entity="Ed Wood")
    result, model, tools, events = run(
        [
            ("I should search Ed Wood.", (first,)),
            ("It says Tim Burton.", (call("finish", answer="Tim Burton"),)),
        ]
    )
    assert (result.answer, result.stop_reason) == ("Tim Burton", StopReason.FINISH)
    step = result.steps[0]
    (action,) = step.actions
    assert (step.thought, action.written, action.call) == (
        "I should search Ed Wood.",
        "Search[Ed Wood]",
        ToolCall("Search", "Ed Wood", first.id, {"entity": "Ed Wood"}),
    )
    assert action.observation == PAGES["Ed Wood"] and tools.searches == ["Ed Wood"]
    (reply,) = step.replies
    assert reply.cue is Cue.THOUGHT and reply.text == "I should search Ed Wood."
    assert reply.message == {
        "role": "assistant",
        "content": "I should search Ed Wood.",
        "tool_calls": [
            {
                "id": first.id,
                "type": "function",
                "function": {"name": "search", "arguments": first.argument},
            }
        ],
    }
    opening, second = model.requests
    assert opening.messages == (
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": f"Question: {QUESTION}"},
    )
    assert [tool["function"]["name"] for tool in opening.tools] == ["search", "lookup", "finish"]
    assert opening.tools[0]["function"]["parameters"]["required"] == ["entity"]
    assert opening.tool_choice.wire() == "auto" and opening.kind is CallKind.STEP
    assert second.messages[: len(opening.messages)] == opening.messages  # the chat only grows
    assert second.messages[2:] == (
        reply.message,
        {"role": "tool", "tool_call_id": first.id, "content": PAGES["Ed Wood"]},
    )
    assert [type(e) for e in events.seen if isinstance(e, (ReplyStarted, ActionChosen))] == [
        ReplyStarted,
        ActionChosen,
        ReplyStarted,
        ActionChosen,
    ]


def test_the_observations_are_the_text_protocols() -> None:
    tools_run = run(
        [
            ("", (call("search", entity="Ed Wood"),)),
            ("", (call("lookup", keyword="film"),)),
            ("", (call("finish", answer="x"),)),
        ]
    )[0]
    text_outputs = [
        " a\nAction 1: Search[Ed Wood]",
        " b\nAction 2: Lookup[film]",
        " c\nAction 3: Finish[x]",
    ]
    text_run = Loop(ScriptedModel(text_outputs), DictTools(dict(PAGES))).run("Q\n", QUESTION)
    assert [a.observation for s in tools_run.steps for a in s.actions] == [
        a.observation for s in text_run.steps for a in s.actions
    ]
    assert [a.written for s in tools_run.steps for a in s.actions] == [
        a.written for s in text_run.steps for a in s.actions
    ]


def test_several_calls_in_one_reply_are_one_steps_actions_in_order_each_answered() -> None:
    calls = (
        call("search", entity="Ed Wood"),
        call("lookup", keyword="1994"),
        call("search", entity="Tim Burton"),
    )
    result, model, tools, _ = run(
        [("Three at once.", calls), ("Done.", (call("finish", answer="Tim Burton"),))]
    )
    assert [[a.written for a in s.actions] for s in result.steps] == [
        ["Search[Ed Wood]", "Lookup[1994]", "Search[Tim Burton]"],
        ["Finish[Tim Burton]"],
    ]
    assert [s.thought for s in result.steps] == ["Three at once.", "Done."]
    assert [len(s.replies) for s in result.steps] == [1, 1] and result.steps[0].usage != Usage()
    assert [s.label(n) for s in result.steps[:1] for n in range(3)] == ["1.1", "1.2", "1.3"]
    assert len(model.requests) == 2 and tools.searches == ["Ed Wood", "Tim Burton"]
    answers = [m for m in model.requests[1].messages if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in answers] == [c.id for c in calls]


def test_a_finish_among_calls_ends_the_run_after_the_calls_before_it() -> None:
    calls = (
        call("search", entity="Ed Wood"),
        call("finish", answer="Tim Burton"),
        call("search", entity="Tim Burton"),
    )
    result, model, tools, _ = run([("", calls)])
    assert result.answer == "Tim Burton" and len(result.steps) == 1
    assert [a.written for a in result.steps[0].actions] == ["Search[Ed Wood]", "Finish[Tim Burton]"]
    assert tools.searches == ["Ed Wood"] and len(model.requests) == 1


MALFORMED = [
    (ToolCall("wikipedia", '{"entity": "x"}', "m1"), 'There is no tool named "wikipedia"'),
    (ToolCall("search", '{"entity": "x"', "m2"), "the arguments of search are not JSON"),
    (ToolCall("search", "[1, 2]", "m3"), "the arguments of search must be a JSON object"),
    (ToolCall("search", "{}", "m4"), 'search needs "entity"'),
    (ToolCall("search", '{"entity": "x", "lang": "fr"}', "m5"), 'search takes no "lang"'),
    (ToolCall("search", '{"entity": ["x"]}', "m6"), 'search\'s "entity" must be a string'),
    (ToolCall("search", '{"entity": "  "}', "m7"), "search needs a value"),
]


def test_each_malformed_call_is_answered_with_what_was_wrong_and_counts_as_a_parse_error() -> None:
    replies: list[Reply] = [("", (bad,)) for bad, _ in MALFORMED]
    result, model, _, _ = run(replies, Limits(max_steps=10, max_parse_errors=len(MALFORMED)))
    assert result.stop_reason == StopReason.PARSE_ERRORS
    assert all(step.failed(ErrorKind.PARSE) for step in result.steps)
    for step, (bad, said) in zip(result.steps, MALFORMED, strict=True):
        (action,) = step.actions
        assert said in action.observation and action.observation.startswith("Invalid call")
        assert action.call is None and action.written is not None and bad.name in action.written
    answers = [m for m in model.requests[-1].messages if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in answers] == [bad.id for bad, _ in MALFORMED[:-1]]
    assert 'call search with {"entity": "..."}' in answers[1]["content"]


def test_numbers_for_text_are_taken_and_doubly_encoded_arguments_read() -> None:
    answer = ToolCall("finish", '"{\\"answer\\": 1994}"', "x")
    result = run([("", (answer,))])[0]
    assert result.answer == "1994"


def test_a_reply_without_a_call_gets_one_follow_up_asking_for_one() -> None:
    result, model, _, _ = run(
        [("I think it is Tim Burton.", ()), ("", (call("finish", answer="Tim Burton"),))]
    )
    assert result.answer == "Tim Burton"
    step = result.steps[0]
    assert step.thought == "I think it is Tim Burton."
    assert [(r.cue, r.text) for r in step.replies] == [
        (Cue.THOUGHT, "I think it is Tim Burton."),
        (Cue.ACTION, ""),
    ]
    followup = model.requests[1]
    assert followup.kind is CallKind.FOLLOWUP and followup.tool_choice.wire() == "required"
    assert followup.messages[-2:] == (
        {"role": "assistant", "content": "I think it is Tim Burton."},
        {"role": "user", "content": FOLLOWUP_CUE},
    )


def test_no_call_after_the_follow_up_is_a_parse_error_said_as_a_user_message() -> None:
    result, model, _, _ = run(
        [("hmm", ()), ("still thinking", ()), ("", (call("finish", answer="x"),))]
    )
    step = result.steps[0]
    (action,) = step.actions
    assert step.failed(ErrorKind.PARSE) and action.written is None
    assert (
        action.observation
        == "Invalid action: no tool was called. Call one of your tools: search, lookup or finish."
    )
    assert model.requests[2].messages[-1] == {"role": "user", "content": action.observation}
    assert result.answer == "x"


def test_act_asks_for_a_call_from_the_start_and_records_no_thought() -> None:
    result, model, _, _ = run([("noise", (call("finish", answer="x"),))], thoughts=False)
    assert model.requests[0].tool_choice.wire() == "required"
    assert result.steps[0].thought == "" and result.answer == "x"


TAGGED = (
    'Let me search.\n<tool_call>\n{"name": "search", "arguments": {"entity": "Ed Wood"}}'
    "\n</tool_call>"
)


def test_calls_written_into_the_text_are_taken_as_calls() -> None:
    bare = 'So: {"name": "finish", "parameters": {"answer": "Tim Burton"}}'
    result, model, tools, _ = run([(TAGGED, ()), (bare, ())])
    assert [a.written for s in result.steps for a in s.actions] == [
        "Search[Ed Wood]",
        "Finish[Tim Burton]",
    ]
    assert result.steps[0].thought == "Let me search." and result.steps[1].thought == "So:"
    sent = model.requests[1].messages[2]
    assert sent["content"] == "Let me search." and sent["tool_calls"][0]["id"] == "call_1_1"
    assert model.requests[1].messages[3]["tool_call_id"] == "call_1_1"
    assert tools.searches == ["Ed Wood"] and len(model.requests) == 2


def test_an_unreadable_tagged_call_is_a_malformed_call() -> None:
    result = run([("<tool_call>{not json", ()), ("", (call("finish", answer="x"),))])[0]
    assert result.steps[0].failed(ErrorKind.PARSE)
    assert "That is not a call" in result.steps[0].actions[0].observation


def test_force_answer_comes_after_every_call_of_the_last_step_is_answered() -> None:
    calls = (call("search", entity="Ed Wood"), call("search", entity="Tim Burton"))
    result, model, _, _ = run(
        [("", calls), ("", (call("finish", answer="Tim Burton"),))],
        Limits(max_steps=1, force_answer=True),
    )
    assert result.answer == "Tim Burton" and result.forced
    forced = model.requests[-1]
    assert forced.kind is CallKind.FORCED
    assert forced.tool_choice.wire() == {"type": "function", "function": {"name": "finish"}}
    assert forced.messages[-3:] == (
        {"role": "tool", "tool_call_id": calls[0].id, "content": PAGES["Ed Wood"]},
        {"role": "tool", "tool_call_id": calls[1].id, "content": PAGES["Tim Burton"]},
        {"role": "user", "content": FORCED_CUE},
    )


def test_ids_are_made_unique_within_a_reply() -> None:
    same = (
        ToolCall("search", '{"entity": "Ed Wood"}', "dup"),
        ToolCall("lookup", '{"keyword": "x"}', "dup"),
    )
    _, model, _, _ = run([("", same), ("", (call("finish", answer="x"),))])
    ids = [c["id"] for c in model.requests[1].messages[2]["tool_calls"]]
    answered = [m["tool_call_id"] for m in model.requests[1].messages if m["role"] == "tool"]
    assert ids == ["dup", "call_1_2"] == answered


hostile_call = st.tuples(
    st.one_of(text, st.sampled_from(["search", "Finish", "functions.lookup", "", "x" * 5000])),
    st.one_of(
        json_literal,
        text,
        st.just('{"entity": "Ed Wood"}'),
        text.map(lambda t: json.dumps({"entity": t})),
        text.map(lambda t: json.dumps({"answer": t, "keyword": t})),
    ),
    st.one_of(st.none(), text),
).map(lambda parts: ToolCall(*parts))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.one_of(text, st.just(TAGGED)), st.lists(hostile_call, max_size=3).map(tuple)),
        min_size=1,
        max_size=3,
    )
)
def test_hostile_calls_never_break_a_run(replies: list[Reply]) -> None:
    padded = [*replies, *[("", ())] * 20]
    result = run(padded, Limits(max_steps=4, max_parse_errors=4, force_answer=True))[0]
    assert result.stop_reason in set(StopReason)
    for step in result.steps:
        for action in step.actions:
            assert action.call is None or action.call.name in ("Search", "Lookup", "Finish")
            assert action.written is None or "\n" not in action.written
        json.dumps(step.to_json())
