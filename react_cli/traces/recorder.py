"""A new run's trace, made from the session that answered it: the one place traces are made
(``Trace.write`` is the one place they are written)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from react_cli.core.method import Method
from react_cli.core.records import StopReason, Usage
from react_cli.core.trajectory import Run
from react_cli.loop.prompts import PromptSet
from react_cli.methods.record import MethodRecord
from react_cli.methods.results import Outcome
from react_cli.methods.sources import run_sources
from react_cli.session import Session
from react_cli.settings.settings import Settings
from react_cli.tools.base import ToolSpec
from react_cli.traces.runconfig import run_config
from react_cli.traces.trace import Trace, new_run_id, now_utc


def trace_of(
    session: Session,
    outcome: Outcome,
    run: Run,
    *,
    created: datetime,
    extra: dict[str, Any] | None = None,
) -> Trace:
    """The trace of a method's ``outcome`` (its whole ``run``) answered by ``session``, to be
    written by the command (``Trace.write``)."""
    if session.settings is None:
        raise ValueError("a session without settings (a re-run) makes no trace")
    method = outcome.method
    specs = session.tool_specs() if any(part.loop for part in method.parts) else ()
    record = outcome.record()
    return make_trace(session.settings, session.prompts, run, record, created, extra, specs)


def make_trace(
    settings: Settings,
    prompts: PromptSet,
    run: Run,
    record: MethodRecord,
    created: datetime,
    extra: dict[str, Any] | None = None,
    tools: tuple[ToolSpec, ...] = (),
) -> Trace:
    """The trace of ``run``, answered by ``record``'s method with ``prompts`` and ``tools``,
    as ``settings`` made it."""
    method = Method(record.method)
    template = prompts.main(method)
    kinds = [prompts.templates[kind] for kind in method.prompts]
    config = run_config(settings, template, [method], prompts.task, kinds, tools)
    prices = settings.prices()
    cost = None if prices is None else prices.cost(run.usage).to_json()
    recorded: dict[str, Any] = {"forced": run.forced, "cost": cost}
    if method.uses_tools:
        recorded["sources"] = [source.to_json() for source in run_sources(run.steps, run.answer)]
    return Trace(
        run,
        config,
        record,
        id=new_run_id(),
        created=created.isoformat(),
        prompt_template=template.text,
        extra={**recorded, **(extra or {})},
    )


def interrupted_trace(
    settings: Settings,
    prompts: PromptSet,
    question: str,
    *,
    created: datetime,
    extra: dict[str, Any] | None = None,
) -> Trace:
    """The trace of a run Ctrl-C stopped before its first step (while it was being set up)."""
    run = Run(
        question=question.strip(),
        answer=None,
        stop_reason=StopReason.INTERRUPTED,
        steps=[],
        usage=Usage(),
        duration_s=max(0.0, (now_utc() - created).total_seconds()),
        error="interrupted by the user",
    )
    record = MethodRecord(Method(settings.method), None, 0)
    return make_trace(settings, prompts, run, record, created, extra)
