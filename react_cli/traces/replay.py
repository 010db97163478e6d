"""Replay saved traces: re-run them with the current code, fork them.

A trace is turned back into a session's inputs. ``RecordedModel`` answers each model call with
the raw text (and, for native tool calls, the assistant message and its calls) the trace holds
for that call, found by the call's identity (its step and kind),
and ``recorded_tools`` answers each tool call with the recorded observation; both hand over to
live ones when the recording runs out (a fork) or are swapped for live ones (``--live-tools``).
The loop itself is the unchanged one, and the recorded completions of the other methods are
read again by today's answer reader and voted on again, so a re-run shows exactly what today's
code makes of yesterday's model output. A re-run may ask for another method than the recorded
one, when the trace holds what it needs (a hybrid from a ReAct run with its samples). A
recorded failure (the endpoint failed, Ctrl-C, the time ran out) happens again where it
happened, for every method. A turn of a conversation is re-run with the earlier turns its
trace recorded it was given (and the state its tools carried), so its prompts are the ones
it was sent, offline.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import NoReturn

from react_cli.core.conversation import Earlier
from react_cli.core.errors import LLMError, ReactCliError, TraceError, UsageError
from react_cli.core.method import Method, Task
from react_cli.core.records import StopReason, ToolCall, Usage
from react_cli.core.sources import Revision
from react_cli.core.trajectory import ErrorKind, Run, Step
from react_cli.core.wording import quoted
from react_cli.infra.deadline import Deadline
from react_cli.llm.base import CallKind, Completion, Model, ModelRequest, TextSink
from react_cli.llm.toolcalls import calls_of
from react_cli.loop.events import Observer, RunStarted
from react_cli.loop.prompts import PromptSet
from react_cli.loop.protocol import NO_EARLIER
from react_cli.loop.registry import loop_protocols
from react_cli.loop.text.parser import parse_action
from react_cli.methods.answers import read_answer
from react_cli.methods.events import MethodFinished
from react_cli.methods.memo import NotRecorded
from react_cli.methods.outcome import answer
from react_cli.methods.record import MethodRecord, Sample, loop_calls
from react_cli.methods.results import Outcome, SampleSet
from react_cli.session import Session
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
    """Plays the trace's raw outputs by the call's identity: step k's ``raw`` for its step call
    (and for a forced answer), its ``followup_raw`` for the extra call for the action alone;
    asks ``live`` for anything not recorded.

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
            if last.raw or last.message is not None:  # the step's reply arrived, so its extra
                # call for the action failed
                self._failed_call = (CallKind.FOLLOWUP, last.index)
            else:  # the call that failed produced no text
                kind = CallKind.FORCED if last.forced else CallKind.STEP
                self._failed_call = (kind, last.index)
                del self._steps[last.index]

    def complete(
        self, request: ModelRequest, *, deadline: Deadline, on_text: TextSink | None = None
    ) -> Completion:
        first_call = request.kind is not CallKind.FOLLOWUP
        step = self._steps.get(request.step)
        text = None if step is None else step.raw if first_call else step.followup_raw
        if step is None or text is None:
            if self.live is not None:
                return self.live.complete(request, deadline=deadline, on_text=on_text)
            self._end_like_the_recording(request)
        message = step.message if first_call else step.followup_message
        calls = () if message is None else calls_of(message, MAX_RECORDED_CHARS)
        if first_call:  # the step's cost is booked on its first call
            return Completion(
                text, step.usage, step.latency_s, step.retries, tool_calls=calls, message=message
            )
        return Completion(text, Usage(), tool_calls=calls, message=message)

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

    def __init__(self, steps: list[Step], specs: tuple[ToolSpec, ...], live: ToolSet | None):
        self.live = live
        self.queue: deque[tuple[ToolCall, ToolResult]] = deque()
        for step in steps:
            call = recorded_call(step, specs)
            if call is not None and call.name != FINISH.name:
                error = None if step.error is None else step.error.message  # a tool's failure
                details = dict(step.details)
                result = ToolResult(step.observation, details, error=error, source=step.source)
                self.queue.append((call, result))
        self.played: list[ToolCall] = []
        self.went_live = False

    def call(self, call: ToolCall, deadline: Deadline) -> ToolResult:
        if not self.went_live and self.queue and _same(self.queue[0][0], call):
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


def _same(recorded: ToolCall, call: ToolCall) -> bool:
    return (recorded.name.casefold(), recorded.argument) == (call.name.casefold(), call.argument)


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


def recorded_call(step: Step, specs: tuple[ToolSpec, ...]) -> ToolCall | None:
    """The call a recorded step ran: as recorded, or (traces from before calls were recorded)
    its action read again; None for a step without a valid action."""
    if step.error_text is not None:
        return None
    return step.call or parse_action(step.action or "", specs)


