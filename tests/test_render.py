"""The live renderer: untrusted streamed text reaches the terminal as plain text."""

from __future__ import annotations

import io

import pytest

from react_cli.agent import Step
from react_cli.render import Renderer, make_console


def rendered(chunks: list[str]) -> str:
    out = io.StringIO()
    renderer = Renderer(make_console(out))
    renderer.step_started(1)
    for chunk in chunks:
        renderer.model_text(chunk)
    renderer.step_finished(Step(index=1, observation="seen"))
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
