"""The text protocol's parser and cutter: thought/action parsing, Observation cutting, think
stripping."""

from __future__ import annotations

import dataclasses
import random

import pytest

from react_cli.core.records import ToolCall as Action
from react_cli.loop.text.cutter import ObservationCutter, cut_at_observation, strip_think
from react_cli.loop.text.parser import ParsedStep, action_line_end, parse_action, parse_step
from react_cli.loop.text.protocol import invalid_action_hint
from react_cli.tools.paper import PAPER_TOOLS

S, L, F = "Search", "Lookup", "Finish"
VALID_ACTIONS_HINT = invalid_action_hint(PAPER_TOOLS)

# (model output, expected thought, expected action or None, expected action_text)
STEP_CASES: list[tuple[str, str, Action | None, str | None]] = [
    # the paper's shape: continuation after the "Thought k:" cue
    (
        " I need to search Ed Wood.\nAction 1: Search[Ed Wood]",
        "I need to search Ed Wood.",
        Action(S, "Ed Wood"),
        "Search[Ed Wood]",
    ),
    # cue echoed back
    (
        "Thought 1: I need to search Ed Wood.\nAction 1: Search[Ed Wood]",
        "I need to search Ed Wood.",
        Action(S, "Ed Wood"),
        "Search[Ed Wood]",
    ),
    # fullwidth colons
    (
        "Thought 1：I need to search X.\nAction 1：Search[X]",
        "I need to search X.",
        Action(S, "X"),
        "Search[X]",
    ),
    # bold label
    (
        "I should look.\n**Action 2:** Lookup[born]",
        "I should look.",
        Action(L, "born"),
        "Lookup[born]",
    ),
    # bold label with colon outside
    (
        "I should look.\n**Action 2**: Lookup[born]",
        "I should look.",
        Action(L, "born"),
        "Lookup[born]",
    ),
    # italic labels on both
    (
        "*Thought*: It is Paris.\n*Action*: Finish[Paris]",
        "It is Paris.",
        Action(F, "Paris"),
        "Finish[Paris]",
    ),
    # underscore emphasis
    ("Done.\n__Action__: Finish[yes]", "Done.", Action(F, "yes"), "Finish[yes]"),
    # bold thought label echoed
    (
        "**Thought 3:** The answer is 42.\n**Action 3:** Finish[42]",
        "The answer is 42.",
        Action(F, "42"),
        "Finish[42]",
    ),
    # backticks around the action
    (
        "Search it.\nAction 1: `Search[Ed Wood]`",
        "Search it.",
        Action(S, "Ed Wood"),
        "Search[Ed Wood]",
    ),
    # emphasis around the action
    ("Done.\nAction 3: **Finish[yes]**", "Done.", Action(F, "yes"), "Finish[yes]"),
    # quotes around the action
    ('Go.\nAction 1: "Search[Milhouse]"', "Go.", Action(S, "Milhouse"), "Search[Milhouse]"),
    # label without number
    ("Search it.\nAction: Search[X]", "Search it.", Action(S, "X"), "Search[X]"),
    # wrong step number
    ("Search it.\nAction 7: Search[X]", "Search it.", Action(S, "X"), "Search[X]"),
    # no space between label word and number, space before colon
    ("Search it.\nAction1 : Search[X]", "Search it.", Action(S, "X"), "Search[X]"),
    # thought and action on one line
    (
        "I should search X. Action 1: Search[X]",
        "I should search X.",
        Action(S, "X"),
        "Search[X]",
    ),
    # one line, bold inline label
    (
        "I should search X. **Action 1:** Search[X]",
        "I should search X.",
        Action(S, "X"),
        "Search[X]",
    ),
    # leading/trailing spaces everywhere
    (
        "   I will search.   \n   Action 1:    Search[  Ed Wood  ]   \n  ",
        "I will search.",
        Action(S, "Ed Wood"),
        "Search[  Ed Wood  ]",
    ),
    # lower-case action name
    ("x\nAction 1: search[x]", "x", Action(S, "x"), "search[x]"),
    # upper-case action name
    ("x\nAction 1: SEARCH[x]", "x", Action(S, "x"), "SEARCH[x]"),
    # lower-case finish
    ("x\nAction 1: finish[x]", "x", Action(F, "x"), "finish[x]"),
    # mixed-case lookup, space before bracket
    ("x\nAction 1: LookUp [x]", "x", Action(L, "x"), "LookUp [x]"),
    # chatter after the closing bracket
    (
        "It is Paris.\nAction 2: Finish[Paris] because the capital is Paris.",
        "It is Paris.",
        Action(F, "Paris"),
        "Finish[Paris]",
    ),
    # nested, balanced brackets plus a comma
    (
        "Got it.\nAction 4: Finish[The Beatles [band], 1962]",
        "Got it.",
        Action(F, "The Beatles [band], 1962"),
        "Finish[The Beatles [band], 1962]",
    ),
    # nested brackets followed by chatter with more brackets: balanced match wins
    (
        "Got it.\nAction 4: Finish[a [b] c] see [1]",
        "Got it.",
        Action(F, "a [b] c"),
        "Finish[a [b] c]",
    ),
    # unbalanced: fall back to the last "]" on the line
    ("Got it.\nAction 4: Finish[a [b]", "Got it.", Action(F, "a [b"), "Finish[a [b]"),
    # commas in the answer
    (
        "The range is known.\nAction 5: Finish[1,800 to 7,000 ft]",
        "The range is known.",
        Action(F, "1,800 to 7,000 ft"),
        "Finish[1,800 to 7,000 ft]",
    ),
    # non-ASCII answer
    ("首都是北京。\nAction 2: Finish[北京]", "首都是北京。", Action(F, "北京"), "Finish[北京]"),
    # Chinese thought, fullwidth colons, Chinese argument
    (
        "Thought 1：我需要搜索李白。\nAction 1：Search[李白]",
        "我需要搜索李白。",
        Action(S, "李白"),
        "Search[李白]",
    ),
    # Chinese labels are accepted too (not required, but cheap)
    (
        "思考 1：我需要搜索杜甫。\n行动 1：Search[杜甫]",
        "我需要搜索杜甫。",
        Action(S, "杜甫"),
        "Search[杜甫]",
    ),
    # fullwidth brackets
    ("x\nAction 1: Search［杜甫］", "x", Action(S, "杜甫"), "Search［杜甫］"),
    # multiple actions: the first one wins
    (
        "Try both.\nAction 1: Search[A]\nAction 2: Search[B]",
        "Try both.",
        Action(S, "A"),
        "Search[A]",
    ),
    # the model ran on with a second step (no Observation line to cut at)
    (
        "First.\nAction 1: Search[A]\nThought 2: Second.\nAction 2: Finish[B]",
        "First.",
        Action(S, "A"),
        "Search[A]",
    ),
    # label with no valid action: thought kept, action None, text echoed for the hint
    ("I will search.\nAction 1: I will search", "I will search.", None, "I will search"),
    # unknown action type
    ("Hmm.\nAction 1: Think[about it]", "Hmm.", None, "Think[about it]"),
    # unknown action type wrapping a valid one: still invalid
    ("Hmm.\nAction 1: Think[Search[x]]", "Hmm.", None, "Think[Search[x]]"),
    # empty search / lookup are invalid
    ("x\nAction 1: Search[]", "x", None, "Search[]"),
    ("x\nAction 1: Lookup[   ]", "x", None, "Lookup[   ]"),
    # empty finish is a valid (empty) answer
    ("No answer.\nAction 1: Finish[]", "No answer.", Action(F, ""), "Finish[]"),
    # no closing bracket at all
    ("x\nAction 1: Search[Ed Wood", "x", None, "Search[Ed Wood"),
    # the action on the line after a bare label
    ("x\n**Action 1:**\n`Search[Ed Wood]`", "x", Action(S, "Ed Wood"), "Search[Ed Wood]"),
    # no label at all, action on its own line
    ("I need to search X.\nSearch[X]", "I need to search X.", Action(S, "X"), "Search[X]"),
    # bare action only
    ("Finish[yes]", "", Action(F, "yes"), "Finish[yes]"),
    # multi-line thought joined by single spaces
    (
        "Thought 2: Ed Wood was a director.\n\nHe made  films.\n"
        "  So search him.\nAction 2: Search[Ed]",
        "Ed Wood was a director. He made films. So search him.",
        Action(S, "Ed"),
        "Search[Ed]",
    ),
    # a thought that merely mentions actions (lower-case, inline) stays a thought
    (
        "the action: searching is next. I need Search[x] later",
        "the action: searching is next. I need Search[x] later",
        None,
        None,
    ),
    # an argument containing colons and "Action"
    (
        "x\nAction 1: Search[Action: The Movie]",
        "x",
        Action(S, "Action: The Movie"),
        "Search[Action: The Movie]",
    ),
    # CRLF line endings
    ("Thought 1: a\r\nAction 1: Search[b]\r\n", "a", Action(S, "b"), "Search[b]"),
    # think block left in by the caller
    (
        "<think>Search[wrong]</think> Right.\nAction 1: Search[right]",
        "Right.",
        Action(S, "right"),
        "Search[right]",
    ),
    # invented observation left in by the caller
    (
        "a\nAction 1: Search[b]\nObservation 1: b is c.",
        "a",
        Action(S, "b"),
        "Search[b]",
    ),
    # thought only
    ("I am still thinking about it.", "I am still thinking about it.", None, None),
    # empty and whitespace-only
    ("", "", None, None),
    ("   \n\t \n", "", None, None),
    # garbage
    ("]]][[[:::***", "]]][[[:::***", None, None),
]


