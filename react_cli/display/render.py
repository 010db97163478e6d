"""Human-readable output of a run: the verbose trajectory, live, replayed or paced, with the
completions, votes and path of the paper's other methods.

The renderer owns its console; the loop never prints. Untrusted text (model output, Wikipedia)
goes through ``terminal.plain`` and is printed as ``rich.text.Text``, so markup such as
``[bold]`` is shown literally and terminal control sequences never reach the terminal.
"""

from __future__ import annotations

import re

from rich.console import Console
from rich.text import Text

from react_cli.core.method import Method
from react_cli.core.records import Prices, RetryWait
from react_cli.core.trajectory import ErrorKind, Run, Step
from react_cli.core.wording import cost_text, plural, token_text
from react_cli.display.terminal import format_seconds, plain
from react_cli.loop.events import (
    ActionChosen,
    ActionRequested,
    EarlierShown,
    Event,
    ModelDone,
    ModelText,
    RunFinished,
    RunStarted,
    StepFinished,
    StepStarted,
    ThoughtStarted,
    ToolsDeclared,
)
from react_cli.loop.text.parser import ignored_text, parse_step
from react_cli.methods.events import MethodFinished, SamplingFinished, SamplingStarted
from react_cli.methods.results import Outcome, SampleSet, path
from react_cli.tools.base import ToolSpec
from react_cli.tools.wikipedia import PAPER_TOOLS, WIKI_CACHED

# An escape sequence cut off at the end of a streamed chunk (CSI or OSC so far).
_UNFINISHED_ESCAPE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*|\][^\x07\x1b]*\x1b?)?\Z")
MAX_HELD_ESCAPE = 256


# A label the model echoed after the one we printed ("Thought 1: Thought 1: I need ...").
_ECHOED_LABEL = re.compile(
    r"\s*[*_]*(?P<word>thought|action)[ \t*_]*(?:\d+[ \t*_]*)?[:：][*_]*", re.IGNORECASE
)
ECHO_WINDOW = 24  # characters held at the start of a reply until an echoed label is ruled out
MIN_WRAP_WIDTH = 20


def step_meta(step: Step) -> str:
    """What a step cost and how it went, on one line: ``model 0.52 s · tool 0.10 s · 1,657 tokens``.

    The terminal shows it after each step, the exported pages too.
    """
    if step.reply_step is not None:  # its call came in an earlier step's reply
        parts = [f"the reply of step {step.reply_step}"]
    else:
        parts = [f"model {format_seconds(step.latency_s)}"]
    if step.tool_latency_s:
        parts.append(f"tool {format_seconds(step.tool_latency_s)}")
    if step.usage.total_tokens:
        parts.append(token_text(step.usage))
    if step.cached:
        parts.append("cached")
    if step.details.get(WIKI_CACHED) is True:
        parts.append("Wikipedia cached")
    if step.retries:
        parts.append(plural(step.retries, "retry", "retries"))
    if step.tool_retries:
        parts.append(plural(step.tool_retries, "tool retry", "tool retries"))
    if step.failed(ErrorKind.PARSE):
        parts.append("no valid action")
    elif step.failed(ErrorKind.MODEL):
        parts.append("failed")
    if step.max_tokens_reached:
        parts.append("stopped at max_tokens")
    if step.forced:
        parts.append("forced answer")
    return " · ".join(parts)


