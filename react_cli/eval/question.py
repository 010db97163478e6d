"""One question of an eval: run with its own Wikipedia session, traced, and scored into its row."""

from __future__ import annotations

import time
from dataclasses import dataclass

from react_cli.datasets import Example, Format
from react_cli.errors import LLMConfigError, ReactCliError
from react_cli.eval.files import TRACES
from react_cli.eval.plan import EvalPlan
from react_cli.eval.rows import FeverLabel, Row
from react_cli.eval.stop import CallRefused
from react_cli.records import Model, StopReason, Usage
from react_cli.scoring import best_scores, fever_label
from react_cli.trace import slug
from react_cli.wiki.base import WikiBackend, WikiSession
from react_cli.wiring import run_question


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


def trace_name(example: Example) -> str:
    """Where a question's trace goes, inside the eval folder."""
    return f"{TRACES}/{example.index:05d}-{slug(example.question)}.json"


def answer(plan: EvalPlan, example: Example, model: Model, backend: WikiBackend) -> Answered | None:
    """Run, trace and score one question; None when the eval stopped under it. A crash (a bug,
    a trace that cannot be written) is the question's row, never the eval's end."""
    name = trace_name(example)
    tools = WikiSession(backend, max_observation_chars=plan.settings.max_observation_chars)
    started = time.monotonic()
    try:
        result = run_question(
            example.question,
            settings=plan.settings,
            template=plan.template,
            model=model,
            tools=tools,
            trace_path=plan.folder / name,
        ).run
        if isinstance(result.failure, CallRefused):
            return None
        em, f1, label = score(example, result.answer, plan.dataset.format is Format.FEVER)
    except Exception as exc:
        return Answered(_crashed(example, exc, time.monotonic() - started), False, None)
    prices = plan.settings.prices()
    row = Row(
        index=example.index,
        id=example.id,
        question=example.question,
        golds=example.golds,
        answer=result.answer,
        em=em,
        f1=round(f1, 6),
        stop_reason=StopReason(result.stop_reason),
        error=result.error,
        steps=len(result.steps),
        tokens=result.usage.total_tokens,
        usage=result.usage,
        cost=None if prices is None else round(prices.cost(result.usage).amount, 6),
        latency_s=round(result.duration_s, 4),
        trace=name,
        label=label,
    )
    failure = result.failure if isinstance(result.failure, LLMConfigError) else None
    return Answered(row, result.max_tokens_reached, failure)


def _crashed(example: Example, exc: Exception, seconds: float) -> Row:
    """The row of a question that crashed before its run could end."""
    return Row(
        index=example.index,
        id=example.id,
        question=example.question,
        golds=example.golds,
        answer=None,
        em=0.0,
        f1=0.0,
        stop_reason=StopReason.ERROR,
        error=describe(exc),
        steps=0,
        tokens=0,
        usage=Usage(),
        cost=None,
        latency_s=round(seconds, 4),
        trace=None,
    )


def describe(exc: Exception) -> str:
    """An error as a row or a message says it: our own errors by their message alone."""
    return str(exc) if isinstance(exc, ReactCliError) else f"{type(exc).__name__}: {exc}"