@pytest.mark.parametrize(("text", "thought", "action", "action_text"), STEP_CASES)
def test_parse_step_table(
    text: str, thought: str, action: Action | None, action_text: str | None
) -> None:
    assert parse_step(text) == ParsedStep(thought, action, action_text)


def test_table_is_big_enough() -> None:
    assert len(STEP_CASES) >= 30


@pytest.mark.parametrize(("text", "thought", "action", "action_text"), STEP_CASES)
def test_thought_is_one_line_without_action_label(
    text: str, thought: str, action: Action | None, action_text: str | None
) -> None:
    step = parse_step(text)
    assert "\n" not in step.thought
    assert "\r" not in step.thought
    assert "Action 1:" not in step.thought
    assert step.thought == step.thought.strip()


def test_action_str_is_canonical() -> None:
    assert str(Action("Search", "Ed Wood")) == "Search[Ed Wood]"
    assert str(Action("Lookup", "born")) == "Lookup[born]"
    assert str(Action("Finish", "")) == "Finish[]"
    assert str(parse_action("SEARCH[  x ]")) == "Search[x]"


def test_action_and_step_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        Action("Search", "x").name = "Finish"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        ParsedStep("", None, None).thought = "x"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Search[x]", Action(S, "x")),
        ("  `Lookup[y]`  ", Action(L, "y")),
        ("Action 3: **Finish[y]**", Action(F, "y")),
        ("Action 3：Finish[北京]", Action(F, "北京")),
        ("finish[The Beatles [band], 1962]", Action(F, "The Beatles [band], 1962")),
        ("Search[]", None),
        ("Think[x]", None),
        ("", None),
        ("search", None),
        ("I think Search[x]", None),
        ("Search[a </think> b]", Action(S, "a </think> b")),
    ],
)
def test_parse_action(text: str, expected: Action | None) -> None:
    assert parse_action(text) == expected


