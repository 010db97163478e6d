"""How a text-protocol reply is shown as it streams (``loop.text.shown``): the same whatever
pieces the reply comes in, never its action, hostile text and endless lines included."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from react_cli.loop.text.parser import parse_step
from react_cli.loop.text.shown import MAX_HEAD, ThoughtShown
from react_cli.tools.paper import PAPER_TOOLS

# Text with the pieces the stream decides on: labels, actions, brackets, line ends, spaces.
PIECES = st.one_of(
    st.sampled_from(
        [
            "Action",
            "Action 1:",
            "**Action 2:**",
            " Action:",
            "ACTION",
            "Act",
            "Thought 1:",
            "thought:",
            "Search",
            "Search[",
            "Finish[x]",
            "Lookup [y]",
            "[",
            "]",
            "\n",
            " ",
            "\t",
            "*",
            "> ",
            '"',
            "行动：",
        ]
    ),
    st.text(alphabet="abc XYZ.,", min_size=1, max_size=6),
)
REPLY = st.lists(PIECES, max_size=30).map("".join)


def streamed(text: str, cuts: list[int]) -> str:
    """What is shown of ``text`` when it streams in pieces cut at ``cuts``."""
    shown, start = ThoughtShown(PAPER_TOOLS), 0
    pieces = []
    for cut in sorted(set(cuts)):
        pieces.append(shown.feed(text[start:cut]))
        start = cut
    pieces.append(shown.feed(text[start:]))
    return "".join(pieces) + shown.end()


@settings(max_examples=300, deadline=None)
@given(REPLY, st.lists(st.integers(min_value=0, max_value=200), max_size=12))
def test_what_is_shown_is_the_same_whatever_the_pieces(text: str, cuts: list[int]) -> None:
    whole = streamed(text, [])
    assert streamed(text, [cut for cut in cuts if cut < len(text)]) == whole
    assert streamed(text, list(range(len(text)))) == whole  # a character at a time


@settings(max_examples=300, deadline=None)
@given(REPLY)
def test_the_action_is_never_shown_as_thought(text: str) -> None:
    parsed = parse_step(text, PAPER_TOOLS)
    shown = streamed(text, list(range(0, len(text), 3)))
    if parsed.action_text is not None and parsed.action_text not in parsed.thought:
        assert not shown.rstrip().endswith(parsed.action_text)


def test_a_label_after_a_leading_line_break_is_a_later_line_s_however_it_streams() -> None:
    """Found by the property above: whole, the echo window read past the line break and took
    the label for an echo of the first line's; a character at a time, it did not."""
    text = "\nThought 1: I look.\nAction 1: Search[X]"
    assert streamed(text, []) == streamed(text, list(range(len(text)))) == "\nI look."
    assert streamed("\nThought 1:", []) == "\n"


def test_a_first_line_past_the_bound_waits_for_its_end() -> None:
    shown = ThoughtShown(PAPER_TOOLS)
    word = "x" * (MAX_HEAD + 10)
    assert shown.feed(" I think " + word[: MAX_HEAD // 2]) == " I think"
    assert shown.feed(word[MAX_HEAD // 2 :]) == ""  # held: too long to examine as it streams
    assert shown.feed(" and more.\nAction 1: Search[X]") == f" {word} and more.\n"
    assert shown.end() == ""
