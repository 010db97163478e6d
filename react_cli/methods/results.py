"""What a method's blocks give: a call's or CoT-SC's completions (:class:`SampleSet`), and a
method's answer with every block it used (:class:`Outcome`) and the path it took, in words.
Plain results, so what shows them (``display``, ``share``) never imports what makes them
(``memo``, ``outcome``)."""

from __future__ import annotations

from dataclasses import dataclass

from react_cli.core.errors import LLMError, ReactCliError
from react_cli.core.method import Method
from react_cli.core.records import StopReason, Usage
from react_cli.core.trajectory import Run
from react_cli.core.wording import plural
from react_cli.methods.record import MethodRecord, Sample, loop_calls
from react_cli.methods.vote import Vote


@dataclass(frozen=True)
class SampleSet:
    """What a Standard or CoT call, or CoT-SC's sampling, gave: its samples, the requests
    made, and why it ended early (endpoint failure, time limit, Ctrl-C), if it did."""

    kind: Method
    samples: tuple[Sample, ...]
    calls: int
    duration_s: float
    stop_reason: StopReason | None = None
    error: str | None = None
    failure: LLMError | None = None

    @property
    def usage(self) -> Usage:
        return sum((sample.usage for sample in self.samples), Usage())

    @property
    def cached_usage(self) -> Usage:
        """What the samples the cache answered would have cost."""
        return sum((s.cached_usage or Usage() for s in self.samples), Usage())

    @property
    def answers(self) -> list[str | None]:
        return [sample.answer for sample in self.samples]


@dataclass(frozen=True)
class Outcome:
    """A method's answer and every block it used: the loop's run, the completions it read
    and CoT-SC's vote; ``branch`` is the block whose answer it is."""

    method: Method
    answer: str | None
    stop_reason: StopReason | str
    error: str | None
    branch: Method | None
    run: Run | None = None
    sampled: SampleSet | None = None
    vote: Vote | None = None
    backed_off: bool = False
    failure: ReactCliError | None = None

    @property
    def calls(self) -> int:
        """Model calls of the blocks used (shared ones counted for every method using them)."""
        return (loop_calls(self.run) if self.run else 0) + (
            self.sampled.calls if self.sampled else 0
        )

    @property
    def usage(self) -> Usage:
        return (self.run.usage if self.run else Usage()) + (
            self.sampled.usage if self.sampled else Usage()
        )

    @property
    def cached_usage(self) -> Usage:
        """What the calls the cache answered would have cost (``usage`` counts none of it)."""
        return (self.run.cached_usage if self.run else Usage()) + (
            self.sampled.cached_usage if self.sampled else Usage()
        )

    @property
    def duration_s(self) -> float:
        return (self.run.duration_s if self.run else 0.0) + (
            self.sampled.duration_s if self.sampled else 0.0
        )

    def whole_run(self, question: str) -> Run:
        """The method's run as a trace records it: the loop's steps, the final answer."""
        return Run(
            question=question,
            answer=self.answer,
            stop_reason=self.stop_reason,
            steps=list(self.run.steps) if self.run else [],
            usage=self.usage,
            duration_s=self.duration_s,
            error=self.error,
            failure=self.failure,
        )

    def record(self) -> MethodRecord:
        return MethodRecord(
            method=self.method,
            branch=self.branch,
            calls=self.calls,
            samples=self.sampled.samples if self.sampled else (),
            votes=self.vote.counts() if self.vote else None,
        )


def path(outcome: Outcome) -> str | None:
    """Which path a hybrid or CoT-SC took, in one line (``ReAct gave no answer in 7 steps →
    CoT-SC: 13/21 votes for "X"``); None for the other methods."""
    method = outcome.method
    react = _react_said(outcome.run) if outcome.run else None
    voted = _vote_said(outcome.vote) if outcome.vote else None
    if method is Method.COT_SC:
        return voted
    if method is Method.REACT_COT_SC and react:
        return f"{react} → {voted}" if outcome.backed_off and voted else react
    if method is Method.COT_SC_REACT and voted:
        if not outcome.backed_off:
            return voted
        return f"{voted}, fewer than half → {react}" if react else voted
    return None


def _react_said(run: Run) -> str:
    steps = plural(len(run.steps), "step")
    if run.answer is not None:
        return f"ReAct answered in {steps}"
    if run.stop_reason == StopReason.MAX_STEPS:
        return f"ReAct gave no answer in {steps}"
    return f"ReAct gave no answer in {steps} ({run.stop_reason})"


def _vote_said(counted: Vote) -> str:
    winner = counted.winner
    if winner is None:
        return f"CoT-SC: no answer in {plural(counted.samples, 'sample')}"
    return f'CoT-SC: {winner.votes}/{counted.samples} votes for "{winner.answer}"'