def test_valid_actions_hint_names_all_forms() -> None:
    for form in ("Search[", "Lookup[", "Finish["):
        assert form in VALID_ACTIONS_HINT
    assert VALID_ACTIONS_HINT.startswith("Invalid action")


def test_action_kind_is_normalised() -> None:
    for text in ("SEARCH[a]", "Search[a]", "search[a]", "sEaRcH[a]"):
        action = parse_action(text)
        assert action is not None
        assert action.name == "Search"


@pytest.mark.parametrize(
    "text",
    [
        "[" * 100_000,
        "]" * 100_000,
        "Action:" * 50_000,
        "Action 1: Search[" * 20_000,
        "Action 1: Search[" + "[" * 100_000,
        "Thought:" * 50_000,
        " Action" * 50_000,
        " **Action 1" * 30_000,
        "\n" * 100_000,
        "*" * 100_000 + "Action",
        "x\nAction 1: Finish[" + "a" * 1_000_000 + "]",
        "\n".join(["Search[" * 10] * 10_000),
        "<think>" * 50_000,
        "Observation" * 50_000,
        "\x00\x01\ufffd\ud800",
    ],
)
def test_pathological_input_finishes_and_does_not_raise(text: str) -> None:
    step = parse_step(text)
    assert isinstance(step, ParsedStep)
    assert isinstance(step.thought, str)
    assert "\n" not in step.thought


def test_one_megabyte_answer_is_kept_whole() -> None:
    step = parse_step("x\nAction 1: Finish[" + "a" * 1_000_000 + "]")
    assert step.call == Action(F, "a" * 1_000_000)


