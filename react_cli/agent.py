"""The ReAct loop: prompt → model → parse → tool → observation, until Finish or a stop rule.

The model and the tools are injected (see ``records.Model`` / ``records.Tools``) and the loop
never prints: it reports progress to a ``RunObserver``. Every model mistake is recorded on its
step and the loop continues; only stop rules end a run. A run's time limit is a
``deadline.deadline_after`` block around the loop, so HTTP clients inside it respect it too.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any

from react_cli.deadline import deadline_after, time_left
from react_cli.errors import LLMError, ReactCliError
from react_cli.parser import VALID_ACTIONS_HINT, action_line_end, parse_step, strip_think
from react_cli.records import Completion, Model, ToolResult, Tools, Usage
from react_cli.retrycount import counting_retries
from react_cli.wording import plural

# The model must stop before writing the tool's answer; a base model that finished its step
# often goes on with a whole new few-shot example, so a new Question/Claim line stops it too.
STOP_SEQUENCES = ["\nObservation", "\nQuestion:", "\nClaim:"]
STOP_REASONS = (
    "finish",
    "max_steps",
    "repeated_action",
    "parse_errors",
    "llm_error",
    "token_budget",
    "timeout",
    "tool_errors",
    "interrupted",
)
TIME_SLACK_S = 0.1  # a request that failed this close to the deadline failed because of it
FORCED_CUE = "Finish["
MAX_TOKENS_REACHED = "max_tokens_reached"  # step detail: a reply stopped by max_tokens
_NON_SPACE = re.compile(r"\S")


@dataclass
class Step:
    """One Thought/Action/Observation round, with what it cost."""

    index: int
    thought: str = ""
    action: str | None = None
    observation: str = ""
    raw: str = ""
    followup_raw: str | None = None  # the extra "Action k:" call's output, when one was made
    usage: Usage = field(default_factory=Usage)
    latency_s: float = 0.0
    tool_latency_s: float = 0.0
    retries: int = 0  # model requests retried or re-issued
    tool_retries: int = 0  # Wikipedia requests retried
    error: str | None = None
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class RunResult:
    question: str
    answer: str | None
    stop_reason: str
    steps: list[Step]
    usage: Usage
    duration_s: float
    error: str | None = None
    failure: ReactCliError | None = None  # the endpoint error that ended the run, if one did

    @property
    def forced(self) -> bool:
        """Whether the answer came from ``--force-answer``'s extra call at the step limit."""
        return any(step.details.get("forced") for step in self.steps)


class RunObserver:
    """Receives progress from the loop; the default does nothing."""

    def run_started(self, question: str) -> None: ...

    def step_started(self, index: int) -> None: ...

    def action_requested(self, index: int) -> None:
        """The model gave no action, so the loop asks for it alone (as in the paper)."""

    def model_text(self, text: str) -> None: ...

    def model_done(self) -> None:
        """The model call that sent the text so far has returned (a tool may run next)."""

    def step_finished(self, step: Step) -> None: ...

    def run_finished(self, result: RunResult) -> None: ...


@dataclass(frozen=True)
class Limits:
    max_steps: int = 8
    max_parse_errors: int = 3
    max_repeats: int = 3
    max_total_tokens: int | None = None
    timeout_s: float | None = None
    max_tool_errors: int = 2
    force_answer: bool = False


def kept_text(text: str) -> str:
    """The part of a model output that goes back into the prompt: reasoning blocks removed,
    cut after the line holding the parsed action (later lines are unrequested extra steps)."""
    text = strip_think(text)
    end = action_line_end(text)
    return (text if end is None else text[:end]).rstrip()


def ignored_text(text: str, *, thought_call: bool) -> str:
    """The end of a model output the loop does not keep: what follows the action's line, or,
    for a ``Thought k:`` call without an action, what follows its first line (a base model's
    invented next step or ``Question:`` block, an echoed instruction). A suffix of ``text``;
    empty when everything is kept or ``<think>`` blocks make the split unclear."""
    stripped = strip_think(text)
    end = action_line_end(stripped)
    if end is None:
        first = _NON_SPACE.search(stripped)
        if not thought_call or first is None:
            return ""
        end = stripped.find("\n", first.start())
    tail = stripped[end:] if end >= 0 else ""
    return tail if tail.strip() and text.endswith(tail) else ""


