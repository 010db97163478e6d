"""The ReAct loop: prompt → model → parse → tool → observation, until Finish or a stop rule.

The model and the tools are injected (``records.Model`` / ``records.Tools``) and the loop never
prints: it reports progress to a ``RunObserver``. Every model mistake is recorded on its step
and the loop continues; only stop rules end a run. A run's time limit is a ``Deadline`` the
loop hands to each model and tool call, which respect it in every request they make. Without
thoughts (the paper's Act), each step asks for ``Action k:`` alone.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from react_cli.cutter import strip_think
from react_cli.deadline import Deadline
from react_cli.errors import LLMError, ReactCliError
from react_cli.parser import (
    VALID_ACTIONS_HINT,
    Action,
    ActionKind,
    first_line,
    kept_in_prompt,
    parse_step,
)
from react_cli.records import Completion, Model, StopReason, ToolResult, Tools, Usage
from react_cli.runconfig import Limits
from react_cli.trajectory import PARSE_FAILURE, ErrorKind, Run, Step, StepError
from react_cli.wording import plural

# The model must stop before writing the tool's answer; a base model that finished its step
# often goes on with a whole new few-shot example, so a new Question/Claim line stops it too.
STOP_SEQUENCES = ["\nObservation", "\nQuestion:", "\nClaim:"]
TIME_SLACK_S = 0.1  # a request that failed this close to the deadline failed because of it
FORCED_CUE = "Finish["
Ending = tuple[StopReason, str | None, str | None]  # stop reason, answer, error


class RunObserver:
    """Receives progress from the loop; the default does nothing."""

    def run_started(self, question: str) -> None: ...

    def step_started(self, index: int) -> None: ...

    def action_requested(self, index: int) -> None:
        """The loop asks for the action alone: the model gave none after its thought (as in
        the paper), or the run has no thoughts (Act); for Act this starts the step."""

    def model_text(self, text: str) -> None: ...

    def model_done(self) -> None:
        """The model call that sent the text so far has returned (a tool may run next)."""

    def step_finished(self, step: Step) -> None: ...

    def run_finished(self, run: Run) -> None: ...


class Agent:
    """What every run of the loop shares: model, tools, stop rules, observer and clock, and
    whether steps have thoughts (ReAct) or are actions alone (Act)."""

    def __init__(
        self,
        model: Model,
        tools: Tools,
        limits: Limits | None = None,
        observer: RunObserver | None = None,
        clock: Callable[[], float] = time.monotonic,
        *,
        thoughts: bool = True,
    ) -> None:
        self.model = model
        self.tools = tools
        self.limits = limits or Limits()
        self.observer = observer or RunObserver()
        self.clock = clock
        self.thoughts = thoughts

    def run(self, prompt: str, question: str, deadline: Deadline | None = None) -> Run:
        """Run the loop from ``prompt`` (the template with the question filled in); a run
        that is part of a longer one (a hybrid method) gets that one's ``deadline``."""
        return _Running(self, deadline).run(prompt, question)