def test_one_megabyte_thought() -> None:
    step = parse_step("word " * 200_000 + "\nAction 1: Search[x]")
    assert step.call == Action(S, "x")
    assert len(step.thought) == len("word " * 200_000) - 1


_FUZZ_TOKENS = [
    "Thought",
    "Action",
    "action",
    "Observation",
    " 1",
    ":",
    "：",
    "**",
    "_",
    "`",
    "Search",
    "finish",
    "Lookup",
    "[",
    "]",
    "［",
    "］",
    " ",
    "\n",
    "\r\n",
    "x",
    "北京",
    "<think>",
    "</think>",
]


def test_fuzz_invariants() -> None:
    rng = random.Random(20221006)
    for _ in range(3000):
        parts = [rng.choice(_FUZZ_TOKENS) for _ in range(rng.randint(0, 40))]
        if rng.random() < 0.5:  # make well-formed action sites common
            parts.insert(rng.randint(0, len(parts)), "\nAction 1: Search[")
        text = "".join(parts)
        step = parse_step(text)
        assert "\n" not in step.thought
        assert "\r" not in step.thought
        assert step.thought == step.thought.strip()
        if step.call is not None:
            assert step.call.name in (S, L, F)
            assert step.call.argument == step.call.argument.strip()
            assert step.action_text is not None
            assert "\n" not in step.action_text
            assert parse_action(step.action_text) == step.call
            if step.call.name != F:
                assert step.call.argument


# --- cut_at_observation / ObservationCutter ---------------------------------------------

CUT_CASES: list[tuple[str, str]] = [
    ("a\nAction 1: Search[x]\nObservation 1: x is y", "a\nAction 1: Search[x]"),
    ("a\nAction 1: Search[x]\r\nObservation 1: x", "a\nAction 1: Search[x]"),
    ("a\n**Observation 1:** x", "a"),
    ("a\n*Observation*: x", "a"),
    ("a\n__Observation__: x", "a"),
    ("a\n> Observation 1: x", "a"),
    ("a\n## Observation 1\nx", "a"),
    ("a\n  observation: lower", "a"),
    ("a\nObservation 1：全角", "a"),
    ("a\nObservation1: no space", "a"),
    ("a\nObservationally, b", "a\nObservationally, b"),
    ("a\nAction 1: Search[x]\n\nObservation 1: x", "a\nAction 1: Search[x]\n"),
    ("Observation 1: at the very start", ""),
    ("Observations show X.\nAction 1: Search[X]", "Observations show X.\nAction 1: Search[X]"),
    ("I see. The Observation 1: inline is kept", "I see. The Observation 1: inline is kept"),
    ("no observation here", "no observation here"),
    ("", ""),
    ("a\nObservation 1: x\nThought 2: y\nObservation 2: z", "a"),
]


@pytest.mark.parametrize(("text", "expected"), CUT_CASES)
def test_cut_at_observation(text: str, expected: str) -> None:
    assert cut_at_observation(text) == expected


def _stream(text: str, size: int) -> tuple[str, ObservationCutter]:
    cutter = ObservationCutter()
    shown = "".join(cutter.feed(text[i : i + size]) for i in range(0, len(text), size))
    return shown + cutter.flush(), cutter


STREAM_TEXTS = [text for text, _ in CUT_CASES] + [
    " I need to search.\nAction 1: Search[Obs]\nObs",
    "Thought: a\nObserv",
    "a\nObservationally, b\nObservation 1: c",
    "a\n\n\n   \n**Obs",
]


@pytest.mark.parametrize("size", [1, 2, 7, 1000])
@pytest.mark.parametrize("text", STREAM_TEXTS)
def test_streaming_matches_batch(text: str, size: int) -> None:
    shown, cutter = _stream(text, size)
    assert shown == cut_at_observation(text)
    assert cutter.text == cut_at_observation(text)


def test_stream_stops_after_cut() -> None:
    cutter = ObservationCutter()
    assert cutter.feed("a\nAction 1: Search[x]\n") == "a\nAction 1: Search[x]"
    assert not cutter.done
    assert cutter.feed("Observation 1: y") == ""
    assert cutter.done
    assert cutter.feed("\nThought 2: more") == ""
    assert cutter.flush() == ""
    assert cutter.text == "a\nAction 1: Search[x]"


