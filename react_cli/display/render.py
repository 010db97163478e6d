"""Human-readable output of a run: the verbose trajectory, live, replayed or paced, with the
completions, votes and path of the paper's other methods.

The renderer owns its console; the loop never prints. Untrusted text (model output, Wikipedia)
goes through ``terminal.plain`` and is printed as ``rich.text.Text``, so markup such as
``[bold]`` is shown literally and terminal control sequences never reach the terminal.
"""

from __future__ import annotations

import re

from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

from react_cli.core.method import Method
from react_cli.core.records import Prices, RetryWait
from react_cli.core.trajectory import Cue, ErrorKind, Run, Step, action_label, refusal_text
from react_cli.core.wording import cost_text, plural, prompt_cache_text, token_text
from react_cli.display.terminal import format_seconds, plain
from react_cli.display.wrap import HangingWrap
from react_cli.loop.events import (
    ActionChosen,
    EarlierShown,
    Event,
    ModelDone,
    ModelText,
    Observed,
    ReplyStarted,
    RunFinished,
    RunStarted,
    StepFinished,
    TextIgnored,
    ToolCalled,
)
from react_cli.methods.events import MethodFinished, SamplingFinished, SamplingStarted
from react_cli.methods.results import Outcome, SampleSet, path
from react_cli.tools.paper import WIKI_CACHED

# An escape sequence cut off at the end of a streamed chunk (CSI or OSC so far).
_UNFINISHED_ESCAPE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*|\][^\x07\x1b]*\x1b?)?\Z")
MAX_HELD_ESCAPE = 256


MIN_WRAP_WIDTH = 20
INDENT = "  "  # of each line of an observation of several lines
MAX_PRINTED_LINES = 20  # of what a tool printed, shown with -v


