"""A recorded run shown as ``ask -v`` showed it live, whatever its method, optionally paced.

The recorded steps and completions go through the renderer's own events, in the order the
method made them (a hybrid's back-off second), so a replay looks like the live run.
"""

from __future__ import annotations

import time

from rich.console import Console

from react_cli.methods.memo import SampleSet
from react_cli.methods.method import Method
from react_cli.methods.outcome import Outcome
from react_cli.methods.record import loop_calls
from react_cli.methods.vote import Group, Vote
from react_cli.render import Renderer
from react_cli.trace import Trace
from react_cli.trajectory import Run, Step


class PacedRenderer(Renderer):
    """The renderer with a pause after each step, for watching a replay."""

    def __init__(self, console: Console, delay_s: float) -> None:
        super().__init__(console)
        self.delay_s = delay_s

    def step_finished(self, step: Step) -> None:
        super().step_finished(step)
        if self.delay_s > 0:
            self.console.file.flush()
            time.sleep(self.delay_s)


def replay_steps(renderer: Renderer, run: Run, *, thoughts: bool = True) -> None:
    """A loop's recorded steps through the events a live loop produces (Act: no thoughts)."""
    for step in run.steps:
        if thoughts:
            renderer.step_started(step.index)
        else:
            renderer.action_requested(step.index)
        renderer.model_text(step.raw)
        renderer.model_done()
        if step.followup_raw is not None:
            renderer.action_requested(step.index)
            renderer.model_text(step.followup_raw)
            renderer.model_done()
        renderer.step_finished(step)


def replay_run(renderer: Renderer, run: Run) -> None:
    """Show a recorded ReAct run through the same events a live run produces."""
    renderer.run_started(run.question)
    replay_steps(renderer, run)
    renderer.run_finished(run)


def replay_trace(renderer: Renderer, trace: Trace) -> None:
    """Show a recorded run of any method: its loop's steps and its completions in the order
    the method made them, its votes and path, its answer."""
    run, record = trace.run, trace.record
    known = record.method if isinstance(record.method, Method) else None
    parts = known.parts if known else (Method.REACT, Method.COT_SC)  # a newer writer's method
    renderer.run_started(run.question)
    sampled = None
    for part in parts:
        if part.loop and run.steps:
            replay_steps(renderer, run, thoughts=part is not Method.ACT)
        elif not part.loop and record.samples:
            many = part is Method.COT_SC
            temperature = (trace.config.sample_temperature or 0.0) if many else 0.0
            calls = max(1, record.calls - loop_calls(run))
            looped = sum(step.latency_s + step.tool_latency_s for step in run.steps)
            sampled = SampleSet(part, record.samples, calls, max(0.0, run.duration_s - looped))
            renderer.sampling_started(part, len(record.samples), temperature)
            renderer.sampling_finished(sampled)
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
    renderer.method_finished(outcome, run)
