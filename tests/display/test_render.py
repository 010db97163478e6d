"""The live renderer: untrusted streamed text reaches the terminal as plain text; and the text
protocol's replies as ``-v`` shows them, through the real loop (the protocol says what of a
reply is its thought, the renderer parses nothing), and replayed from their record."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from scripted import DictTools, Loop, ScriptedModel

from react_cli.core.records import RetryWait
from react_cli.core.trajectory import Action, Cue, Step
from react_cli.display.render import Renderer
from react_cli.display.replay import replay_steps
from react_cli.display.terminal import make_console
from react_cli.loop.events import (
    ActionChosen,
    Forward,
    ModelDone,
    ModelText,
    Observed,
    ReplyStarted,
    RunFinished,
    RunStarted,
    StepFinished,
)
from react_cli.loop.limits import Limits


def rendered(chunks: list[str]) -> str:
    out = io.StringIO()
    renderer = Renderer(make_console(out))
    renderer.notify(ReplyStarted(1, Cue.THOUGHT))
    for chunk in chunks:
        renderer.notify(ModelText(chunk))
    renderer.notify(ModelDone())
    renderer.notify(Observed(1, 1, 1, "seen"))
    renderer.notify(StepFinished(Step(1, actions=[Action(None, None, "seen")])))
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
    replies: list[str],
    *,
    terminal_width: int | None = None,
    obs: str = "seen",
    index: int = 1,
    chunk: int = 3,
) -> str:
    """What -v prints from step ``index`` of a text-protocol run whose step ``index`` has
    the model ``replies`` (the second one, if any, answers the "Action N:" call), each streamed
    in chunks of ``chunk`` characters, each Search answered ``obs``; the steps before it search
    and see something else."""
    out = io.StringIO()
    console = make_console(out)
    if terminal_width is not None:
        console = Console(file=out, force_terminal=True, width=terminal_width, color_system=None)
    before = [f" t\nAction {k}: Search[Before {k}]" for k in range(1, index)]
    model = ScriptedModel([*before, *replies], chunk=chunk)
    pages = {"X": obs, "Ray Charles": obs, **{f"Before {k}": "before" for k in range(1, index)}}
    observer = Forward(Renderer(console), skip=(RunStarted, RunFinished))
    Loop(model, DictTools(pages), Limits(max_steps=index), observer).run("Q\n", "q")
    shown = out.getvalue()
    return shown[shown.index(f"Thought {index}:") :] if f"Thought {index}:" in shown else shown


@pytest.mark.parametrize("chunk", [1, 3, 1000])
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
        # the line-start action below an inline one: the inline one is thought, the rest
        # ignored
        (
            " So. Action: Finish[a sentence].\nAction: Search[X]\nmore",
            "Thought 1: So. Action: Finish[a sentence].\nAction 1: Search[X]\n(ignored) more\n",
        ),
        # an echoed cue prints the label once
        (
            "Thought 1: I need to search X.\nAction 1: Search[X]",
            "Thought 1: I need to search X.\nAction 1: Search[X]\n",
        ),
        (" **Thought 1:** short\nAction 1: Search[X]", "Thought 1: short\nAction 1: Search[X]\n"),
        # "Thought" inside the text is no echo; an inline action is told apart from the thought
        (
            " Thoughtful people. Action: Search[X]",
            "Thought 1: Thoughtful people.\nAction 1: Search[X]\n",
        ),
        # an action with no thought before it: no empty thought
        (" Search[X]", "Action 1: Search[X]\n"),
        (
            " **Action 1:** Search[X]\nThought 2: more",
            "Action 1: Search[X]\n(ignored) Thought 2: more\n",
        ),
        # a word that only looks like an action's start
        (
            " Actually, Searching is the way.\nAction 1: Search[X]",
            "Thought 1: Actually, Searching is the way.\nAction 1: Search[X]\n",
        ),
    ],
)
def test_ignored_text_is_dimmed_and_labelled(reply: str, expected: str, chunk: int) -> None:
    assert shown_run([reply], chunk=chunk).startswith(expected + "Observation 1: seen\n")


def test_the_thought_streams_a_word_at_a_time_and_the_action_never_does() -> None:
    """What the renderer is told while the reply streams: the thought's words as they come,
    nothing of the action (it is told whole, once the reply is read)."""
    texts: list[str] = []

    class Texts:
        def notify(self, event: object) -> None:
            if isinstance(event, ModelText):
                texts.append(event.text)
            elif isinstance(event, ActionChosen):
                texts.append(f"<{event.written}>")

    reply = " I will search for it on Wikipedia now.\nAction 1: Search[X]"
    Loop(ScriptedModel([reply], chunk=1), DictTools({}), Limits(max_steps=1), Texts()).run("Q", "q")
    assert texts[-1] == "<Search[X]>"
    assert "".join(texts[:-1]) == " I will search for it on Wikipedia now.\n"
    assert len(texts) > 4  # word by word, not at the line's end


def test_labels_the_model_writes_on_later_lines_are_ours() -> None:
    """Gemma 3 270M in step 2: the instructions echoed, then its own "Thought 2:" and a wrong
    "Action 1:". Shown as the parser reads it: one thought, then step 2's action (the
    invented observation was cut as it streamed)."""
    reply = (
        "Solve a question answering task.\nThought 2: I need to search Ray Charles.\n"
        "**Action 1:** Search[Ray Charles]\nObservation 1: invented"
    )
    assert shown_run([reply], index=2).startswith(
        "Thought 2: Solve a question answering task.\nI need to search Ray Charles.\n"
        "Action 2: Search[Ray Charles]\nObservation 2: seen\n"
    )


def test_lines_after_the_first_without_an_action_are_ignored() -> None:
    """The loop keeps the first line and asks for the action alone."""
    shown = shown_run([" I think.\nSolve a question answering task with...\n", "Search[X]"])
    assert shown.startswith(
        "Thought 1: I think.\n(ignored) Solve a question answering task with...\n"
        "Action 1: Search[X]\nObservation 1: seen\n"
    )


@pytest.mark.parametrize(
    "replies",
    [
        [" I search X.\nAction 1: Search[X]\nThought 2: invented"],
        [" I think.\nSolve a question answering task with...\n", "Search[X]"],
        [" Thoughtful people. Action: Search[X]"],
    ],
)
def test_replay_shows_the_same_as_live(replies: list[str]) -> None:
    live, replayed = io.StringIO(), io.StringIO()
    observer = Forward(Renderer(make_console(live)), skip=(RunStarted, RunFinished))
    model = ScriptedModel(list(replies), chunk=2)
    run = Loop(model, DictTools({"X": "seen"}), Limits(max_steps=1), observer).run("Q\n", "q")
    replay_steps(Renderer(make_console(replayed)), run)
    assert replayed.getvalue() == live.getvalue()
    assert "Observation 1: seen\n" in live.getvalue()


def test_long_observations_wrap_under_their_label_on_a_terminal() -> None:
    obs = "Arthur's Magazine (1844–1846) was an American literary periodical published in " * 2
    shown = shown_run([" t\nAction 1: Search[X]"], terminal_width=40, obs=obs.strip())
    lines = shown.splitlines()[2:]
    lines = lines[: next(n for n, line in enumerate(lines) if line.startswith("  ("))]
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
    renderer.notify(ReplyStarted(1, Cue.THOUGHT))
    renderer.notify(ModelText(" t\n"))
    renderer.notify(ModelDone())
    renderer.notify(ActionChosen(1, 1, 1, "Search[X]"))
    renderer.retry_waiting(RetryWait(1.0, "HTTP 503", 1, 4))
    assert (
        out.getvalue() == "Thought 1: t\nAction 1: Search[X]\nretrying in 1.0 s: HTTP 503 (1/4)\n"
    )


def test_long_thoughts_wrap_under_their_label_on_a_terminal() -> None:
    """Issue 32: a streamed thought wrapped at the terminal's edge without an indent."""
    thought = "I need to search Scott Derrickson and Ed Wood and compare their nationalities"
    shown = shown_run(
        [f" {thought} twice over.\nAction 1: Search[Scott Derrickson]"], terminal_width=40
    )
    lines = shown.splitlines()
    action = next(n for n, line in enumerate(lines) if line.startswith("Action 1:"))
    thought_lines = lines[:action]
    assert thought_lines[0].startswith("Thought 1: I need") and len(thought_lines) > 2
    assert all(line.startswith(" " * len("Thought 1: ")) for line in thought_lines[1:])
    assert all(len(line) <= 40 for line in lines[: action + 1])
    words = " ".join(line.strip() for line in thought_lines).removeprefix("Thought 1: ")
    assert words == f"{thought} twice over."  # broken at spaces only: no word cut


def test_the_models_action_line_is_styled_as_a_label_on_a_terminal() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=80, color_system="standard")
    model = ScriptedModel([" I search X.\nAction 1: Search[X]"], chunk=3)
    observer = Forward(Renderer(console), skip=(RunStarted, RunFinished))
    Loop(model, DictTools({"X": "seen"}), Limits(max_steps=1), observer).run("Q\n", "q")
    shown = out.getvalue()
    assert "\x1b[1;35mAction 1:\x1b[0m Search[X]" in shown  # bold magenta, as a called tool's
    assert "\x1b[1;36mThought 1:\x1b[0m I search X." in shown


def test_piped_thoughts_stay_one_line() -> None:
    thought = "word " * 60
    shown = shown_run([f" {thought}\nAction 1: Search[X]"])
    assert shown.startswith(f"Thought 1: {thought}\nAction 1: Search[X]\n")  # as it came


def test_a_long_action_stays_whole_on_a_terminal() -> None:
    """An action is text to read as the model wrote it (and to paste): the terminal wraps
    it, no line break is added."""
    action = "Search[" + "word " * 20 + "]"
    shown = shown_run([f" t\nAction 1: {action}"], terminal_width=40)
    assert f"Action 1: {action}\n" in shown