class Renderer:
    """An observer that prints Thought/Action/Observation as they happen (or as recorded, for
    replay).

    Model text streams as it arrives, except what the loop may not keep: after the first line
    of a reply, lines are held until an action line completes, and what the loop ignores (text
    after the action's line, or every line after the first when there is no action) is shown
    dimmed as ``(ignored)`` once the reply ends, never as if it were a step. With ``live``, the
    command prints the run's failure itself, so it is not repeated here.
    """

    def __init__(
        self, console: Console, *, live: bool = False, prices: Prices | None = None
    ) -> None:
        self.console = console
        self.live = live
        self.prices = prices  # with them, the run's cost ends the summary line
        self._specs: tuple[ToolSpec, ...] = PAPER_TOOLS  # what the model's actions may name
        self._line_open = False
        self._after_label = False
        self._held = ""  # an escape sequence split across streamed chunks, until it completes
        self._label_word = ""
        self._thought_call = False
        self._index = 0  # the step whose reply streams
        self._text = ""  # the current reply so far
        self._shown = 0  # how much of it is printed (or skipped as an echoed label)
        self._scanned = 0  # how much of it was parsed line by line
        self._echo_checked = False
        self._first_line_done = False
        self._action_seen = False
        self._all_thought = False  # the reply is all thought: its action comes apart
        self._deferred: Text | None = None  # a label printed with the reply's first text

    def _label(self, label: str, style: str, *, deferred: bool = False) -> None:
        self._end_reply()
        self._end_line()
        self._deferred = Text(label, style=style) if deferred else None
        if not deferred:
            self.console.print(Text(label, style=style), end=" ")
        self._line_open, self._after_label = not deferred, True
        self._label_word = label.split()[0].lower()
        self._text, self._shown, self._scanned, self._echo_checked = "", 0, 0, False
        self._first_line_done = self._action_seen = False

    def _end_line(self) -> None:
        held, self._held = self._held, ""
        self._show(held)
        if self._line_open:
            self.console.print()
            self._line_open = False

    def notify(self, event: Event) -> None:
        match event:
            case RunStarted(question):
                self.console.print(Text.assemble(("Question: ", "bold"), plain(question)))
            case ToolsDeclared(specs):
                self._specs = specs
            case EarlierShown(shown, given):
                said = f"given {plural(shown, 'earlier question')} of this conversation"
                if shown < given:
                    said += f"; {plural(given - shown, 'older one')} past max_history_tokens"
                self.console.print(Text(f"({said})", style="dim"))
            case StepStarted(index):
                self._step_started(index)
            case ThoughtStarted(index):  # a reply of calls alone shows no "Thought k:"
                self._label(f"Thought {index}:", "bold cyan", deferred=True)
                self._thought_call, self._index, self._all_thought = True, index, True
            case ActionRequested(index):
                self._action_requested(index)
            case ActionChosen(index, action):
                self._action_chosen(index, action)
            case ModelText(text):
                self._model_text(text)
            case ModelDone():
                self._end_reply()
            case StepFinished(step):
                self._step_finished(step)
            case RunFinished(run):
                self._finished(run, None)
            case SamplingStarted(kind, n, temperature):
                self._sampling_started(kind, n, temperature)
            case SamplingFinished(result):
                self._sampling_finished(result)
            case MethodFinished(outcome, run):
                self._method_finished(outcome, run)

    def _step_started(self, index: int) -> None:
        self._label(f"Thought {index}:", "bold cyan")
        self._thought_call, self._index, self._all_thought = True, index, False

    def _action_requested(self, index: int) -> None:
        self._label(f"Action {index}:", "bold magenta")
        self._thought_call, self._index, self._all_thought = False, index, False

    def _action_chosen(self, index: int, action: str) -> None:
        """A complete action (a native tool call), after its reply's text: on the line of an
        ``Action k:`` label still empty, else on a line of its own."""
        self._end_reply()
        on_label = self._line_open and self._after_label  # nothing printed after it since
        if not (on_label and self._label_word == "action" and self._index == index):
            self._action_requested(index)
        self._show(action)
        self._end_line()

    def warning(self, message: str) -> None:
        """A warning the run goes on after (the endpoint refused a grammar), on its own line."""
        self._end_line()
        self.console.print(Text(f"warning: {' '.join(plain(message).split())}", style="yellow"))

    def _model_text(self, text: str) -> None:
        self._text += text
        self._advance()

    def retry_waiting(self, wait: RetryWait) -> None:
        """A ``records.RetryObserver``: the wait on its own line, dimmed."""
        self._end_line()
        self.console.print(Text(plain(str(wait)), style="dim"))

    def _advance(self) -> None:
        """Print what is now certain to be kept: the first line as it streams, later lines
        once a line holding an action has completed (each line is parsed once)."""
        text = self._text
        if self._all_thought:  # nothing in it is an action: shown as it comes
            self._stream(text[self._shown :])
            self._shown = len(text)
            return
        if not self._echo_checked:
            head = text[self._shown :]
            if len(head) < ECHO_WINDOW and "\n" not in head:
                return
            self._skip_echoed_label()
        while not self._action_seen:
            newline = text.find("\n", self._scanned)
            if newline < 0:
                if not self._first_line_done:
                    self._stream(text[self._shown :])
                    self._shown = self._scanned = len(text)
                return
            line = text[text.rfind("\n", 0, newline) + 1 : newline]
            self._scanned = newline + 1
            self._action_seen = parse_step(line, self._specs).action_text is not None
            if self._action_seen or not self._first_line_done:
                self._stream(self._kept(self._shown, newline + 1))
                self._shown = newline + 1
                self._first_line_done = bool(line.strip()) or self._first_line_done

    def _kept(self, start: int, end: int) -> str:
        """The reply's text from ``start`` to ``end`` as shown. A label the model wrote at the
        start of a later line becomes ours, as the parser reads it: ``Thought N:`` is dropped
        (the thought goes on) and ``Action N:`` gets this step's number, so a reply holding
        ``Thought 2: …`` and ``Action 1: …`` in step 2 is not shown as two steps."""
        text, pieces, pos = self._text, [], start
        while pos < end:
            newline = text.find("\n", pos, end)
            stop = end if newline < 0 else newline + 1
            label = _ECHOED_LABEL.match(text, pos, stop) if text[pos - 1 : pos] == "\n" else None
            if label is None:
                pieces.append(text[pos:stop])
            elif label.group("word").lower() == "action":
                pieces.append(f"Action {self._index}: " + text[label.end() : stop].lstrip(" \t"))
            else:
                pieces.append(text[label.end() : stop].lstrip(" \t"))
            pos = stop
        return "".join(pieces)

    def _skip_echoed_label(self) -> None:
        self._echo_checked = True
        echo = _ECHOED_LABEL.match(self._text, self._shown)
        if echo and echo.group("word").lower() == self._label_word:
            self._shown = echo.end()

    def _end_reply(self) -> None:
        """The reply is complete: print the rest of what is kept, then what is ignored."""
        if not self._text:
            return
        if self._all_thought:
            self._stream(self._text[self._shown :])
            self._text, self._shown, self._scanned = "", 0, 0
            return
        if not self._echo_checked:
            self._skip_echoed_label()
        ignored = ignored_text(self._text, thought_call=self._thought_call, specs=self._specs)
        kept_end = max(self._shown, len(self._text) - len(ignored))
        self._stream(self._kept(self._shown, kept_end))
        tail = self._text[kept_end:].strip()
        self._text, self._shown, self._scanned = "", 0, 0
        if tail:
            self._end_line()
            self.console.print(
                Text.assemble(("(ignored) ", "dim italic"), (plain(tail), "dim")), soft_wrap=True
            )

    def _stream(self, text: str) -> None:
        text, self._held = self._held + text, ""
        unfinished = _UNFINISHED_ESCAPE.search(text)
        if unfinished and len(text) - unfinished.start() <= MAX_HELD_ESCAPE:
            text, self._held = text[: unfinished.start()], text[unfinished.start() :]
        self._show(text)

    def _show(self, text: str) -> None:
        cleaned = plain(text)
        if self._after_label:
            cleaned = cleaned.lstrip()
        if cleaned:
            if self._deferred is not None:
                self.console.print(self._deferred, end=" ")
                self._deferred = None
            self.console.print(Text(cleaned), end="", soft_wrap=True)
            self._line_open = not cleaned.endswith("\n")
            self._after_label = False

    def _step_finished(self, step: Step) -> None:
        self._end_reply()
        self._end_line()
        if step.error is not None and step.failed(ErrorKind.MODEL):
            if not self.live:
                self._labelled(f"Error {step.index}: ", "bold red", step.error.message)
        elif step.observation:
            self._labelled(f"Observation {step.index}: ", "bold green", step.observation)
        self.console.print(Text(f"  ({step_meta(step)})", style="dim"))

    def _labelled(self, label: str, style: str, text: str) -> None:
        """``label`` and untrusted text; on a terminal wrapped at word boundaries with a
        hanging indent under the label (piped output stays one line)."""
        body = Text(plain(text))
        width = self.console.width - len(label)
        if not self.console.is_terminal or width < MIN_WRAP_WIDTH:
            self.console.print(Text.assemble((label, style), body))
            return
        lines = body.wrap(self.console, width)
        self.console.print(Text.assemble((label, style), lines[0]))
        for line in lines[1:]:
            self.console.print(Text.assemble(" " * len(label), line))

    def _sampling_started(self, kind: Method, n: int, temperature: float) -> None:
        """CoT-SC's samples are listed by their answers; one call's text streams as a step's."""
        if kind is not Method.COT_SC:
            self._label(f"{kind.label}:", "bold cyan")
            return
        self._end_reply()
        self._end_line()
        said = f"{kind.label}: {plural(n, 'sample')} at temperature {temperature:g}"
        self.console.print(Text(said, style="bold cyan"))

    def _sampling_finished(self, result: SampleSet) -> None:
        if result.kind is Method.COT_SC:
            for number, sample in enumerate(result.samples, start=1):
                said = "(no answer)" if sample.answer is None else plain(sample.answer)
                self.console.print(Text(f"  sample {number}: {said}", style="dim"))
        elif result.samples:
            self._model_text(result.samples[0].raw)
            self._end_reply()
        self._end_line()
        if result.error is not None and not self.live:
            self._labelled("Error: ", "bold red", result.error)
        parts = [f"model {format_seconds(result.duration_s)}", plural(result.calls, "call")]
        if result.usage.total_tokens:
            parts.append(token_text(result.usage))
        if result.samples and all(s.cached_usage is not None for s in result.samples):
            parts.append("cached")
        self.console.print(Text(f"  ({' · '.join(parts)})", style="dim"))

    def _method_finished(self, outcome: Outcome, run: Run) -> None:
        """CoT-SC's votes and the hybrid's path, then the answer and the whole run's cost."""
        self._end_reply()
        self._end_line()
        counted = outcome.vote
        if counted is not None and counted.groups:
            votes = [f"{plain(group.answer)} {group.votes}" for group in counted.groups]
            if counted.samples > counted.voters:
                votes.append(f"no answer {counted.samples - counted.voters}")
            self.console.print(Text(f"votes: {' · '.join(votes)}", style="dim"))
        said = path(outcome)
        if said is not None:
            self.console.print(Text(plain(said), style="bold"))
        self._finished(run, None if outcome.method.loop else outcome.calls)

    def _finished(self, run: Run, calls: int | None) -> None:
        """The answer (or why there is none), then the run's figures; ``calls`` for methods
        whose calls are not one per step."""
        self._end_reply()
        self._end_line()
        if run.answer is not None:
            self.console.print(Text.assemble(("Answer: ", "bold"), plain(run.answer)))
        else:
            shown = self.live or bool(run.steps and run.steps[-1].error_text == run.error)
            reason = f": {plain(run.error)}" if run.error and not shown else ""
            self.console.print(
                Text(f"No answer ({plain(str(run.stop_reason))}){reason}", style="bold red")
            )
        parts = [f"stop: {plain(str(run.stop_reason))}"]
        if calls is None or run.steps:
            parts.append(plural(len(run.steps), "step"))
        if calls is not None:
            parts.append(plural(calls, "call"))
        if run.usage.total_tokens:
            parts.append(token_text(run.usage))
        saved = run.cached_usage
        if saved.total_tokens:
            parts.append(f"{token_text(saved)} cached")
        if self.prices is not None:
            parts.append(cost_text(self.prices.cost(run.usage)))
        parts.append(format_seconds(run.duration_s))
        self.console.print(Text(" · ".join(parts), style="dim"))
