"""What a method reports while it runs, beyond the loop's steps: its calls, samples and path.

The renderer of ``ask -v`` is one; the default does nothing. A method's loop (ReAct or Act)
reports its steps as a ``RunObserver``; the method itself starts and finishes the whole run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from react_cli.agent import RunObserver
from react_cli.trajectory import Run, Step

if TYPE_CHECKING:
    from react_cli.methods.memo import SampleSet
    from react_cli.methods.method import Method
    from react_cli.methods.outcome import Outcome


class MethodObserver(RunObserver):
    """Receives a method's progress: ``run_started``, the loop's steps, the completions read
    for their answers, then ``method_finished`` (the default calls ``run_finished``)."""

    def sampling_started(self, kind: Method, n: int, temperature: float) -> None:
        """A Standard or CoT call (``n`` 1, temperature 0), or CoT-SC's ``n`` samples."""

    def sampling_finished(self, result: SampleSet) -> None: ...

    def method_finished(self, outcome: Outcome, run: Run) -> None:
        """The method's answer and the whole run it makes (every block it used)."""
        self.run_finished(run)


class InLoop(RunObserver):
    """The steps of a method's loop, passed on; the loop's start and end are not the run's."""

    def __init__(self, observer: RunObserver) -> None:
        self.observer = observer

    def step_started(self, index: int) -> None:
        self.observer.step_started(index)

    def action_requested(self, index: int) -> None:
        self.observer.action_requested(index)

    def model_text(self, text: str) -> None:
        self.observer.model_text(text)

    def model_done(self) -> None:
        self.observer.model_done()

    def step_finished(self, step: Step) -> None:
        self.observer.step_finished(step)