def _first_line(text: str) -> str:
    return next((line for line in strip_think(text).split("\n") if line.strip()), "").rstrip()


class Agent:
    def __init__(
        self,
        model: Model,
        tools: Tools,
        limits: Limits | None = None,
        observer: RunObserver | None = None,
        clock: Any = time.monotonic,
    ) -> None:
        self.model = model
        self.tools = tools
        self.limits = limits or Limits()
        self.observer = observer or RunObserver()
        self.clock = clock
        self.prompts: list[str] = []  # every prompt sent, in order (for tests and debugging)
        self.budget_tokens = 0  # tokens counted against --max-total-tokens
        self._failure: LLMError | None = None

    def run(self, prompt: str, question: str) -> RunResult:
        """Run the loop from ``prompt`` (the template with the question filled in)."""
        started = self.clock()
        steps: list[Step] = []
        answer: str | None = None
        error: str | None = None
        stop_reason = "max_steps"
        self.observer.run_started(question)
        try:
            with deadline_after(self.limits.timeout_s):
                stop_reason, answer, error = self._loop(prompt, steps, started)
        except KeyboardInterrupt:
            stop_reason, error = "interrupted", "interrupted by the user"
        if stop_reason == "timeout":
            error = f"the time limit ({self.limits.timeout_s:g} s) was reached"
        elif stop_reason == "tool_errors":
            failed = self.limits.max_tool_errors
            calls = plural(failed, "failed tool call")
            error = f"{steps[-1].details['error']} ({calls} in a row)"
        result = RunResult(
            question=question,
            answer=answer,
            stop_reason=stop_reason,
            steps=steps,
            usage=sum((s.usage for s in steps), Usage()),
            duration_s=self.clock() - started,
            error=error,
            failure=self._failure,
        )
        self.observer.run_finished(result)
        return result

    def _loop(
        self, prompt: str, steps: list[Step], started: float
    ) -> tuple[str, str | None, str | None]:
        """Steps until a stop rule; returns the stop reason, the answer and the error."""
        limits = self.limits
        try:
            for index in range(1, limits.max_steps + 1):
                stop_reason = self._budget_exceeded(started)
                if stop_reason:
                    return stop_reason, None, None
                self.observer.step_started(index)
                step = Step(index=index)
                steps.append(step)
                prompt, final_answer = self._step(prompt, step)
                self.observer.step_finished(step)
                if final_answer is not None:
                    return "finish", final_answer, None
                stop_reason = self._stop_rule(steps)
                if stop_reason:
                    return stop_reason, None, None
            if limits.force_answer and not self._budget_exceeded(started):
                answer = self._forced_step(prompt, steps)
                if answer is not None:
                    return "finish", answer, None
            return "max_steps", None, None
        except LLMError as exc:
            self._failure = exc
            if steps:
                steps[-1].error = str(exc)
                self.observer.step_finished(steps[-1])
            return ("timeout" if self._out_of_time() else "llm_error"), None, str(exc)

    def _call(self, prompt: str, stop: list[str], step: Step) -> Completion:
        self.prompts.append(prompt)
        shown: list[str] = []

        def show(text: str) -> None:
            shown.append(text)
            self.observer.model_text(text)

        started = self.clock()
        try:
            completion = self.model.complete(prompt, stop, show)
        except LLMError:  # the failed call's time (retries included) is the step's too
            step.latency_s += self.clock() - started
            raise
        if not shown and completion.text:  # a non-streaming model: show the text at once
            self.observer.model_text(completion.text)
        self.observer.model_done()
        # Some servers report no usage (e.g. when streaming): an estimate, marked as one.
        usage = completion.usage or Usage.estimate(prompt, completion.text)
        step.usage = step.usage + usage
        self.budget_tokens += usage.total_tokens
        step.latency_s += completion.latency_s
        step.retries += completion.retries
        return completion

    def _step(self, prompt: str, step: Step) -> tuple[str, str | None]:
        """One round; returns the grown prompt and the answer if the model finished."""
        k = step.index
        prompt += f"Thought {k}:"
        completion = self._call(prompt, STOP_SEQUENCES, step)
        step.raw = completion.text
        parsed = parse_step(step.raw)
        self._note_length_stop(completion, parsed.action_text, step)
        step.thought = parsed.thought
        action, action_text = parsed.action, parsed.action_text
        if action_text is not None:
            prompt += kept_text(step.raw)
        else:
            # As in the paper: keep the thought, then ask for the action alone.
            prompt += f"{_first_line(step.raw)}\nAction {k}:"
            self.observer.action_requested(k)
            completion = self._call(prompt, ["\n"], step)
            step.followup_raw = completion.text
            followup = parse_step(step.followup_raw)
            self._note_length_stop(completion, followup.action_text, step)
            action, action_text = followup.action, followup.action_text
            prompt += kept_text(step.followup_raw)
        step.action = action_text or None
        if action is None:
            step.error = "parse_error"
            step.observation = VALID_ACTIONS_HINT
        elif action.kind == "finish":
            return prompt, action.argument
        else:
            step.observation = self._run_tool(action.kind, action.argument, step)
        prompt += f"\nObservation {k}: {step.observation}\n"
        return prompt, None

    @staticmethod
    def _note_length_stop(completion: Completion, action_text: str | None, step: Step) -> None:
        """A reply cut by ``max_tokens`` before its action is recorded on the step (the caller
        warns: a cut thought costs an extra call and often the action)."""
        if completion.finish_reason == "length" and action_text is None:
            step.details[MAX_TOKENS_REACHED] = True

    def _forced_step(self, prompt: str, steps: list[Step]) -> str | None:
        """At the step limit, ask once for ``Finish[`` and return the answer, if any.

        The prompt ends with the last observation; ``Action k: Finish[`` is appended and the
        model's continuation up to the end of the line is the answer.
        """
        step = Step(index=len(steps) + 1, details={"forced": True})
        steps.append(step)
        self.observer.action_requested(step.index)
        self.observer.model_text(FORCED_CUE)
        step.raw = self._call(f"{prompt}Action {step.index}: {FORCED_CUE}", ["\n"], step).text
        action = parse_step(step.raw).action  # the model may restate "Action k: Finish[x]"
        if action is None or action.kind != "finish":
            line = strip_think(step.raw).split("\n")[0]
            action = parse_step(FORCED_CUE + line + ("" if "]" in line else "]")).action
        if action is None or action.kind != "finish" or not action.argument:
            step.error = "parse_error"
            self.observer.step_finished(step)
            return None
        step.action = str(action)
        self.observer.step_finished(step)
        return action.argument

    def _run_tool(self, kind: str, argument: str, step: Step) -> str:
        started = self.clock()
        with counting_retries() as retried:
            try:
                result: ToolResult = (
                    self.tools.search(argument) if kind == "search" else self.tools.lookup(argument)
                )
            except ReactCliError as exc:  # tools should not raise; a crash must not end the run
                result = ToolResult(f"The {kind} tool failed: {exc}", {"error": str(exc)})
        step.tool_latency_s = self.clock() - started
        step.tool_retries = retried[0]
        step.details.update(result.details)
        return " ".join(result.observation.split())

    def _stop_rule(self, steps: list[Step]) -> str | None:
        limits = self.limits
        recent = steps[-limits.max_parse_errors :]
        if len(recent) == limits.max_parse_errors and all(s.error == "parse_error" for s in recent):
            return "parse_errors"
        actions = {
            s.action.casefold() if s.action and s.error is None else None
            for s in steps[-limits.max_repeats :]
        }
        if len(steps) >= limits.max_repeats and len(actions) == 1 and None not in actions:
            return "repeated_action"
        recent = steps[-limits.max_tool_errors :]
        if len(recent) == limits.max_tool_errors and all("error" in s.details for s in recent):
            return "tool_errors"
        return None

    def _budget_exceeded(self, started: float) -> str | None:
        limits = self.limits
        if limits.max_total_tokens is not None and self.budget_tokens >= limits.max_total_tokens:
            return "token_budget"
        if limits.timeout_s is not None and self.clock() - started >= limits.timeout_s:
            return "timeout"
        return None

    def _out_of_time(self) -> bool:
        """Inside the run's deadline block: whether (almost) no time is left."""
        left = time_left()
        return left is not None and left < TIME_SLACK_S
