"""Each method's answer as a function of the question's memo, with the paper's back-off rules.

- ``react+cot-sc`` (ReAct → CoT-SC): ReAct within the hybrid's step limit; when it gives no
  answer there (step limit, repeated action, unparseable output, Wikipedia failing), CoT-SC.
- ``cot-sc+react`` (CoT-SC → ReAct): CoT-SC's majority answer, unless it has fewer than n/2
  of the n votes; then ReAct within the hybrid's step limit.

A block that ended the run (the endpoint failed, the time ran out, Ctrl-C) is never backed off
from: the method ends with it; nor is one that spent the run's budget (``--max-total-tokens``,
``--max-cost``): ReAct → CoT-SC then ends with that budget's stop reason, CoT-SC → ReAct with
its weak majority.
"""

from __future__ import annotations

from dataclasses import replace

from react_cli.core.method import Method, Task
from react_cli.core.records import StopReason
from react_cli.core.trajectory import Run
from react_cli.methods.memo import Memo
from react_cli.methods.results import Outcome, SampleSet
from react_cli.methods.vote import Vote, vote

BACK_OFF = frozenset(
    {
        StopReason.MAX_STEPS,
        StopReason.REPEATED_ACTION,
        StopReason.PARSE_ERRORS,
        StopReason.TOOL_ERRORS,
    }
)
"""How a ReAct run may end without an answer "within its steps", so that a hybrid backs off."""


def answer(method: Method, memo: Memo, task: Task) -> Outcome:
    """``method``'s outcome from ``memo``, running only the blocks it needs."""
    if method in (Method.STANDARD, Method.COT):
        return _single(method, memo.samples(method))
    if method is Method.COT_SC:
        return _voted(method, memo.samples(method), task)
    if method.loop:
        return _looped(method, method, memo.loop(method, memo.need(method, method)))
    need = memo.need(method, Method.REACT)
    if method is Method.REACT_COT_SC:
        react = _looped(method, Method.REACT, memo.loop(Method.REACT, need))
        if react.answer is not None or react.stop_reason not in BACK_OFF:
            return react
        spent = memo.limits.spent(react.usage)
        if spent is not None:  # no budget left to back off with
            return replace(react, stop_reason=spent)
        voted = _voted(method, memo.samples(Method.COT_SC), task)
        return _joined(voted, react.run, voted)
    sampled = memo.samples(Method.COT_SC)
    voted = _voted(method, sampled, task)
    if sampled.stop_reason is not None or (voted.vote is not None and not voted.vote.weak):
        return voted
    if memo.limits.spent(sampled.usage) is not None:  # the weak majority stands
        return voted
    react = _looped(method, Method.REACT, memo.loop(Method.REACT, need))
    return _joined(react, react.run, voted)


def _single(method: Method, sampled: SampleSet) -> Outcome:
    found = sampled.samples[0].answer if sampled.samples else None
    return _ended(method, found, sampled, None)


def _voted(method: Method, sampled: SampleSet, task: Task) -> Outcome:
    counted = vote(sampled.answers, task)
    winner = counted.winner
    return _ended(method, winner.answer if winner else None, sampled, counted)


def _ended(method: Method, found: str | None, sampled: SampleSet, counted: Vote | None) -> Outcome:
    """The outcome of the completions ``sampled``: their answer, or why there is none."""
    if sampled.stop_reason is not None:  # it ended early: whatever came is not an answer
        found, reason = None, sampled.stop_reason
    else:
        reason = StopReason.FINISH if found is not None else StopReason.NO_ANSWER
    return Outcome(
        method=method,
        answer=found,
        stop_reason=reason,
        error=sampled.error,
        branch=sampled.kind if found is not None else None,
        sampled=sampled,
        vote=counted,
        failure=sampled.failure,
    )


def _looped(method: Method, loop: Method, run: Run) -> Outcome:
    return Outcome(
        method=method,
        answer=run.answer,
        stop_reason=run.stop_reason,
        error=run.error,
        branch=loop if run.answer is not None else None,
        run=run,
        failure=run.failure,
    )


def _joined(final: Outcome, run: Run | None, voted: Outcome) -> Outcome:
    """A hybrid that backed off: ``final``'s answer, with both blocks' work."""
    return Outcome(
        method=final.method,
        answer=final.answer,
        stop_reason=final.stop_reason,
        error=final.error,
        branch=final.branch,
        run=run,
        sampled=voted.sampled,
        vote=voted.vote,
        backed_off=True,
        failure=final.failure,
    )