class _Running:
    """One run in progress: its steps, the tokens counted against ``--max-total-tokens``, its
    deadline, and the endpoint error that ended it; nothing of it outlives the run."""

    def __init__(self, agent: Agent, deadline: Deadline | None) -> None:
        self.model, self.tools, self.limits = agent.model, agent.tools, agent.limits
        self.observer, self.clock, self.thoughts = agent.observer, agent.clock, agent.thoughts
        self.started = self.clock()
        self.deadline = deadline or Deadline.after(self.limits.timeout_s)
        self.steps: list[Step] = []
        self.budget_tokens = 0
        self.failure: LLMError | None = None

    def run(self, prompt: str, question: str) -> Run:
        self.observer.run_started(question)
        try:
            stop_reason, answer, error = self._loop(prompt)
        except KeyboardInterrupt:
            stop_reason, answer, error = StopReason.INTERRUPTED, None, "interrupted by the user"
        if stop_reason is StopReason.TIMEOUT:
            error = f"the time limit ({self.limits.timeout_s:g} s) was reached"
        elif stop_reason is StopReason.TOOL_ERRORS:
            calls = plural(self.limits.max_tool_errors, "failed tool call")
            last = self.steps[-1].error
            error = f"{last.message if last else 'the tool failed'} ({calls} in a row)"
        run = Run(
            question=question,
            answer=answer,
            stop_reason=stop_reason,
            steps=self.steps,
            usage=sum((s.usage for s in self.steps), Usage()),
            duration_s=self.clock() - self.started,
            error=error,
            failure=self.failure,
        )
        self.observer.run_finished(run)
        return run

    def _loop(self, prompt: str) -> Ending:
        """Steps until a stop rule."""
        try:
            for index in range(1, self.limits.max_steps + 1):
                stop_reason = self._budget_exceeded()
                if stop_reason:
                    return stop_reason, None, None
                if self.thoughts:
                    self.observer.step_started(index)
                else:
                    self.observer.action_requested(index)
                step = Step(index=index)
                self.steps.append(step)
                prompt, final_answer = self._step(prompt, step)
                self.observer.step_finished(step)
                if final_answer is not None:
                    return StopReason.FINISH, final_answer, None
                stop_reason = self._stop_rule()
                if stop_reason:
                    return stop_reason, None, None
            if self.limits.force_answer and not self._budget_exceeded():
                answer = self._forced_step(prompt)
                if answer is not None:
                    return StopReason.FINISH, answer, None
            return StopReason.MAX_STEPS, None, None
        except LLMError as exc:
            self.failure = exc
            if self.steps:
                self.steps[-1].error = StepError(ErrorKind.MODEL, str(exc))
                self.observer.step_finished(self.steps[-1])
            late = self.deadline.within(TIME_SLACK_S)
            return (StopReason.TIMEOUT if late else StopReason.LLM_ERROR), None, str(exc)

    def _call(self, prompt: str, stop: list[str], step: Step) -> Completion:
        streamed = False

        def show(text: str) -> None:
            nonlocal streamed
            streamed = True
            self.observer.model_text(text)

        started = self.clock()
        try:
            completion = self.model.complete(prompt, stop, deadline=self.deadline, on_text=show)
        except LLMError as exc:  # the failed call's time and retries are the step's too
            step.latency_s += self.clock() - started
            step.retries += exc.retries
            raise
        if not streamed and completion.text:  # a non-streaming model: show the text at once
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
        prompt += f"Thought {k}:" if self.thoughts else f"Action {k}:"
        completion = self._call(prompt, STOP_SEQUENCES, step)
        step.raw = completion.text
        parsed = parse_step(step.raw)
        _note_length_stop(completion, parsed.action_text, step)
        step.thought = parsed.thought if self.thoughts else ""
        action, action_text = parsed.action, parsed.action_text
        if action_text is not None:
            prompt += kept_in_prompt(step.raw)
        elif not self.thoughts:  # Act: this was the action call; like a failed "Action k:"
            prompt += first_line(step.raw)
        else:
            # As in the paper: keep the thought, then ask for the action alone.
            prompt += f"{first_line(step.raw)}\nAction {k}:"
            self.observer.action_requested(k)
            completion = self._call(prompt, ["\n"], step)
            step.followup_raw = completion.text
            followup = parse_step(step.followup_raw)
            _note_length_stop(completion, followup.action_text, step)
            action, action_text = followup.action, followup.action_text
            prompt += kept_in_prompt(step.followup_raw)
        step.action = action_text or None
        if action is None:
            step.error = PARSE_FAILURE
            step.observation = VALID_ACTIONS_HINT
        elif action.kind is ActionKind.FINISH:
            return prompt, action.argument
        else:
            step.observation = self._run_tool(action, step)
        prompt += f"\nObservation {k}: {step.observation}\n"
        return prompt, None

    def _forced_step(self, prompt: str) -> str | None:
        """At the step limit, ask once for ``Finish[`` and return the answer, if any.

        The prompt ends with the last observation; ``Action k: Finish[`` is appended and the
        model's continuation up to the end of the line is the answer.
        """
        step = Step(index=len(self.steps) + 1, forced=True)
        self.steps.append(step)
        self.observer.action_requested(step.index)
        self.observer.model_text(FORCED_CUE)
        step.raw = self._call(f"{prompt}Action {step.index}: {FORCED_CUE}", ["\n"], step).text
        action = parse_step(step.raw).action  # the model may restate "Action k: Finish[x]"
        if action is None or action.kind is not ActionKind.FINISH:
            line = strip_think(step.raw).split("\n")[0]
            action = parse_step(FORCED_CUE + line + ("" if "]" in line else "]")).action
        if action is None or action.kind is not ActionKind.FINISH or not action.argument:
            step.error = PARSE_FAILURE
            self.observer.step_finished(step)
            return None
        step.action = str(action)
        self.observer.step_finished(step)
        return action.argument

    def _run_tool(self, action: Action, step: Step) -> str:
        started = self.clock()
        call = self.tools.search if action.kind is ActionKind.SEARCH else self.tools.lookup
        try:
            result = call(action.argument, deadline=self.deadline)
        except ReactCliError as exc:  # tools should not raise; a crash must not end the run
            result = ToolResult(f"The {action.kind} tool failed: {exc}", error=str(exc))
        step.tool_latency_s = self.clock() - started
        step.tool_retries = result.retries
        step.details.update(result.details)
        if result.error is not None:
            step.error = StepError(ErrorKind.TOOL, result.error)
        return " ".join(result.observation.split())

    def _stop_rule(self) -> StopReason | None:
        limits, steps = self.limits, self.steps
        recent = steps[-limits.max_parse_errors :]
        if len(recent) == limits.max_parse_errors and all(
            s.failed(ErrorKind.PARSE) for s in recent
        ):
            return StopReason.PARSE_ERRORS
        actions = {
            s.action.casefold() if s.action and s.error_text is None else None
            for s in steps[-limits.max_repeats :]
        }
        if len(steps) >= limits.max_repeats and len(actions) == 1 and None not in actions:
            return StopReason.REPEATED_ACTION
        recent = steps[-limits.max_tool_errors :]
        if len(recent) == limits.max_tool_errors and all(s.failed(ErrorKind.TOOL) for s in recent):
            return StopReason.TOOL_ERRORS
        return None

    def _budget_exceeded(self) -> StopReason | None:
        limits = self.limits
        if limits.max_total_tokens is not None and self.budget_tokens >= limits.max_total_tokens:
            return StopReason.TOKEN_BUDGET
        if limits.timeout_s is not None and self.clock() - self.started >= limits.timeout_s:
            return StopReason.TIMEOUT
        if self.deadline.within(0.0):  # a longer run's deadline, passed before this run's
            return StopReason.TIMEOUT
        return None


def _note_length_stop(completion: Completion, action_text: str | None, step: Step) -> None:
    """A reply cut by ``max_tokens`` before its action is recorded on the step (the command
    warns: a cut thought costs an extra call and often the action)."""
    if completion.finish_reason == "length" and action_text is None:
        step.max_tokens_reached = True
