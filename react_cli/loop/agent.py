"""The loop, the same for every protocol: ask the protocol for a turn, run the action's tool,
record the step, apply the stop rules; until Finish or a stop rule.

The model, the protocol, the tools and the observer are injected, and the loop never prints.
Every model mistake is recorded on its step and the loop goes on; only stop rules end a run.
A run's time limit is a ``Deadline`` the loop hands to each model and tool call, which respect
it in every request they make.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from react_cli.core.conversation import Earlier
from react_cli.core.errors import LLMError, ReactCliError
from react_cli.core.records import StopReason, ToolCall, Usage
from react_cli.core.trajectory import PARSE_FAILURE, ErrorKind, Run, Step, StepError
from react_cli.core.wording import plural
from react_cli.infra.deadline import Deadline
from react_cli.llm.base import Completion, Model, ModelRequest
from react_cli.loop.events import (
    EarlierShown,
    Event,
    Ignore,
    ModelCalled,
    ModelDone,
    ModelText,
    Observer,
    RunFinished,
    RunStarted,
    StepFinished,
    ToolCalled,
    ToolsDeclared,
)
from react_cli.loop.limits import Limits
from react_cli.loop.prompts import PromptTemplate
from react_cli.loop.protocol import NO_EARLIER, Exchange, Protocol, Transcript
from react_cli.tools.base import FINISH, ToolResult, ToolSet

TIME_SLACK_S = 0.1  # a request that failed this close to the deadline failed because of it
Ending = tuple[StopReason, str | None, str | None]  # stop reason, answer, error


class Agent:
    """What every run of the loop shares: model, protocol, stop rules, observer and clock."""

    def __init__(
        self,
        model: Model,
        protocol: Protocol,
        limits: Limits | None = None,
        observer: Observer | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.model = model
        self.protocol = protocol
        self.limits = limits or Limits()
        self.observer = observer or Ignore()
        self.clock = clock

    def run(
        self,
        template: PromptTemplate,
        question: str,
        tools: ToolSet,
        deadline: Deadline | None = None,
        earlier: Earlier = NO_EARLIER,
    ) -> Run:
        """Answer ``question`` from ``template`` with ``tools`` (the run's own: they may keep
        state); a run that is part of a longer one (a hybrid method) gets its ``deadline``, a
        follow-up question of a conversation the ``earlier`` turns."""
        return _Running(self, tools, deadline).run(template, question, earlier)


class _Running(Exchange):
    """One run in progress: its transcript, steps, the tokens counted against
    ``--max-total-tokens``, its deadline, and the endpoint error that ended it; nothing of it
    outlives the run."""

    def __init__(self, agent: Agent, tools: ToolSet, deadline: Deadline | None) -> None:
        self.agent, self.tools = agent, tools
        self.model, self.limits, self.clock = agent.model, agent.limits, agent.clock
        self.observer = agent.observer
        self.started = self.clock()
        self.deadline = deadline or Deadline.after(self.limits.timeout_s)
        self.steps: list[Step] = []
        self.spent = Usage()  # what the run's calls cost, against its budgets
        self.seen: set[str] = set()  # observations shown so far
        self.stale = 0  # observations in a row that brought nothing new
        self.failure: LLMError | None = None

    def tell(self, event: Event) -> None:
        self.observer.notify(event)

    def run(self, template: PromptTemplate, question: str, earlier: Earlier) -> Run:
        self.tell(RunStarted(question))
        self.tell(ToolsDeclared(self.tools.specs))
        transcript = self.agent.protocol.start(template, question, self.tools, earlier)
        if earlier.turns:
            self.tell(EarlierShown(len(transcript.earlier), len(earlier.turns)))
        try:
            stop_reason, answer, error = self._loop(transcript)
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
        self.tell(RunFinished(run))
        return run

    def _loop(self, transcript: Transcript) -> Ending:
        """Steps until a stop rule."""
        try:
            for index in range(1, self.limits.max_steps + 1):
                stop_reason = self._budget_exceeded()
                if stop_reason:
                    return stop_reason, None, None
                step = Step(index=index)
                self.steps.append(step)
                final_answer = self._step(transcript, step)
                self.tell(StepFinished(step))
                if final_answer is not None:
                    return StopReason.FINISH, final_answer, None
                stop_reason = self._stop_rule()
                if stop_reason:
                    return stop_reason, None, None
            if self.limits.force_answer and not self._budget_exceeded():
                answer = self._forced_step(transcript)
                if answer is not None:
                    return StopReason.FINISH, answer, None
            return StopReason.MAX_STEPS, None, None
        except LLMError as exc:
            self.failure = exc
            if self.steps:
                self.steps[-1].error = StepError(ErrorKind.MODEL, str(exc))
                self.tell(StepFinished(self.steps[-1]))
            late = self.deadline.within(TIME_SLACK_S)
            return (StopReason.TIMEOUT if late else StopReason.LLM_ERROR), None, str(exc)

    def ask(self, request: ModelRequest, step: Step) -> Completion:
        streamed = False

        def show(text: str) -> None:
            nonlocal streamed
            streamed = True
            self.tell(ModelText(text))

        started = self.clock()
        try:
            completion = self.model.complete(request, deadline=self.deadline, on_text=show)
        except LLMError as exc:  # the failed call's time and retries are the step's too
            seconds = self.clock() - started
            step.latency_s += seconds
            step.retries += exc.retries
            self.tell(ModelCalled(request, None, Usage(), seconds, str(exc)))
            raise
        if not streamed and completion.text:  # a non-streaming model: show the text at once
            self.tell(ModelText(completion.text))
        self.tell(ModelDone())
        # Some servers report no usage (e.g. when streaming): an estimate, marked as one.
        usage = completion.usage or Usage.estimate(request.sent_text(), completion.output_text())
        step.usage = step.usage + usage
        self.spent = self.spent + usage
        step.latency_s += completion.latency_s
        step.retries += completion.retries
        if completion.cached:
            step.cached = True
            step.cached_usage = step.cached_usage + (completion.cached_usage or Usage())
        self.tell(ModelCalled(request, completion, usage, completion.latency_s))
        return completion

    def _step(self, transcript: Transcript, step: Step) -> str | None:
        """One round; the answer if the model finished."""
        transcript.turn(step, self)
        call = step.call
        nothing_new = True
        if call is None:
            step.error = PARSE_FAILURE
            step.observation = transcript.invalid_action
        elif call.name == FINISH.name:
            return call.argument
        else:
            step.observation, nothing_new = self._run_tool(call, step)
        self._count_progress(step.observation, nothing_new)
        transcript.observe(step)
        return None

    def _count_progress(self, observation: str, nothing_new: bool) -> None:
        """Count an observation that brought nothing new: the tool says so, or the run was
        shown the very same before (an invalid action's hint, a repeated Lookup)."""
        repeated = observation in self.seen
        self.seen.add(observation)
        self.stale = self.stale + 1 if nothing_new or repeated else 0

    def _forced_step(self, transcript: Transcript) -> str | None:
        """At the step limit, ask once for the final answer and return it, if any."""
        step = Step(index=len(self.steps) + 1, forced=True)
        self.steps.append(step)
        transcript.force_answer(step, self)
        if step.call is None:
            step.error = PARSE_FAILURE
        self.tell(StepFinished(step))
        return None if step.call is None else step.call.argument

    def _run_tool(self, call: ToolCall, step: Step) -> tuple[str, bool]:
        """The call's observation, and whether it brought nothing new."""
        started = self.clock()
        tool = self.tools.get(call.name)
        if tool is None:  # a protocol only calls the set's tools: a bug, said as a tool error
            result = ToolResult(f"There is no tool {call.name}.", error=f"no tool {call.name}")
        else:
            try:
                result = tool.call(call.argument, deadline=self.deadline)
            except ReactCliError as exc:  # tools should not raise; a crash must not end the run
                result = ToolResult(f"The {call.name} tool failed: {exc}", error=str(exc))
        step.tool_latency_s = self.clock() - started
        step.tool_retries = result.retries
        self.tell(ToolCalled(call, result, step.tool_latency_s))
        step.details.update(result.details)
        step.source = result.source
        if result.error is not None:
            step.error = StepError(ErrorKind.TOOL, result.error)
        return " ".join(result.observation.split()), result.nothing_new

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
        if limits.max_no_progress is not None and self.stale >= limits.max_no_progress:
            return StopReason.NO_PROGRESS
        return None

    def _budget_exceeded(self) -> StopReason | None:
        limits = self.limits
        spent = limits.spent(self.spent)
        if spent is not None:
            return spent
        if limits.timeout_s is not None and self.clock() - self.started >= limits.timeout_s:
            return StopReason.TIMEOUT
        if self.deadline.within(0.0):  # a longer run's deadline, passed before this run's
            return StopReason.TIMEOUT
        return None
