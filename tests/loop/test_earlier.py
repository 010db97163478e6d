"""What a follow-up question is shown of its conversation's earlier turns, by each protocol:
the text protocol's ``Earlier in this conversation:`` block, the tools protocol's messages,
the newest turns kept within the token budget; the page the tools carry over."""

from __future__ import annotations

from react_cli.core.conversation import Earlier, Turn, TurnStep, one_line
from react_cli.core.records import StopReason, ToolCall, Usage
from react_cli.core.trajectory import PARSE_FAILURE, Action, Run, Step
from react_cli.loop.prompts import load_prompt
from react_cli.loop.text.protocol import TextProtocol, earlier_block
from react_cli.loop.tools.protocol import ToolsProtocol
from react_cli.tools.base import ToolSet
from react_cli.tools.wikipedia import PAGE, Wikipedia

TOOLS = ToolSet(Wikipedia(backend=None).tools())  # type: ignore[arg-type]  # never called here
A = Turn("Who directed Ed Wood?", "Tim Burton")
B = Turn("When was he born?", "August 25, 1958")


def test_the_text_block_holds_each_question_and_answer_and_the_newest_fit() -> None:
    block, kept = earlier_block(Earlier((A, B)))
    assert block == (
        "Earlier in this conversation:\n"
        "Question: Who directed Ed Wood?\nAnswer: Tim Burton\n"
        "Question: When was he born?\nAnswer: August 25, 1958\n"
    )
    assert kept == (A, B)
    assert earlier_block(Earlier((A, B), max_tokens=8 + 13)) == (  # heading 8, B's lines 13
        "Earlier in this conversation:\nQuestion: When was he born?\nAnswer: August 25, 1958\n",
        (B,),
    )
    assert earlier_block(Earlier((A, B), max_tokens=20)) == ("", ())  # not even the newest
    assert earlier_block(Earlier((Turn("a\nb\x85c", "x\ty"),)))[0].endswith(
        "Question: a b c\nAnswer: x y\n"  # each turn on its own lines, whatever it holds
    )


def test_the_text_prompt_puts_the_block_before_the_question_line() -> None:
    template = load_prompt("hotpotqa")
    transcript = TextProtocol().start(template, "Where?", TOOLS, Earlier((A,)))
    assert transcript.prompt.endswith(
        "Action 3: Finish[yes]\nEarlier in this conversation:\n"
        "Question: Who directed Ed Wood?\nAnswer: Tim Burton\nQuestion: Where?\n"
    )
    assert transcript.earlier == (A,)
    marker = Turn("Is {question} a marker?", "{tools}")  # an earlier turn is text, not a template
    prompt = TextProtocol().start(template, "Q?", TOOLS, Earlier((marker,))).prompt
    assert prompt.endswith("Question: Is {question} a marker?\nAnswer: {tools}\nQuestion: Q?\n")


def test_the_tools_protocol_shows_several_calls_of_a_reply_and_a_turn_without_calls() -> None:
    search = ToolCall("Search", "Ed Wood", "c1")
    lookup = ToolCall("Lookup", "born", "c2")
    finish = ToolCall("Finish", "Tim Burton", "c3")
    steps = (
        TurnStep("Both at once.", search, "Ed Wood is a film.", 1),
        TurnStep("Both at once.", lookup, "(Result 1 / 1) Born 1924.", 1),
        TurnStep("Done.", finish, "", 3),
    )
    turns = (Turn("Who directed Ed Wood?", "Tim Burton", steps), Turn("Why?", "Because."))
    transcript = ToolsProtocol().start(
        load_prompt("hotpotqa-tools"), "Next?", TOOLS, Earlier(turns)
    )
    messages = transcript.messages
    assert [m["role"] for m in messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
        "tool",
        "user",
        "assistant",
        "user",
    ]
    calls = messages[2]["tool_calls"]
    assert [c["id"] for c in calls] == ["earlier_1_1", "earlier_1_2"]
    assert [c["function"]["arguments"] for c in calls] == [
        '{"entity": "Ed Wood"}',
        '{"keyword": "born"}',
    ]
    assert [m["tool_call_id"] for m in messages[3:5]] == ["earlier_1_1", "earlier_1_2"]
    assert messages[6] == {"role": "tool", "tool_call_id": "earlier_1_3", "content": "Tim Burton"}
    assert messages[7:] == [
        {"role": "user", "content": "Question: Why?"},
        {"role": "assistant", "content": "Because."},
        {"role": "user", "content": "Question: Next?"},
    ]
    small = ToolsProtocol().start(load_prompt("hotpotqa-tools"), "Q", TOOLS, Earlier(turns, 40))
    assert small.earlier == (turns[1],) and len(small.messages) == 4  # the older turn dropped


def test_a_turn_keeps_each_call_with_its_observation_on_a_line() -> None:
    steps = [
        Step(1, "t", actions=[Action("Search[X]", ToolCall("Search", "X"), "w " * 200)]),
        Step(2, "u", actions=[Action("hmm", None, "Invalid action.")], error=PARSE_FAILURE),
        Step(3, actions=[Action("Finish[Y]", ToolCall("Finish", "Y"))]),
    ]
    turn = Turn.of(Run("Q", "Y", StopReason.FINISH, steps, Usage(), 1.0))
    assert [step.call.name for step in turn.steps] == ["Search", "Finish"]
    assert (
        turn.steps[0].observation == one_line("w " * 200) and len(turn.steps[0].observation) <= 120
    )
    assert Turn.from_json(turn.to_json()) == turn


def test_the_tools_carry_the_page_of_the_last_search_that_loaded_one() -> None:
    def step(name: str, **details: object) -> Step:
        return Step(1, actions=[Action(f"{name}[x]", ToolCall(name, "x"), details=dict(details))])

    assert TOOLS.carried(
        [step("Search", resolved_title="A"), step("Lookup", resolved_title="A")]
    ) == {PAGE: "A"}
    missed = [step("Search", resolved_title="A"), step("Search", similar=["B"])]
    assert TOOLS.carried(missed) == {PAGE: "A"}  # a miss keeps the page
    ambiguous = [
        step("Search", resolved_title="A"),
        step("Search", resolved_title="B", disambiguation=True),
    ]
    assert TOOLS.carried(ambiguous) == {PAGE: "A"}
    assert TOOLS.carried([step("Finish")]) == {}
