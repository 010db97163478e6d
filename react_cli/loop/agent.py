"""The loop, the same for every protocol: ask the protocol for a turn, run each action's tool,
record the step, apply the stop rules; until Finish or a stop rule.

A step's reply may ask for several actions (native calls): they run in order, a Finish among
them ends the run after those before it, and the rules that count actions in a row (the same
call again, failing tools, nothing new) count each of them.

The model, the protocol, the tools and the observer are injected, and the loop never prints.
Every model mistake is recorded on its step and the loop goes on; only stop rules end a run.
A run's time limit is a ``Deadline`` the loop hands to each model and tool call, which respect
it in every request they make.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from react_cli.core.conversation import Earlier
from react_cli.core.errors import LLMError, ReactCliError
from react_cli.core.records import StopReason, ToolCall, Usage
from react_cli.core.trajectory import (
    PARSE_FAILURE,
    Action,
    Cue,
    ErrorKind,
    Reply,
    Run,
    Step,
    StepError,
)
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
    ReplyStarted,
    RunFinished,
    RunStarted,
    StepFinished,
    ToolCalled,
    ToolsDeclared,
    observed,
    read_events,
)
from react_cli.loop.limits import Limits
from react_cli.loop.prompts import PromptTemplate
from react_cli.loop.protocol import (
    NO_EARLIER,
    Exchange,
    Protocol,
    ShowAll,
    Shown,
    ShowNothing,
    Transcript,
)
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
            last = self.steps[-1].actions[-1].error
            error = f"{last or 'the tool failed'} ({calls} in a row)"
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

    def ask(
        self, request: ModelRequest, step: Step, cue: Cue, shown: Shown | None = None
    ) -> Completion:
        if shown is None:  # by default a thought is shown whole as it streams, an action not
            shown = ShowAll() if cue is Cue.THOUGHT else ShowNothing()
        self.tell(ReplyStarted(step.index, cue))
        streamed = False

        def show(text: str) -> None:
            nonlocal streamed
            streamed = True
            piece = shown.feed(text)
            if piece:
                self.tell(ModelText(piece))

        started = self.clock()
        try:
            completion = self.model.complete(request, deadline=self.deadline, on_text=show)
        except LLMError as exc:  # the failed call's time and retries are the step's too
            seconds = self.clock() - started
            step.latency_s += seconds
            step.retries += exc.retries
            self.tell(ModelCalled(request, None, Usage(), seconds, str(exc)))
            raise
        if not streamed and completion.text:  # a non-streaming model: the text at once
            show(completion.text)
        rest = shown.end()
        if rest:
            self.tell(ModelText(rest))
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

    def replied(
        self,
        step: Step,
        reply: Reply,
        actions: Sequence[Action] | None = None,
        thought: str | None = None,
    ) -> None:
        step.replies.append(reply)
        if thought is not None:
            step.thought = thought
        if actions is not None:  # a Finish ends what the reply asked for: later calls never run
            finish = next(
                (n for n, a in enumerate(actions) if a.call and a.call.name == FINISH.name), None
            )
            step.actions = list(actions if finish is None else actions[: finish + 1])
        for event in read_events(step, reply, last=actions is not None):
            self.tell(event)

    def _step(self, transcript: Transcript, step: Step) -> str | None:
        """One round; the answer if the model finished."""
        transcript.turn(step, self)
        if not any(action.call is not None for action in step.actions):
            step.error = PARSE_FAILURE
        for position, action in enumerate(step.actions):
            call, nothing_new = action.call, True
            if call is not None and call.name == FINISH.name:
                return call.argument
            if call is not None:
                nothing_new = self._run_tool(call, action)
            self._count_progress(action.observation, nothing_new)
            told = observed(step, position)
            if told is not None:
                self.tell(told)
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
        call = step.actions[0].call if step.actions else None
        if call is None or call.name != FINISH.name:
            step.error, call = PARSE_FAILURE, None
        self.tell(StepFinished(step))
        return None if call is None else call.argument

    def _run_tool(self, call: ToolCall, action: Action) -> bool:
        """Run ``call`` and record what it gave on ``action``: whether it brought nothing new."""
        started = self.clock()
        tool = self.tools.get(call.name)
        if tool is None:  # a protocol only calls the set's tools: a bug, said as a tool error
            result = ToolResult(f"There is no tool {call.name}.", error=f"no tool {call.name}")
        else:
            try:
                result = tool.call(call.argument, deadline=self.deadline)
            except ReactCliError as exc:  # tools should not raise; a crash must not end the run
                result = ToolResult(f"The {call.name} tool failed: {exc}", error=str(exc))
        action.latency_s = max(0.0, self.clock() - started - result.asked_s)
        action.retries = result.retries
        self.tell(ToolCalled(call, result, action.latency_s))
        action.observation = result.observation.strip()  # lines kept (a file's, a diff's)
        action.details.update(result.details)
        action.source = result.source
        action.refused = result.refused  # it needed consent: nothing ran (not a tool's failure)
        action.error = result.error
        return result.nothing_new or bool(result.refused)

    def _stop_rule(self) -> StopReason | None:
        limits, steps = self.limits, self.steps
        recent = steps[-limits.max_parse_errors :]
        if len(recent) == limits.max_parse_errors and all(
            s.failed(ErrorKind.PARSE) for s in recent
        ):
            return StopReason.PARSE_ERRORS
        if repeated(steps, limits.max_repeats):
            return StopReason.REPEATED_ACTION
        if failing(steps, limits.max_tool_errors):
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


def _last_actions(steps: Sequence[Step], count: int) -> list[Action]:
    """The last ``count`` actions of ``steps``, in order (fewer if the run took fewer)."""
    found: list[Action] = []
    for step in reversed(steps):
        for action in reversed(step.actions):
            if len(found) == count:
                return found[::-1]
            found.append(action)
    return found[::-1]


def repeated(steps: Sequence[Step], times: int) -> bool:
    """Whether the run's last ``times`` actions are one call made again and again: the same
    tool with the same arguments (``ToolCall.key``), however the model wrote them. An action
    that could not be run breaks the row."""
    last = _last_actions(steps, times)
    keys = {action.call.key if action.call else None for action in last}
    return len(last) == times and len(keys) == 1 and None not in keys


def failing(steps: Sequence[Step], times: int) -> bool:
    """Whether the run's last ``times`` actions all failed in their tools."""
    last = _last_actions(steps, times)
    return len(last) == times and all(action.error is not None for action in last)
