"""One question of an eval: its methods answered from one memo, each traced and scored into the
question's row.

The memo runs each building block once (the ReAct run, the greedy calls, the CoT-SC samples),
so the methods share them as the paper's numbers allow. A resumed question keeps the results
its row already holds and runs only the methods it lacks.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from datetime import datetime

from react_cli.core.errors import LLMConfigError, ReactCliError
from react_cli.core.method import Method
from react_cli.core.records import StopReason, Usage
from react_cli.core.trajectory import Run, actions_of
from react_cli.eval.datasets import Example, Format
from react_cli.eval.failures import RunFacts, Scored, diagnose, run_facts
from react_cli.eval.files import TRACES
from react_cli.eval.plan import EvalPlan
from react_cli.eval.rows import FeverLabel, MethodResult, Row
from react_cli.eval.stop import CallRefused
from react_cli.infra.deadline import Cancel
from react_cli.loop.events import Observer
from react_cli.methods.events import MethodFinished
from react_cli.methods.evidence import Evidence, score_evidence
from react_cli.methods.outcome import answer
from react_cli.methods.results import Outcome
from react_cli.methods.scoring import best_scores, fever_label
from react_cli.methods.sources import run_sources
from react_cli.session import Session
from react_cli.tools.base import UNAVAILABLE
from react_cli.traces.recorder import trace_of
from react_cli.traces.trace import now_utc, slug


@dataclass(frozen=True)
class Answered:
    """A question's row, and what its run tells the whole eval."""

    row: Row
    max_tokens_reached: bool  # a reply stopped at max_tokens before its action
    config_error: LLMConfigError | None  # the endpoint refused the key or the model


def score(
    example: Example, answer: str | None, fever: bool
) -> tuple[float, float, FeverLabel | None]:
    """(EM, F1, the FEVER label read from the answer); FEVER: EM = F1 = label match."""
    if fever:
        label = fever_label(answer)
        correct = float(label is not None and label == example.golds[0])
        return correct, correct, FeverLabel(label)
    em, f1 = best_scores(answer, list(example.golds))
    return em, f1, None


def evidence(example: Example, outcome: Outcome, run: Run) -> Evidence | None:
    """The run's evidence scores against the question's gold evidence; None without gold
    evidence, or when the method ran no loop (Standard, CoT, CoT-SC, and a CoT-SC → ReAct
    that did not back off): nothing was retrieved to score."""
    if example.evidence is None or outcome.run is None:
        return None
    sources = run_sources(run.steps, run.answer)
    return score_evidence(example.evidence, [source.page for source in sources])


def trace_name(example: Example, method: Method | None = None) -> str:
    """Where a question's trace goes, inside the eval folder (of each method, in an eval that
    is not ReAct's alone)."""
    suffix = "" if method is None else f".{method}"
    return f"{TRACES}/{example.index:05d}-{slug(example.question)}{suffix}.json"


def prompt_cache_key(plan: EvalPlan, example: Example) -> str:
    """The question's prompt cache key: one per question of this eval (its folder), the same
    when it is resumed; a hash, so it names nothing of the user's and holds no secret."""
    named = f"{plan.folder.absolute()}\n{example.index}\n{example.question}"
    return "react-cli-" + hashlib.sha256(named.encode("utf-8", "replace")).hexdigest()[:32]


def answer_question(
    plan: EvalPlan,
    example: Example,
    session: Session,
    methods: tuple[Method, ...],
    earlier: Row | None = None,
    observer: Observer | None = None,
    cancel: Cancel | None = None,
) -> Answered | None:
    """Answer, trace and score ``methods`` for one question with ``session`` (the worker's),
    beside the results ``earlier`` holds; None when the eval stopped under it. A crash (a bug,
    a trace that cannot be written) is the question's row, never the eval's end. ``observer``
    is told of the runs' events, and of each method's end (``MethodFinished``); ``cancel``
    ends its calls at once (the eval's stop)."""
    created, started = now_utc(), time.monotonic()
    session = session.keyed(prompt_cache_key(plan, example))
    memo = session.memo(example.question, observer, cancel=cancel)
    memo.plan(methods)
    results = dict(earlier.results()) if earlier is not None else {}
    outcomes: list[Outcome] = []
    try:
        for method in methods:
            outcome = answer(method, memo, plan.task)
            if isinstance(outcome.failure, CallRefused):
                return None
            outcomes.append(outcome)
            memo.observer.notify(MethodFinished(outcome, outcome.whole_run(example.question)))
            results[str(method)] = _scored(plan, session, example, outcome, created)
    except Exception as exc:
        crashed = _crashed(describe(exc), time.monotonic() - started)
        results.update({str(m): crashed for m in methods if str(m) not in results})
    calls_made = memo.calls_made + _calls_made(earlier)
    row = _row(plan, example, results, calls_made)
    failure = next((o.failure for o in outcomes if isinstance(o.failure, LLMConfigError)), None)
    reached = any(o.run is not None and o.run.max_tokens_reached for o in outcomes)
    return Answered(row, reached, failure)


