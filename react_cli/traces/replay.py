"""Re-run saved traces with the current code.

A trace is turned back into a session's inputs (``traces.recorded``: its model's replies by
each call's identity, its tools' observations in order). The loop itself is the unchanged
one, and the recorded completions of the other methods are read again by today's answer
reader and voted on again, so a re-run shows exactly what today's code makes of yesterday's
model output. A re-run may ask for another method than the recorded one, when the trace holds
what it needs (a hybrid from a ReAct run with its samples). A recorded failure (the endpoint
failed, Ctrl-C, the time ran out) happens again where it happened, for every method. A turn
of a conversation is re-run with the earlier turns its trace recorded it was given (and the
state its tools carried), so its prompts are the ones it was sent, offline.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from react_cli.core.conversation import Earlier
from react_cli.core.errors import LLMError, TraceError, UsageError
from react_cli.core.method import Method, Task
from react_cli.core.records import StopReason
from react_cli.core.trajectory import ErrorKind, Run
from react_cli.core.wording import quoted
from react_cli.loop.events import Observer, RunStarted
from react_cli.loop.prompts import PromptSet
from react_cli.loop.protocol import NO_EARLIER
from react_cli.loop.registry import loop_protocols
from react_cli.methods.answers import read_answer
from react_cli.methods.events import MethodFinished
from react_cli.methods.outcome import answer
from react_cli.methods.record import MethodRecord, Sample, loop_calls
from react_cli.methods.results import Outcome, SampleSet
from react_cli.session import Session
from react_cli.tools.base import ToolSet
from react_cli.traces.recorded import FAILURES, RecordedModel, ReplayExhausted, recorded_tools
from react_cli.traces.trace import Trace


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