def step_meta(step: Step) -> str:
    """What a step cost and how it went, on one line: ``model 0.52 s · tool 0.10 s · 1,657 tokens``.

    The terminal shows it after each step, the exported pages too.
    """
    parts = [f"model {format_seconds(step.latency_s)}"]
    refused = [action.refused for action in step.actions if action.refused is not None]
    if refused:  # it needed consent: no tool ran
        parts.append(refusal_text(refused[0]))
    ran = sum(action.latency_s for action in step.actions if action.refused is None)
    if ran:
        parts.append(f"tool {format_seconds(ran)}")
    if step.usage.total_tokens:
        parts.append(token_text(step.usage))
    parts += filter(None, [prompt_cache_text(step.usage)])
    if step.cached:
        parts.append("cached")
    if any(action.details.get(WIKI_CACHED) is True for action in step.actions):
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
    replay), from the run's events alone: whatever the protocol, a reply's text is what its
    protocol showed of it, its actions and observations are told apart, and the text the loop
    ignored is shown dimmed as ``(ignored)``, never as if it were a step. With ``live``, the
    command prints the run's failure itself, so it is not repeated here.
    """

    def __init__(
        self, console: Console, *, live: bool = False, prices: Prices | None = None
    ) -> None:
        self.console = console
        self.live = live
        self.prices = prices  # with them, the run's cost ends the summary line
        self._line_open = False
        self._after_label = False  # nothing printed on the line since its label
        self._held = ""  # an escape sequence split across streamed chunks, until it completes
        self._label = ""  # the last label printed (or held back)
        self._deferred: Text | None = None  # a label printed with the reply's first text
        self._wrap = HangingWrap(console.width if console.is_terminal else None)
        self._wrapping = True  # not on an action's line

    def _start_label(self, label: str, style: str, *, deferred: bool = False) -> None:
        self._end_line()
        self._deferred = Text(label, style=style) if deferred else None
        if not deferred:
            self.console.print(Text(label, style=style), end=" ")
            self._wrap.label(cell_len(label) + 1)
        self._line_open, self._after_label, self._label = not deferred, True, label
        self._wrapping = not label.startswith("Action")  # an action stays whole, to paste

    def _end_line(self) -> None:
        held, self._held = self._held, ""
        self._show(held)
        rest = self._wrap.flush()
        if rest:
            self.console.print(Text(rest), end="", soft_wrap=True)
        if self._line_open:
            self.console.print()
            self._line_open = False
        self._deferred = None
        self._wrap.label(0)
        self._wrapping = True

    def notify(self, event: Event) -> None:
        match event:
            case RunStarted(question):
                self.console.print(Text.assemble(("Question: ", "bold"), plain(question)))
            case EarlierShown(shown, given):
                said = f"given {plural(shown, 'earlier question')} of this conversation"
                if shown < given:
                    said += f"; {plural(given - shown, 'older one')} past max_history_tokens"
                self.console.print(Text(f"({said})", style="dim"))
            case ReplyStarted(index, Cue.THOUGHT):  # shown with its first text, if any comes
                self._start_label(f"Thought {index}:", "bold cyan", deferred=True)
            case ReplyStarted(index):
                self._start_label(f"Action {index}:", "bold magenta")
            case ActionChosen(index, number, count, written):
                self._action_chosen(f"Action {action_label(index, number, count)}:", written)
            case ModelText(text):
                self._stream(text)
            case ModelDone():
                held, self._held = self._held, ""
                self._show(held)
            case TextIgnored(text):
                self._ignored(text)
            case ToolCalled(call, result) if result.printed.strip():
                self._printed(call.name, result.printed)
            case Observed(index, number, count, observation):
                label = f"Observation {action_label(index, number, count)}: "
                self._end_line()
                self._labelled(label, "bold green", observation)
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

    def _action_chosen(self, label: str, written: str) -> None:
        """An action, on the line of its ``Action k:`` label if that is still empty, else
        on a line of its own."""
        if not (self._line_open and self._after_label and self._label == label):
            self._start_label(label, "bold magenta")
        self._show(written)
        self._end_line()

    def _ignored(self, text: str) -> None:
        """The end of a reply the loop ignored, dimmed, on a line of its own."""
        self._end_line()
        self.console.print(
            Text.assemble(("(ignored) ", "dim italic"), (plain(text.strip()), "dim")),
            soft_wrap=True,
        )

    def pause(self) -> None:
        """End the line being printed: what comes next is not the run's (the consent
        question) and starts on a line of its own."""
        self._end_line()

    def warning(self, message: str) -> None:
        """A warning the run goes on after (the endpoint refused a grammar), on its own line."""
        self._end_line()
        self.console.print(Text(f"warning: {' '.join(plain(message).split())}", style="yellow"))

    def note(self, message: str) -> None:
        """Something learnt that changes how the run goes on (an endpoint that cuts streams),
        on its own line, dimmed: no failure."""
        self._end_line()
        self.console.print(Text(f"note: {' '.join(plain(message).split())}", style="dim"))

    def retry_waiting(self, wait: RetryWait) -> None:
        """A ``records.RetryObserver``: the wait on its own line, dimmed."""
        self._end_line()
        self.console.print(Text(plain(str(wait)), style="dim"))

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
                self._wrap.label(cell_len(self._deferred.plain) + 1)
                self._deferred, self._line_open = None, True
            shown = self._wrap.feed(cleaned) if self._wrapping else cleaned
            self.console.print(Text(shown), end="", soft_wrap=True)
            self._line_open = not cleaned.endswith("\n")
            self._after_label = False

    def _step_finished(self, step: Step) -> None:
        self._end_line()
        if step.error is not None and step.failed(ErrorKind.MODEL) and not self.live:
            self._labelled(f"Error {step.index}: ", "bold red", step.error.message)
        self.console.print(Text(f"  ({step_meta(step)})", style="dim"))

    def _printed(self, name: str, printed: str) -> None:
        """What a Python tool printed in its call, dimmed and cleaned, before its observation."""
        self._end_line()
        lines = [f"    {line}" for line in plain(printed).splitlines() if line.strip()]
        more = len(lines) - MAX_PRINTED_LINES
        shown = [f"  ({plain(name)} printed:)", *lines[:MAX_PRINTED_LINES]]
        shown += [f"    … ({plural(more, 'more line')})"] if more > 0 else []
        self.console.print(Text("\n".join(shown), style="dim"))

    def _labelled(self, label: str, style: str, text: str) -> None:
        """``label`` and untrusted text; on a terminal wrapped at word boundaries with a
        hanging indent under the label (piped output stays one line). Text of several lines
        (a tool's result) goes under the label, each line indented, as the text protocol's
        prompt has it."""
        cleaned = plain(text)
        if "\n" in cleaned:
            self.console.print(Text(label.rstrip(), style=style))
            for line in cleaned.split("\n"):
                if line:
                    self._labelled(INDENT, "", line)
                else:
                    self.console.print()
            return
        body = Text(cleaned)
        width = self.console.width - len(label)
        if not self.console.is_terminal or width < MIN_WRAP_WIDTH:
            self.console.print(Text.assemble((label, style), body))
            return
        lines = body.wrap(self.console, width)
        self.console.print(Text.assemble((label, style), lines[0]))
        for wrapped in lines[1:]:
            self.console.print(Text.assemble(" " * len(label), wrapped))

    def _sampling_started(self, kind: Method, n: int, temperature: float) -> None:
        """CoT-SC's samples are listed by their answers; one call's text streams as a step's."""
        if kind is not Method.COT_SC:
            self._start_label(f"{kind.label}:", "bold cyan")
            return
        self._end_line()
        said = f"{kind.label}: {plural(n, 'sample')} at temperature {temperature:g}"
        self.console.print(Text(said, style="bold cyan"))

    def _sampling_finished(self, result: SampleSet) -> None:
        if result.kind is Method.COT_SC:
            for number, sample in enumerate(result.samples, start=1):
                said = "(no answer)" if sample.answer is None else plain(sample.answer)
                self.console.print(Text(f"  sample {number}: {said}", style="dim"))
        elif result.samples:
            self._stream(result.samples[0].raw)
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
        if run.refused_calls:
            parts.append(plural(run.refused_calls, "refused tool call"))
        if run.usage.total_tokens:
            parts.append(token_text(run.usage))
        parts += filter(None, [prompt_cache_text(run.usage)])
        saved = run.cached_usage
        if saved.total_tokens:
            parts.append(f"{token_text(saved)} cached")
        if self.prices is not None:
            parts.append(cost_text(self.prices.cost(run.usage)))
        parts.append(format_seconds(run.duration_s))
        self.console.print(Text(" · ".join(parts), style="dim"))