def recorded_tools(
    steps: list[Step], specs: tuple[ToolSpec, ...], live: ToolSet | None = None
) -> ToolSet:
    """A tool set that answers the recorded calls of ``steps`` (in order), then ``live``."""
    recording = _Recording(steps, specs, live)
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
    tools: Callable[[], ToolSet] | None = None,
    observer: Observer | None = None,
) -> tuple[Outcome, Run]:
    """Answer the recorded question again by ``method`` (default: the recorded one) with
    today's code and the recorded stop rules (no time limit: nothing waits), on the recorded
    model outputs and completions and the recorded observations (or, with ``tools``, live
    tools such as ``--live-tools`` asks for): the
    outcome and its whole run. Never touches the network itself. TraceError when the trace
    names a method this react-cli does not know (exit 1, as for any unreadable trace);
    UsageError when it does not hold what ``method`` needs."""
    run, record = trace.run, trace.record
    recorded = record.method
    if not isinstance(recorded, Method):
        shown = quoted(recorded)
        raise TraceError(f"{trace.path}: this react-cli does not know the method {shown}")
    method = method or recorded
    loop = next((part for part in recorded.parts if part.loop), None)
    wanted = next((part for part in method.parts if part.loop), None)
    if run.steps and loop is not None and wanted not in (None, loop):
        raise UsageError(f"{trace.path} holds a {loop.label} run: it cannot re-run {method}")
    session = recorded_session(trace, wanted or Method.REACT, tools)
    memo = session.memo(run.question, observer, recorded_earlier(trace))
    seeded = _recorded_samples(recorded, record, run)
    if seeded is not None:
        memo.seed(seeded)
    memo.plan([method])
    if observer is not None:
        observer.notify(RunStarted(run.question))
    if not run.steps and not record.samples and run.stop_reason == StopReason.INTERRUPTED:
        outcome = Outcome(method, None, run.stop_reason, run.error, None)  # nothing was run
    else:
        outcome = answer(method, memo, session.task)
    now = outcome.whole_run(run.question)
    if method is not recorded and isinstance(outcome.failure, ReplayExhausted):
        raise UsageError(f"{trace.path} does not hold every step {method} needs: {outcome.failure}")
    if observer is not None:
        observer.notify(MethodFinished(outcome, now))
    return outcome, now


def recorded_earlier(trace: Trace) -> Earlier:
    """The earlier turns of its conversation a trace's run was given (none recorded: none)."""
    conversation = trace.conversation
    if conversation is None or conversation.earlier is None:
        return NO_EARLIER
    return conversation.earlier


def recorded_session(
    trace: Trace, loop: Method, live: Callable[[], ToolSet] | None = None
) -> Session:
    """A session that plays ``trace`` back: its model outputs, its tool calls (or ``live``
    tools), its prompt as the ``loop``'s, its stop rules."""
    run, config = trace.run, trace.config
    task = config.task if isinstance(config.task, Task) else Task.HOTPOTQA
    template = trace.template()
    specs = trace.tool_specs
    protocols = loop_protocols(trace.protocol, constrain=bool(config.constrain))

    def recorded() -> ToolSet:
        return recorded_tools(run.steps, specs)

    return Session(
        prompts=PromptSet(template, {loop: template}),
        model=RecordedModel(run),
        tools=live or recorded,
        limits=replace(config.limits, timeout_s=None),
        hybrid_steps=config.hybrid_max_steps or task.hybrid_steps,
        protocols=protocols,
    )


def _recorded_samples(method: Method, record: MethodRecord, run: Run) -> SampleSet | None:
    """The trace's completions as its method read them, read again by today's reader; or the
    failure that ended the method while it drew them (so a re-run fails there too)."""
    kind = next((part for part in method.parts if not part.loop), None)
    if kind is None:
        return None
    calls = max(0, record.calls - loop_calls(run))
    if not record.samples:
        loop_failed = bool(run.steps) and run.steps[-1].failed(ErrorKind.MODEL)
        if run.stop_reason not in FAILURES or loop_failed:  # the loop's call failed, not these
            return None
        if run.stop_reason == StopReason.INTERRUPTED:
            return SampleSet(kind, (), calls, 0.0, StopReason.INTERRUPTED, run.error)
        error = run.error or "the model endpoint failed"
        return SampleSet(kind, (), calls, 0.0, StopReason.LLM_ERROR, error, LLMError(error))
    samples = tuple(
        Sample(s.raw, read_answer(kind.prompt, s.raw), s.usage, s.latency_s, s.retries)
        for s in record.samples
    )
    return SampleSet(kind, samples, max(len(samples) and 1, calls), 0.0)


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


@dataclass(frozen=True)
class RevisionChange:
    """A page the re-run was shown at another revision than the recording: the usual reason a
    re-run on live tools differs."""

    wiki: str
    title: str
    recorded: Revision | None
    now: Revision | None

    def to_json(self) -> dict[str, object]:
        return {"wiki": self.wiki, "title": self.title, "recorded": self.recorded, "now": self.now}


def revision_changes(recorded: Run, now: Run) -> list[RevisionChange]:
    """The pages both runs were shown, each at the first revision its run saw, whose revisions
    differ; in the order the re-run saw them."""

    def first_seen(run: Run) -> dict[tuple[str, str], Revision | None]:
        seen: dict[tuple[str, str], Revision | None] = {}
        for step in run.steps:
            if step.source is not None:
                seen.setdefault((step.source.wiki.name, step.source.title), step.source.revision)
        return seen

    before = first_seen(recorded)
    return [
        RevisionChange(wiki, title, before[(wiki, title)], revision)
        for (wiki, title), revision in first_seen(now).items()
        if (wiki, title) in before and before[(wiki, title)] != revision
    ]


def _describe(step: Step | None) -> str:
    if step is None:
        return "(no such step)"
    action = _shown(step.action)
    return f"{action}  [{step.error_text}]" if step.error_text else action


def _stop(run: Run) -> str:
    return f"{run.stop_reason} ({run.error})" if run.error else str(run.stop_reason)
