"""Human-readable output of a run: the verbose trajectory, live or replayed.

The renderer owns its console; the loop never prints. Untrusted text (model output, Wikipedia)
goes through :func:`plain` and is printed as ``rich.text.Text``, so markup such as ``[bold]`` is
shown literally and terminal control sequences never reach the terminal.
"""

from __future__ import annotations

import json
import re
from typing import IO

from rich.console import Console
from rich.text import Text

from react_cli.agent import MAX_TOKENS_REACHED, RunObserver, RunResult, Step
from react_cli.wording import plural, token_text

# CSI sequences, OSC sequences with their terminator (BEL or ST), other two-byte escapes. An
# OSC without a terminator is not swallowed to the end of the text: its ESC alone is removed.
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")


# An escape sequence cut off at the end of a streamed chunk (CSI or OSC so far).
_UNFINISHED_ESCAPE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*|\][^\x07\x1b]*\x1b?)?\Z")
MAX_HELD_ESCAPE = 256


def plain(text: str) -> str:
    """Text safe for a terminal: escape sequences and control characters removed (\\n, \\t kept)."""
    return _CONTROL.sub("", _ANSI.sub("", text))


def safe_json(data: object, *, indent: int | None = None) -> str:
    """JSON safe for a terminal: control characters JSON-escapes cannot miss.

    ``json.dumps`` escapes C0 controls but leaves C1 ones (U+009B is an 8-bit CSI) and
    bidirectional overrides raw; they are written as ``\\uXXXX`` escapes, still valid JSON.
    """
    text = json.dumps(data, ensure_ascii=False, indent=indent)
    return _CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def make_console(file: IO[str] | None = None, *, stderr: bool = True) -> Console:
    return Console(
        file=file, stderr=stderr, highlight=False, markup=False, emoji=False, soft_wrap=True
    )


def format_seconds(seconds: float) -> str:
    return f"{seconds:.2f} s" if seconds < 60 else f"{int(seconds // 60)} min {seconds % 60:.0f} s"


class Renderer(RunObserver):
    """Prints Thought/Action/Observation as they happen (or as recorded, for replay)."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self._line_open = False
        self._after_label = False
        self._held = ""  # an escape sequence split across streamed chunks, until it completes

    def _label(self, label: str, style: str) -> None:
        self._end_line()
        self.console.print(Text(label, style=style), end=" ")
        self._line_open = self._after_label = True

    def _end_line(self) -> None:
        held, self._held = self._held, ""
        self._show(held)
        if self._line_open:
            self.console.print()
            self._line_open = False

    def run_started(self, question: str) -> None:
        self.console.print(Text.assemble(("Question: ", "bold"), plain(question)))

    def step_started(self, index: int) -> None:
        self._label(f"Thought {index}:", "bold cyan")

    def action_requested(self, index: int) -> None:
        self._label(f"Action {index}:", "bold magenta")

    def model_text(self, text: str) -> None:
        text, self._held = self._held + text, ""
        unfinished = _UNFINISHED_ESCAPE.search(text)
        if unfinished and len(text) - unfinished.start() <= MAX_HELD_ESCAPE:
            text, self._held = text[: unfinished.start()], text[unfinished.start() :]
        self._show(text)

    def _show(self, text: str) -> None:
        cleaned = plain(text)
        if self._after_label:
            cleaned = cleaned.lstrip(" ")
        if cleaned:
            self.console.print(Text(cleaned), end="", soft_wrap=True)
            self._line_open = not cleaned.endswith("\n")
            self._after_label = False

    def step_finished(self, step: Step) -> None:
        self._end_line()
        if step.error and step.error != "parse_error":
            self.console.print(Text(f"Error {step.index}: {plain(step.error)}", style="bold red"))
        elif step.observation:
            self.console.print(
                Text.assemble(
                    (f"Observation {step.index}: ", "bold green"), plain(step.observation)
                )
            )
        self.console.print(Text(self._step_meta(step), style="dim"))

    @staticmethod
    def _step_meta(step: Step) -> str:
        parts = [f"model {format_seconds(step.latency_s)}"]
        if step.tool_latency_s:
            parts.append(f"tool {format_seconds(step.tool_latency_s)}")
        if step.usage.total_tokens:
            parts.append(token_text(step.usage))
        if step.retries:
            parts.append(plural(step.retries, "retry", "retries"))
        if step.tool_retries:
            parts.append(plural(step.tool_retries, "tool retry", "tool retries"))
        if step.error == "parse_error":
            parts.append("no valid action")
        if step.details.get(MAX_TOKENS_REACHED):
            parts.append("stopped at max_tokens")
        if step.details.get("forced"):
            parts.append("forced answer")
        return "  (" + " · ".join(parts) + ")"

    def run_finished(self, result: RunResult) -> None:
        self._end_line()
        if result.answer is not None:
            self.console.print(Text.assemble(("Answer: ", "bold"), plain(result.answer)))
        else:
            reason = f": {plain(result.error)}" if result.error else ""
            self.console.print(Text(f"No answer ({result.stop_reason}){reason}", style="bold red"))
        summary = (
            f"stop: {result.stop_reason} · {plural(len(result.steps), 'step')} · "
            f"{token_text(result.usage)} · {format_seconds(result.duration_s)}"
        )
        self.console.print(Text(summary, style="dim"))


def replay_run(renderer: Renderer, result: RunResult) -> None:
    """Show a recorded run through the same events a live run produces."""
    renderer.run_started(result.question)
    for step in result.steps:
        renderer.step_started(step.index)
        renderer.model_text(step.raw)
        if step.followup_raw is not None:
            renderer.action_requested(step.index)
            renderer.model_text(step.followup_raw)
        renderer.step_finished(step)
    renderer.run_finished(result)
