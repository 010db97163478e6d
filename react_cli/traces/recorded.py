"""A trace's recording as a session's model and tools: what a re-run and a fork play back.

``RecordedModel`` answers each model call with the reply the trace holds for that call, found
by the call's identity (its step and kind): its text, and for native tool calls the assistant
message and its calls. ``recorded_tools`` answers each tool call with the recorded
observation, in the recorded order. Both hand over to live ones when the recording runs out
(a fork), and the tools are swapped for live ones for ``--live-tools`` (``live_tools_for``).
A recorded failure (the endpoint failed, Ctrl-C) happens again where it happened.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import NoReturn

from react_cli.core.errors import LLMError, ReactCliError, UsageError
from react_cli.core.records import StopReason, ToolCall, Usage
from react_cli.core.trajectory import ErrorKind, Run, Step
from react_cli.infra.deadline import Deadline
from react_cli.llm.base import CallKind, Completion, Model, ModelRequest, TextSink
from react_cli.llm.toolcalls import calls_of
from react_cli.methods.memo import NotRecorded
from react_cli.tools.base import FINISH, ToolResult, ToolSet, ToolSpec
from react_cli.tools.origin import OriginKind
from react_cli.traces.trace import Trace

FAILURES = frozenset({StopReason.LLM_ERROR, StopReason.INTERRUPTED})
"""How a recorded run may have ended in a model call, which a re-run fails the same way."""
MAX_RECORDED_CHARS = 1 << 24  # a recorded reply's call arguments (the trace is bounded)


class ReplayExhausted(LLMError):
    """The current code asked the model for an output the trace does not hold."""


class ReplayMismatch(ReactCliError):
    """The current code called a tool the recorded run did not call at this point."""


def _raise_recorded(run: Run) -> NoReturn:
    """End as the recorded run ended: Ctrl-C, or the endpoint's failure."""
    if run.stop_reason == StopReason.INTERRUPTED:
        raise KeyboardInterrupt
    raise LLMError(run.error or "the model endpoint failed")


class RecordedModel:
    """Plays the trace's replies by the call's identity: step k's first reply for its step
    call (and for a forced answer), its second for the extra call for the action alone; asks
    ``live`` for anything not recorded.

    Without ``live``, the call at which the recorded run failed (endpoint error or Ctrl-C)
    fails the same way again; any other call the trace cannot answer raises
    ``ReplayExhausted`` (``NotRecorded`` when the trace holds no run at all).
    """

    def __init__(self, run: Run, live: Model | None = None) -> None:
        self.live = live
        self._steps = {step.index: step for step in run.steps}
        self._empty = not run.steps
        self._run = run
        self._failed_call: tuple[CallKind, int] | None = None
        last = run.steps[-1] if run.steps else None
        if last is not None and run.stop_reason in FAILURES:
            if last.replies:  # the step's reply arrived, so its extra call for the action failed
                self._failed_call = (CallKind.FOLLOWUP, last.index)
            else:  # the call that failed produced no reply
                kind = CallKind.FORCED if last.forced else CallKind.STEP
                self._failed_call = (kind, last.index)

    def complete(
        self, request: ModelRequest, *, deadline: Deadline, on_text: TextSink | None = None
    ) -> Completion:
        position = 1 if request.kind is CallKind.FOLLOWUP else 0
        step = self._steps.get(request.step)
        if step is None or position >= len(step.replies):
            if self.live is not None:
                return self.live.complete(request, deadline=deadline, on_text=on_text)
            self._end_like_the_recording(request)
        reply = step.replies[position]
        calls = () if reply.message is None else calls_of(reply.message, MAX_RECORDED_CHARS)
        finish = "length" if reply.max_tokens_reached else None
        if position == 0:  # the step's cost is booked on its first call
            usage, latency_s, retries = step.usage, step.latency_s, step.retries
        else:
            usage, latency_s, retries = Usage(), 0.0, 0
        return Completion(reply.text, usage, latency_s, retries, finish, calls, reply.message)

    def _end_like_the_recording(self, request: ModelRequest) -> NoReturn:
        if (request.kind, request.step) == self._failed_call:
            _raise_recorded(self._run)
        if self._empty:
            raise NotRecorded("the trace holds no ReAct or Act run")
        raise ReplayExhausted(
            f"the trace holds no model output for the {request.kind} call of step {request.step}"
        )


