"""A recorded run shown as ``ask -v`` showed it live, whatever its method, optionally paced.

The recorded steps and completions go through the renderer's own events, in the order the
method made them (a hybrid's back-off second), so a replay looks like the live run.
"""

from __future__ import annotations

import time

from rich.console import Console

from react_cli.core.method import Method
from react_cli.core.trajectory import Run
from react_cli.display.render import Renderer
from react_cli.loop.events import (
    Event,
    Observer,
    RunStarted,
    StepFinished,
    recorded_events,
)
from react_cli.methods.events import MethodFinished, SamplingFinished, SamplingStarted
from react_cli.methods.record import loop_calls
from react_cli.methods.results import Outcome, SampleSet
from react_cli.methods.vote import Group, Vote
from react_cli.traces.trace import Trace


class PacedRenderer(Renderer):
    """The renderer with a pause after each step, for watching a replay."""

    def __init__(self, console: Console, delay_s: float) -> None:
        super().__init__(console)
        self.delay_s = delay_s

    def notify(self, event: Event) -> None:
        super().notify(event)
        if isinstance(event, StepFinished) and self.delay_s > 0:
            self.console.file.flush()
            time.sleep(self.delay_s)


def replay_steps(observer: Observer, run: Run) -> None:
    """A loop's recorded steps through the events a live loop told of them, whatever its
    protocol: each step carries what it shows."""
    for step in run.steps:
        for event in recorded_events(step):
            observer.notify(event)


def replay_trace(observer: Observer, trace: Trace) -> None:
    """Show a recorded run of any method: its loop's steps and its completions in the order
    the method made them, its votes and path, its answer."""
    run, record = trace.run, trace.record
    known = record.method if isinstance(record.method, Method) else None
    parts = known.parts if known else (Method.REACT, Method.COT_SC)  # a newer writer's method
    observer.notify(RunStarted(run.question))
    sampled = None
    for part in parts:
        if part.loop and run.steps:
            replay_steps(observer, run)
        elif not part.loop and record.samples:
            many = part is Method.COT_SC
            temperature = (trace.config.sample_temperature or 0.0) if many else 0.0
            calls = max(1, record.calls - loop_calls(run))
            looped = sum(step.latency_s + step.tool_latency_s for step in run.steps)
            sampled = SampleSet(part, record.samples, calls, max(0.0, run.duration_s - looped))
            observer.notify(SamplingStarted(part, len(record.samples), temperature))
            observer.notify(SamplingFinished(sampled))
    votes = record.votes
    groups = tuple(Group(answer, count) for answer, count in (votes or {}).items())
    outcome = Outcome(
        method=known or Method.REACT,
        answer=run.answer,
        stop_reason=run.stop_reason,
        error=run.error,
        branch=None,
        run=run if run.steps else None,
        sampled=sampled,
        vote=None if votes is None else Vote(groups, len(record.samples)),
        backed_off=bool(run.steps and record.samples),
    )
    observer.notify(MethodFinished(outcome, run))