def _calls_made(earlier: Row | None) -> int:
    """The calls an earlier row's question took (a ReAct eval's rows do not record them)."""
    if earlier is None:
        return 0
    made = earlier.calls_made
    return made if made is not None else earlier.result.calls or 0


def _scored(
    plan: EvalPlan, session: Session, example: Example, outcome: Outcome, created: datetime
) -> MethodResult:
    """Trace ``outcome`` and score it."""
    single = plan.methods == (Method.REACT,)
    name = trace_name(example, None if single else outcome.method)
    run = outcome.whole_run(example.question)
    trace_of(session, outcome, run, created=created).write_in(plan.folder, name)
    em, f1, label = score(example, run.answer, plan.dataset.format is Format.FEVER)
    prices = plan.settings.prices(batch=plan.batch)
    cached = outcome.cached_usage.total_tokens
    stopped = _server_stopped(run)  # the question failed: --resume runs it again
    reason = StopReason.ERROR if stopped else _stop_reason(run)
    found = evidence(example, outcome, run)
    fever = plan.dataset.format is Format.FEVER
    scored = Scored(run.answer, example.golds, em, f1, reason, found, fever)
    return MethodResult(
        answer=run.answer,
        em=em,
        f1=round(f1, 6),
        stop_reason=reason,
        error=stopped or run.error,
        branch=None if outcome.branch is None else str(outcome.branch),
        steps=len(run.steps),
        calls=None if single else outcome.calls,
        tokens=run.usage.total_tokens,
        usage=run.usage,
        cost=None if prices is None else round(prices.cost(run.usage).amount, 6),
        latency_s=round(run.duration_s, 4),
        trace=name,
        label=label,
        evidence=found,
        cached_tokens=cached or None,
        refused_calls=run.refused_calls or None,
        failure=diagnose(scored, run_facts(run.steps, run.answer)),
    )


def _server_stopped(run: Run) -> str | None:
    """Why a call of the run found its tool's server stopped (it never ran), if one did."""
    for action in actions_of(run.steps):
        if action.details.get(UNAVAILABLE) and action.error is not None:
            return action.error
    return None


def _stop_reason(run: Run) -> StopReason:
    return run.stop_reason if isinstance(run.stop_reason, StopReason) else StopReason.ERROR


def _crashed(error: str, seconds: float) -> MethodResult:
    """The result of a method whose question crashed before its run could end."""
    return MethodResult(
        answer=None,
        em=0.0,
        f1=0.0,
        stop_reason=StopReason.ERROR,
        error=error,
        steps=0,
        tokens=0,
        usage=Usage(),
        cost=None,
        latency_s=round(seconds, 4),
        trace=None,
        failure=diagnose(Scored(None, (), 0.0, 0.0, StopReason.ERROR, None, False), RunFacts()),
    )


def _row(
    plan: EvalPlan, example: Example, results: dict[str, MethodResult], calls_made: int
) -> Row:
    """The row: its own fields the first method's, every method's under ``methods`` when the
    eval has several (or one that is not ReAct)."""
    order = [str(m) for m in plan.methods] + [m for m in results if m not in plan.methods]
    ordered = {name: results[name] for name in order if name in results}
    first_name = next(iter(ordered))
    first, several = ordered[first_name], len(ordered) > 1
    return Row(
        index=example.index,
        id=example.id,
        question=example.question,
        golds=example.golds,
        result=first,
        method=None if plan.methods == (Method.REACT,) else first_name,
        methods=ordered if several else None,
        calls_made=calls_made if several else None,
    )


def describe(exc: Exception) -> str:
    """An error as a row or a message says it: our own errors by their message alone."""
    return str(exc) if isinstance(exc, ReactCliError) else f"{type(exc).__name__}: {exc}"