class _Recording:
    """The recorded tool calls of a run, in order, shared by its recorded tools; once the
    current code makes a call the recording does not hold, every later call goes to ``live``
    (its state first brought to where the recording was)."""

    def __init__(self, steps: list[Step], live: ToolSet | None):
        self.live = live
        self.queue: deque[tuple[ToolCall, ToolResult]] = deque()
        for step in steps:
            if step.failed(ErrorKind.MODEL):
                continue
            for action in step.actions:
                call = action.call
                if call is not None and call.name != FINISH.name:
                    result = ToolResult(
                        action.observation,
                        dict(action.details),
                        error=action.error,
                        source=action.source,
                        refused=action.refused,
                    )
                    self.queue.append((call, result))
        self.played: list[ToolCall] = []
        self.went_live = False

    def call(self, call: ToolCall, deadline: Deadline) -> ToolResult:
        if not self.went_live and self.queue and self.queue[0][0].key == call.key:
            self.played.append(call)
            return self.queue.popleft()[1]
        if self.live is None:
            raise ReplayMismatch(f"the recorded run made no {call} call here")
        if not self.went_live:
            self.went_live = True
            self._restore_live_state(call, deadline)
        return _live_call(self.live, call, deadline)

    def _restore_live_state(self, call: ToolCall, deadline: Deadline) -> None:
        """Live tools that keep state (Lookup reads the page of the last Search) get the
        calls the recording made to the same family since its state was set: the played
        calls from the last one that was not a Lookup."""
        assert self.live is not None
        if call.name.casefold() != "lookup":
            return
        starts = [i for i, done in enumerate(self.played) if done.name.casefold() != "lookup"]
        for done in self.played[starts[-1] :] if starts else []:
            _live_call(self.live, done, deadline)


def _live_call(live: ToolSet, call: ToolCall, deadline: Deadline) -> ToolResult:
    tool = live.get(call.name)
    if tool is None:
        raise ReplayMismatch(f"no live tool answers {call}")
    return tool.call(call.argument, deadline=deadline)


@dataclass(frozen=True)
class _RecordedTool:
    spec: ToolSpec
    recording: _Recording

    def call(self, argument: str, *, deadline: Deadline) -> ToolResult:
        return self.recording.call(ToolCall(self.spec.name, argument), deadline)


def recorded_tools(
    steps: list[Step], specs: tuple[ToolSpec, ...], live: ToolSet | None = None
) -> ToolSet:
    """A tool set that answers the recorded calls of ``steps`` (in order), then ``live``."""
    recording = _Recording(steps, live)
    finish = FINISH.name.casefold()  # a recorded Finish is the built-in one, whatever it says
    return ToolSet([_RecordedTool(s, recording) for s in specs if s.name.casefold() != finish])


def live_tools_for(
    trace: Trace, live: Callable[[], ToolSet], warn: Callable[[str], None]
) -> Callable[[], ToolSet]:
    """A maker of tool sets holding the live tools that answer the trace's recorded ones, in
    the recorded order (the re-run's prompt lists what the recording's did); UsageError for a
    recorded tool no live one answers, saying how to turn it on. A trace's origins are only
    read: they name a file to give or a server to start, never run one. ``warn`` hears of a
    file whose text changed since the run."""
    specs = [spec for spec in trace.tool_specs if spec.name.casefold() != FINISH.name.casefold()]
    now = live()
    for spec in specs:
        tool = now.get(spec.name)
        if tool is None:
            raise UsageError(f"{trace.path}: {_how_to_turn_on(spec)}")
        recorded, current = spec.origin, tool.spec.origin
        if (
            recorded is not None
            and current is not None
            and recorded.kind is OriginKind.FILE
            and current.kind is OriginKind.FILE
            and recorded.sha256 != current.sha256
        ):
            warn(
                f"{current.path} changed since the run: its tool {tool.spec.name} "
                "may answer otherwise"
            )

    def tools() -> ToolSet:
        made = live()
        return ToolSet([tool for spec in specs if (tool := made.get(spec.name)) is not None])

    return tools


def _how_to_turn_on(spec: ToolSpec) -> str:
    """Which option gives a live ``spec`` (the recorded origin says where it came from)."""
    origin = spec.origin
    said = (
        f"its tool {spec.name} ({origin.describe() if origin else 'origin not recorded'}) is not on"
    )
    if origin is None:
        return said
    if origin.kind is OriginKind.FILE:
        return f"{said}: give --tools-from {origin.path}"
    if origin.kind is OriginKind.PACKAGE:
        return f"{said}: install {origin.package}"
    if origin.kind is OriginKind.MCP:
        return f"{said}: give --mcp with its server (a trace starts none by itself)"
    if origin.kind is OriginKind.BUILT_IN:
        return f"{said}: leave out --no-wiki"
    return said