def test_stream_holds_back_possible_observation_line_until_flush() -> None:
    cutter = ObservationCutter()
    out = cutter.feed("Thought: a\nObs")
    assert out == "Thought: a"  # "\nObs" might become an Observation line
    assert cutter.flush() == "\nObs"  # it didn't: released at the end
    assert cutter.text == "Thought: a\nObs"


def test_stream_releases_held_line_once_it_cannot_be_observation() -> None:
    cutter = ObservationCutter()
    assert cutter.feed("a\n**Ob") == "a"
    assert cutter.feed("vious") == "\n**Obvious"
    assert cutter.flush() == ""


def test_stream_observations_word_in_thought_not_cut() -> None:
    shown, cutter = _stream("Observations show that X.\nAction 1: Search[X]", 1)
    assert shown == "Observations show that X.\nAction 1: Search[X]"
    assert not cutter.done


def test_stream_ignores_empty_chunks() -> None:
    cutter = ObservationCutter()
    assert cutter.feed("") == ""
    assert cutter.feed("abc") == "abc"
    assert cutter.feed("") == ""


# --- strip_think --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<think>secret</think>visible", "visible"),
        ("<THINK>secret</THINK>visible", "visible"),
        ("a<think>x</think>b<think>y</think>c", "abc"),
        ("<think>multi\nline\n</think>\nAction 1: Search[x]", "\nAction 1: Search[x]"),
        ("before<think>never closed", "before"),
        ("reasoning without opening tag</think>answer", "answer"),
        ("no tags at all", "no tags at all"),
        ("", ""),
    ],
)
def test_strip_think(text: str, expected: str) -> None:
    assert strip_think(text) == expected


def test_strip_think_then_parse() -> None:
    step = parse_step(strip_think("<think>Action 1: Finish[no]</think>Yes.\nAction 1: Finish[yes]"))
    assert step == ParsedStep("Yes.", Action(F, "yes"), "Finish[yes]")


# --- which action site wins: a line-start label over an inline one ------------------------------

# (model output, expected action, expected thought). Real outputs (gemma-3-270m, qwen) write an
# inline "Action:" inside a thought and the real action on its own line, in either order.
LABEL_ORDER_CASES: list[tuple[str, Action | None, str]] = [
    # inline first, line-start below: the line-start one wins
    (
        "I will finish. Action: finish[a long sentence about him].\nAction: finish[Sean Matthews]",
        Action(F, "Sean Matthews"),
        "I will finish. Action: finish[a long sentence about him].",
    ),
    (
        "I must improve my strategy. Action: reflect\nThought: search it.\nAction: search[x]",
        Action(S, "x"),
        "I must improve my strategy. Action: reflect search it.",
    ),
    (
        "So I search. Action 1: Search[wrong]\nAction 1: Search[right]",
        Action(S, "right"),
        "So I search. Action 1: Search[wrong]",
    ),
    # an unlabelled line-start action also beats an inline label
    ("So. Action: Lookup[a]\nFinish[b]", Action(F, "b"), "So. Action: Lookup[a]"),
    # line-start first, inline below: the line-start one still wins
    (
        "I search.\nAction 1: Search[right]\nThen maybe. Action 2: Search[wrong]",
        Action(S, "right"),
        "I search.",
    ),
    # two line-start labels: the first one
    ("t\nAction 1: Search[a]\nAction 2: Search[b]", Action(S, "a"), "t"),
    # only inline labels: the first inline one (the fallback)
    ("I search. Action 1: Search[a] and later Action 2: Search[b]", Action(S, "a"), "I search."),
    # a line-start label whose action is invalid still wins (no action, reported as such)
    ("So. Action: Search[a]\nAction: reflect", None, "So. Action: Search[a]"),
]


@pytest.mark.parametrize(("text", "action", "thought"), LABEL_ORDER_CASES)
def test_line_start_label_wins_over_inline(text: str, action: Action | None, thought: str) -> None:
    step = parse_step(text)
    assert (step.call, step.thought) == (action, thought)
    assert parse_action(text) == action


@pytest.mark.parametrize(
    ("text", "end"),
    [
        ("I will. Action: Finish[a].\nAction: Finish[b]\nThought 2: more", 44),
        ("t\nAction 1: Search[a]\nmore", 21),
        ("only inline. Action: Search[a] end\nnext line", 34),
        ("no action at all\nat all", None),
    ],
)
def test_action_line_end_is_the_line_of_the_chosen_action(text: str, end: int | None) -> None:
    assert action_line_end(text) == end
