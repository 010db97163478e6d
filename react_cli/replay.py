"""Replay saved traces: re-run them with the current code, fork them.

A trace is turned back into the loop's inputs. ``RecordedModel`` answers each model call with
the raw text the trace holds for that call, ``RecordedTools`` answers each Search/Lookup with the
recorded observation; both hand over to live ones when the recording runs out (a fork) or are
swapped for live ones (``--live-tools``). The loop itself is the unchanged ``Agent``, so a
re-run shows exactly what today's parser and stop rules make of yesterday's model output.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NoReturn

from react_cli.agent import Agent, RunObserver
from react_cli.deadline import Deadline
from react_cli.errors import LLMError, ReactCliError, UsageError
from react_cli.parser import Action, ActionKind, parse_action
from react_cli.records import Completion, Model, StopReason, TextSink, ToolResult, Tools, Usage
from react_cli.trace import Trace
from react_cli.trajectory import Run, Step

# The cue a prompt ends with names the call: "Thought k:", "Action k:", or the forced
# "Action k: Finish[" of --force-answer.
_CALL = re.compile(r"(Thought|Action) (\d+):\s*(Finish\[)?$")


class ReplayExhausted(LLMError):
    """The current code asked the model for an output the trace does not hold."""


class ReplayMismatch(ReactCliError):
    """The current code called a tool the recorded run did not call at this point."""


class RecordedModel:
    """Plays the trace's raw outputs: step k's ``raw`` for the ``Thought k:`` call and its
    ``followup_raw`` for the ``Action k:`` call; asks ``live`` for anything not recorded.

    Without ``live``, the call at which the recorded run failed (endpoint error or Ctrl-C)
    fails the same way again; any other call the trace cannot answer raises ``ReplayExhausted``.
    """

    def __init__(self, run: Run, live: Model | None = None) -> None:
        self.live = live
        self._steps = {step.index: step for step in run.steps}
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
        first_call = label == "Thought" or bool(match and match.group(3))
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


def rerun(trace: Trace, *, tools: Tools | None = None, observer: RunObserver | None = None) -> Run:
    """Run the recorded question again with today's loop and the recorded stop rules (no time
    limit: nothing waits), on the recorded model outputs and (unless ``tools`` is given) the
    recorded observations. Never touches the network itself."""
    run = trace.run
    if not run.steps and run.stop_reason == StopReason.INTERRUPTED:
        return run  # Ctrl-C before the first step: there is nothing to re-run
    agent = Agent(
        RecordedModel(run),
        tools or RecordedTools(run.steps),
        limits=replace(trace.config.limits, timeout_s=None),
        observer=observer,
    )
    return agent.run(trace.template().prefix(run.question), run.question)


def _shown(value: str | None) -> str:
    return "(none)" if value is None else value


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


@dataclass
class Fork:
    """``ask --from-trace T --from-step K``: steps 1..K-1 from T, then the live endpoint."""

    trace: Trace
    step: int

    @classmethod
    def open(cls, path: Path | None, step: int | None) -> Fork:
        if path is None or step is None:
            raise UsageError("a fork needs both --from-trace TRACE and --from-step K")
        trace = Trace.read(path)
        last = len(trace.run.steps) + 1
        if not 1 <= step <= last:
            raise UsageError(f"--from-step must be between 1 and {last} for {path}")
        return cls(trace, step)

    def _replayed(self) -> Run:
        run = self.trace.run
        return Run(
            question=run.question,
            answer=None,
            stop_reason=StopReason.FORKED,
            steps=run.steps[: self.step - 1],
            usage=Usage(),
            duration_s=0.0,
        )

    def model(self, live: Model) -> Model:
        return RecordedModel(self._replayed(), live)

    def tools(self, live: Tools) -> Tools:
        return RecordedTools(self._replayed().steps, live)

    def trace_extra(self) -> dict[str, Any]:
        """What the new trace records about its origin."""
        return {
            "forked_from": {"trace": str(self.trace.path), "id": self.trace.id, "step": self.step}
        }
