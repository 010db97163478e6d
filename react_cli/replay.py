"""Replay saved traces: re-run them with the current code, fork them.

A trace is turned back into the loop's inputs. ``RecordedModel`` answers each model call with
the raw text the trace holds for that call, ``RecordedTools`` answers each Search/Lookup with the
recorded observation; both hand over to live ones when the recording runs out (a fork) or are
swapped for live ones (``--live-tools``). The loop itself is the unchanged ``Agent``, and the
recorded completions of the other methods are read again by today's answer reader and voted
on again, so a re-run shows exactly what today's code makes of yesterday's model output. A
re-run may ask for another method than the recorded one, when the trace holds what it needs
(a hybrid from a ReAct run with its samples).
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import NoReturn

from react_cli.deadline import Deadline
from react_cli.errors import LLMError, ReactCliError, TraceError, UsageError
from react_cli.methods.answers import read_answer
from react_cli.methods.memo import Memo, NotRecorded, SampleSet
from react_cli.methods.method import Method, Task
from react_cli.methods.observer import MethodObserver
from react_cli.methods.outcome import Outcome, answer
from react_cli.methods.record import MethodRecord, Sample, loop_calls
from react_cli.parser import Action, ActionKind, parse_action
from react_cli.records import Completion, Model, StopReason, TextSink, ToolResult, Tools, Usage
from react_cli.trace import Trace
from react_cli.trajectory import Run, Step
from react_cli.wording import quoted

# The cue a prompt ends with names the call: "Thought k:", "Action k:", or the forced
# "Action k: Finish[" of --force-answer.
_CALL = re.compile(r"(Thought|Action) (\d+):\s*(Finish\[)?$")


class ReplayExhausted(LLMError):
    """The current code asked the model for an output the trace does not hold."""


class ReplayMismatch(ReactCliError):
    """The current code called a tool the recorded run did not call at this point."""


class RecordedModel:
    """Plays the trace's raw outputs: step k's ``raw`` for the ``Thought k:`` call (Act's
    ``Action k:`` call) and its ``followup_raw`` for the extra ``Action k:`` call; asks
    ``live`` for anything not recorded.

    Without ``live``, the call at which the recorded run failed (endpoint error or Ctrl-C)
    fails the same way again; any other call the trace cannot answer raises ``ReplayExhausted``
    (``NotRecorded`` when the trace holds no run at all).
    """

    def __init__(self, run: Run, live: Model | None = None, *, thoughts: bool = True) -> None:
        self.live = live
        self.thoughts = thoughts
        self._steps = {step.index: step for step in run.steps}
        self._empty = not run.steps
        self._run = run
        self._failed_call: tuple[str, int] | None = None
        last = run.steps[-1] if run.steps else None
        if last is not None and run.stop_reason in (StopReason.LLM_ERROR, StopReason.INTERRUPTED):
            if last.raw:  # the step's text arrived, so its extra "Action k:" call failed
                self._failed_call = ("Action", last.index)
            else:  # the call that failed produced no text
                self._failed_call = ("Thought", last.index)
                del self._steps[last.index]

    def complete(
        self, prompt: str, stop: list[str], *, deadline: Deadline, on_text: TextSink | None = None
    ) -> Completion:
        match = _CALL.search(prompt)
        label, index = (match.group(1), int(match.group(2))) if match else ("", 0)
        first_call = label == "Thought" or bool(match and match.group(3)) or not self.thoughts
        step = self._steps.get(index)
        text = None if step is None else step.raw if first_call else step.followup_raw
        if step is None or text is None:
            if self.live is not None:
                return self.live.complete(prompt, stop, deadline=deadline, on_text=on_text)
            self._end_like_the_recording(label, index)
        if first_call:  # the step's cost is booked on its first call
            return Completion(text, step.usage, step.latency_s, step.retries)
        return Completion(text, Usage())

    def _end_like_the_recording(self, label: str, index: int) -> NoReturn:
        if (label, index) == self._failed_call:
            if self._run.stop_reason == StopReason.INTERRUPTED:
                raise KeyboardInterrupt
            raise LLMError(self._run.error or "the model endpoint failed")
        if self._empty:
            raise NotRecorded("the trace holds no ReAct or Act run")
        raise ReplayExhausted(f"the trace holds no model output for '{label} {index}:'")


class RecordedTools:
    """Answers Search/Lookup with the recorded observations, in order; once the current code
    asks for a call the recording does not hold, hands over to ``live`` (if any)."""

    def __init__(self, steps: list[Step], live: Tools | None = None) -> None:
        self.live = live
        self._queue: deque[tuple[Action, ToolResult]] = deque()
        for step in steps:
            action = parse_action(step.action or "") if step.error_text is None else None
            if action is not None and action.kind is not ActionKind.FINISH:
                error = None if step.error is None else step.error.message  # a tool's failure
                result = ToolResult(step.observation, dict(step.details), error=error)
                self._queue.append((action, result))
        self._played: list[Action] = []
        self._went_live = False

    def search(self, entity: str, *, deadline: Deadline) -> ToolResult:
        return self._call(Action(ActionKind.SEARCH, entity), deadline)

    def lookup(self, keyword: str, *, deadline: Deadline) -> ToolResult:
        return self._call(Action(ActionKind.LOOKUP, keyword), deadline)

    def _call(self, action: Action, deadline: Deadline) -> ToolResult:
        if not self._went_live and self._queue and self._queue[0][0] == action:
            self._played.append(action)
            return self._queue.popleft()[1]
        if self.live is None:
            raise ReplayMismatch(f"the recorded run made no {action} call here")
        if not self._went_live:
            self._went_live = True
            self._restore_live_state(action, deadline)
        return _tool(self.live, action.kind)(action.argument, deadline=deadline)

    def _restore_live_state(self, action: Action, deadline: Deadline) -> None:
        """A live Lookup reads the page of the last Search: replay those calls on ``live``."""
        assert self.live is not None
        if action.kind is not ActionKind.LOOKUP:
            return
        starts = [i for i, played in enumerate(self._played) if played.kind is ActionKind.SEARCH]
        for played in self._played[starts[-1] :] if starts else []:
            _tool(self.live, played.kind)(played.argument, deadline=deadline)


def _tool(tools: Tools, kind: ActionKind) -> Callable[..., ToolResult]:
    """The tool an action of ``kind`` calls (Search or Lookup)."""
    return tools.search if kind is ActionKind.SEARCH else tools.lookup


@dataclass(frozen=True)
class Difference:
    """One place where the re-run acted differently from the recording."""

    where: str
    recorded: str
    now: str

    def to_json(self) -> dict[str, str]:
        return {"where": self.where, "recorded": self.recorded, "now": self.now}


def rerun(
    trace: Trace,
    *,
    method: Method | None = None,
    tools: Tools | None = None,
    observer: MethodObserver | None = None,
) -> tuple[Outcome, Run]:
    """Answer the recorded question again by ``method`` (default: the recorded one) with
    today's code and the recorded stop rules (no time limit: nothing waits), on the recorded
    model outputs and completions and (unless ``tools`` is given) the recorded observations:
    the outcome and its whole run. Never touches the network itself. TraceError when the trace
    names a method this react-cli does not know (exit 1, as for any unreadable trace);
    UsageError when it does not hold what ``method`` needs."""
    run, record, config = trace.run, trace.record, trace.config
    recorded = record.method
    if not isinstance(recorded, Method):
        shown = quoted(recorded)
        raise TraceError(f"{trace.path}: this react-cli does not know the method {shown}")
    method = method or recorded
    loop = next((part for part in recorded.parts if part.loop), None)
    wanted = next((part for part in method.parts if part.loop), None)
    if run.steps and loop is not None and wanted not in (None, loop):
        raise UsageError(f"{trace.path} holds a {loop.label} run: it cannot re-run {method}")
    task = config.task if isinstance(config.task, Task) else Task.HOTPOTQA
    memo = Memo(
        run.question,
        prompts={wanted or Method.REACT: trace.template()},
        model=RecordedModel(run, thoughts=wanted is not Method.ACT),
        tools=lambda: tools or RecordedTools(run.steps),
        limits=replace(config.limits, timeout_s=None),
        hybrid_steps=config.hybrid_max_steps or task.hybrid_steps,
        observer=observer,
    )
    seeded = _recorded_samples(recorded, record, run)
    if seeded is not None:
        memo.seed(seeded)
    memo.plan([method])
    if observer is not None:
        observer.run_started(run.question)
    if not run.steps and not record.samples and run.stop_reason == StopReason.INTERRUPTED:
        outcome = Outcome(method, None, run.stop_reason, run.error, None)  # nothing was run
    else:
        outcome = answer(method, memo, task)
    now = outcome.whole_run(run.question)
    if method is not recorded and isinstance(outcome.failure, ReplayExhausted):
        raise UsageError(f"{trace.path} does not hold every step {method} needs: {outcome.failure}")
    if observer is not None:
        observer.method_finished(outcome, now)
    return outcome, now


def _recorded_samples(method: Method, record: MethodRecord, run: Run) -> SampleSet | None:
    """The trace's completions as its method read them, read again by today's reader."""
    kind = next((part for part in method.parts if not part.loop), None)
    if kind is None or not record.samples:
        return None
    samples = tuple(
        Sample(s.raw, read_answer(kind.prompt, s.raw), s.usage, s.latency_s, s.retries)
        for s in record.samples
    )
    calls = max(len(samples) and 1, record.calls - loop_calls(run))
    return SampleSet(kind, samples, calls, 0.0)


def _shown(value: str | None) -> str:
    return "(none)" if value is None else value


def compare_records(recorded: MethodRecord, now: MethodRecord) -> list[Difference]:
    """Differences in the method's branch and votes (the run is :func:`compare`'s)."""
    differences = []
    if recorded.branch != now.branch:
        branches = (recorded.branch, now.branch)
        differences.append(Difference("branch", *(_shown(b and str(b)) for b in branches)))
    if (recorded.votes or {}) != (now.votes or {}):
        votes = (recorded.votes or {}, now.votes or {})
        said = (", ".join(f"{a}: {n}" for a, n in v.items()) or "(none)" for v in votes)
        differences.append(Difference("votes", *said))
    return differences


def compare(recorded: Run, now: Run) -> list[Difference]:
    """Step-by-step differences in actions, tool observations, answer and stop reason."""
    differences: list[Difference] = []
    for k in range(max(len(recorded.steps), len(now.steps))):
        old = recorded.steps[k] if k < len(recorded.steps) else None
        new = now.steps[k] if k < len(now.steps) else None
        where = f"step {k + 1}"
        if old is None or new is None:
            differences.append(Difference(where, _describe(old), _describe(new)))
        elif (old.action, old.error_text) != (new.action, new.error_text):
            differences.append(Difference(f"{where} action", _describe(old), _describe(new)))
        elif old.error_text is None and old.observation != new.observation:
            differences.append(Difference(f"{where} observation", old.observation, new.observation))
    if recorded.answer != now.answer:
        differences.append(Difference("answer", _shown(recorded.answer), _shown(now.answer)))
    if recorded.stop_reason != now.stop_reason:
        differences.append(Difference("stop reason", _stop(recorded), _stop(now)))
    return differences


def _describe(step: Step | None) -> str:
    if step is None:
        return "(no such step)"
    action = _shown(step.action)
    return f"{action}  [{step.error_text}]" if step.error_text else action


def _stop(run: Run) -> str:
    return f"{run.stop_reason} ({run.error})" if run.error else str(run.stop_reason)
