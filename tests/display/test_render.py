"""The live renderer: untrusted streamed text reaches the terminal as plain text."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from react_cli.core.records import RetryWait, Usage
from react_cli.core.trajectory import Run, Step
from react_cli.display.render import Renderer
from react_cli.display.replay import replay_run
from react_cli.display.terminal import make_console
from react_cli.loop.events import ActionRequested, ModelDone, ModelText, StepFinished, StepStarted
from react_cli.tools.wikipedia import PAPER_TOOLS


def rendered(chunks: list[str]) -> str:
    out = io.StringIO()
    renderer = Renderer(make_console(out))
    renderer.notify(StepStarted(1))
    for chunk in chunks:
        renderer.notify(ModelText(chunk))
    renderer.notify(StepFinished(Step(index=1, observation="seen")))
    return out.getvalue()


@pytest.mark.parametrize("size", [1, 2, 3, 5, 100])
def test_escape_sequences_split_across_chunks_leave_no_fragments(size: int) -> None:
    text = "a \x1b[31mred\x1b[0m b \x1b]0;title\x1b\\ c \x1b]8;;http://x\x07link"
    chunks = [text[i : i + size] for i in range(0, len(text), size)]
    shown = rendered(chunks)
    assert shown.startswith("Thought 1: a red b  c link\nObservation 1: seen\n")
    assert "\x1b" not in shown and "[31m" not in shown and "]0;" not in shown


def test_an_escape_left_unfinished_at_the_end_is_still_removed() -> None:
    shown = rendered(["text \x1b[3"])
    assert shown.startswith("Thought 1: text [3\nObservation 1: seen\n")
    assert "\x1b" not in shown


def shown_run(
    replies: list[str], *, terminal_width: int | None = None, obs: str = "seen", index: int = 1
) -> str:
    """What -v prints for step ``index`` whose model replies are ``replies`` (the second one,
    if any, answers the "Action N:" call), each streamed in chunks of 3 characters."""
    out = io.StringIO()
    console = make_console(out)
    if terminal_width is not None:
        console = Console(file=out, force_terminal=True, width=terminal_width, color_system=None)
    renderer = Renderer(console)
    renderer.notify(StepStarted(index))
    for k, reply in enumerate(replies):
        if k:
            renderer.notify(ActionRequested(index))
        for i in range(0, len(reply), 3):
            renderer.notify(ModelText(reply[i : i + 3]))
    renderer.notify(StepFinished(Step(index=index, observation=obs)))
    return out.getvalue()


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        # a base model's invented next step and Question block after the action
        (
            " I search X.\nAction 1: Search[X]\nThought 2: X is Y.\nAction 2: Finish[Y]\n"
            "Question: What is Z?",
            "Thought 1: I search X.\nAction 1: Search[X]\n"
            "(ignored) Thought 2: X is Y.\nAction 2: Finish[Y]\nQuestion: What is Z?\n",
        ),
        # the line-start action below an inline one: both lines kept (the line's label is
        # ours), the rest ignored
        (
            " So. Action: Finish[a sentence].\nAction: Finish[b]\nmore",
            "Thought 1: So. Action: Finish[a sentence].\nAction 1: Finish[b]\n(ignored) more\n",
        ),
        # an echoed cue prints the label once
        (
            "Thought 1: I need to search X.\nAction 1: Search[X]",
            "Thought 1: I need to search X.\nAction 1: Search[X]\n",
        ),
        (" **Thought 1:** short\nAction 1: Search[X]", "Thought 1: short\nAction 1: Search[X]\n"),
        # "Thought" inside the text is no echo
        (
            " Thoughtful people. Action: Search[X]",
            "Thought 1: Thoughtful people. Action: Search[X]\n",
        ),
    ],
)
def test_ignored_text_is_dimmed_and_labelled(reply: str, expected: str) -> None:
    assert shown_run([reply]).startswith(expected + "Observation 1: seen\n")


def test_labels_the_model_writes_on_later_lines_are_ours() -> None:
    """Gemma 3 270M in step 2: the instructions echoed, then its own "Thought 2:" and a wrong
    "Action 1:". Shown as the parser reads it: one thought, then step 2's action."""
    reply = (
        "Solve a question answering task.\nThought 2: I need to search Ray Charles.\n"
        "**Action 1:** Search[Ray Charles]\nObservation 1: invented"
    )
    assert shown_run([reply], index=2).startswith(
        "Thought 2: Solve a question answering task.\nI need to search Ray Charles.\n"
        "Action 2: Search[Ray Charles]\n(ignored) Observation 1: invented\nObservation 2: seen\n"
    )


def test_lines_after_the_first_without_an_action_are_ignored() -> None:
    """The loop keeps the first line and asks for the action alone."""
    shown = shown_run([" I think.\nSolve a question answering task with...\n", "Search[X]"])
    assert shown.startswith(
        "Thought 1: I think.\n(ignored) Solve a question answering task with...\n"
        "Action 1: Search[X]\nObservation 1: seen\n"
    )


def test_replay_shows_the_same_as_live() -> None:
    raw = " I search X.\nAction 1: Search[X]\nThought 2: invented"
    out = io.StringIO()
    result = Run("q", None, "max_steps", [Step(1, raw=raw, observation="seen")], Usage(), 1)
    replay_run(Renderer(make_console(out)), result, PAPER_TOOLS)
    assert (
        "Action 1: Search[X]\n(ignored) Thought 2: invented\nObservation 1: seen\n"
        in out.getvalue()
    )


def test_long_observations_wrap_under_their_label_on_a_terminal() -> None:
    obs = "Arthur's Magazine (1844–1846) was an American literary periodical published in " * 2
    shown = shown_run([" t\nAction 1: Search[X]"], terminal_width=40, obs=obs.strip())
    lines = shown.splitlines()[2:-1]
    assert lines[0].startswith("Observation 1: Arthur's Magazine")
    indent = " " * len("Observation 1: ")
    assert len(lines) > 3 and all(line.startswith(indent) for line in lines[1:])
    assert all(len(line) <= 40 for line in lines)
    words = " ".join(line.strip() for line in lines).removeprefix("Observation 1: ")
    assert words == obs.strip()  # broken at spaces only, no word cut


def test_piped_observations_stay_one_line() -> None:
    obs = "word " * 100
    shown = shown_run([" t\nAction 1: Search[X]"], obs=obs.strip())
    assert f"Observation 1: {obs.strip()}\n" in shown


def test_a_reply_ends_before_its_tool_runs() -> None:
    """The action line (no newline after it) is printed when the model call returns, so
    retry notices of the tool call come after it, not before."""
    out = io.StringIO()
    renderer = Renderer(make_console(out))
    renderer.notify(StepStarted(1))
    renderer.notify(ModelText(" t\nAction 1: Search[X]"))
    renderer.notify(ModelDone())
    renderer.retry_waiting(RetryWait(1.0, "HTTP 503", 1, 4))
    assert (
        out.getvalue() == "Thought 1: t\nAction 1: Search[X]\nretrying in 1.0 s: HTTP 503 (1/4)\n"
    )
