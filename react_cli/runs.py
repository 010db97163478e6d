"""One question answered by a method, and its trace kept; how a run was made, from settings.

Shared by ``ask`` and ``eval``: ``ask`` runs one method (:func:`run_question`); ``eval`` asks
one memo for several methods and keeps a trace of each (:func:`method_trace`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import fields
from datetime import datetime
from pathlib import Path
from typing import Any

from react_cli.config import Settings
from react_cli.methods.memo import Memo, Sampling
from react_cli.methods.method import Method, Task
from react_cli.methods.observer import MethodObserver
from react_cli.methods.outcome import Outcome, answer
from react_cli.methods.record import MethodRecord
from react_cli.prompts import PromptSet, PromptTemplate
from react_cli.records import Model, Sampler, StopReason, Tools, Usage
from react_cli.redaction import redact_url
from react_cli.runconfig import Limits, RunConfig
from react_cli.trace import Trace, new_run_id, now_utc, write_trace
from react_cli.trajectory import Run


def run_limits(settings: Settings) -> Limits:
    """The loop's stop rules: each the setting of its name, but --timeout (the run's)."""
    same = {f.name: getattr(settings, f.name) for f in fields(Limits) if f.name != "timeout_s"}
    return Limits(timeout_s=settings.run_timeout_s, **same)


def hybrid_steps(settings: Settings, task: Task) -> int:
    """The hybrids' ReAct step limit: --max-steps or ``hybrid_max_steps`` if given, else the
    paper's for the task (7 HotpotQA, 5 FEVER)."""
    return settings.hybrid_max_steps or task.hybrid_steps


def run_config(
    settings: Settings,
    template: PromptTemplate,
    methods: Sequence[Method],
    task: Task,
    kinds: Iterable[PromptTemplate] = (),
) -> RunConfig:
    """How a run with these settings is made, as its trace (or an eval's summary) records it,
    never a secret: ``template`` its main prompt, ``kinds`` the prompts it sends, recorded
    when they are not that one alone; ``methods`` its method first."""
    copied = ("model", "api", "temperature", "max_tokens", "stream", "variant")
    sends: dict[str, tuple[str | None, str | None]] = {
        str(t.method): (t.name, t.sha256) for t in kinds
    }
    if list(sends.values()) == [(template.name, template.sha256)]:
        sends = {}
    samples = any(Method.COT_SC in method.parts for method in methods)
    return RunConfig(
        base_url=redact_url(settings.base_url),
        prompt_name=template.name,
        prompt_sha256=template.sha256,
        wiki=redact_url(settings.wiki) if "://" in settings.wiki else settings.wiki,
        limits=run_limits(settings),
        method=methods[0],
        task=task,
        samples=settings.samples if samples else None,
        sample_temperature=settings.sample_temperature if samples else None,
        hybrid_max_steps=hybrid_steps(settings, task) if any(m.hybrid for m in methods) else None,
        prompts=sends,
        **{name: getattr(settings, name) for name in copied},
    )


def run_cost(run: Run, settings: Settings) -> dict[str, Any] | None:
    """The run's cost at the configured prices (None without prices), for traces and JSON."""
    prices = settings.prices()
    return None if prices is None else prices.cost(run.usage).to_json()


def new_memo(
    question: str,
    *,
    settings: Settings,
    prompts: PromptSet,
    task: Task,
    model: Model,
    tools: Callable[[], Tools],
    sampler: Sampler | None = None,
    observer: MethodObserver | None = None,
) -> Memo:
    """A question's memo with the settings' stop rules, sampling and hybrids' step limit."""
    return Memo(
        question,
        prompts=prompts.templates,
        model=model,
        tools=tools,
        limits=run_limits(settings),
        hybrid_steps=hybrid_steps(settings, task),
        sampler=sampler,
        sampling=Sampling(settings.samples, settings.sample_temperature),
        observer=observer,
    )


def run_question(
    question: str,
    *,
    settings: Settings,
    prompts: PromptSet,
    model: Model,
    tools: Tools,
    sampler: Sampler | None = None,
    observer: MethodObserver | None = None,
    trace_path: Path | None = None,
    created: datetime | None = None,
    trace_extra: dict[str, Any] | None = None,
) -> Trace:
    """Answer ``question`` by the settings' method (the task is the prompts') and write its
    trace (if ``trace_path``), whatever the outcome. ``sampler`` draws the completions of the
    methods that read one (Standard, CoT, CoT-SC and the hybrids).

    ``trace_extra`` adds top-level fields to the trace (e.g. where a fork came from)."""
    created = created or now_utc()
    method, question = Method(settings.method), question.strip()
    observer = observer or MethodObserver()
    memo = new_memo(
        question,
        settings=settings,
        prompts=prompts,
        task=prompts.task,
        model=model,
        tools=lambda: tools,
        sampler=sampler,
        observer=observer,
    )
    observer.run_started(question)
    outcome = answer(method, memo, prompts.task)
    run = outcome.whole_run(question)
    observer.method_finished(outcome, run)
    return method_trace(
        outcome,
        run,
        settings=settings,
        prompts=prompts,
        task=prompts.task,
        created=created,
        trace_path=trace_path,
        trace_extra=trace_extra,
    )


def method_trace(
    outcome: Outcome,
    run: Run,
    *,
    settings: Settings,
    prompts: PromptSet,
    task: Task,
    created: datetime,
    trace_path: Path | None,
    trace_extra: dict[str, Any] | None = None,
) -> Trace:
    """The trace of a method's ``outcome`` (its whole ``run``), written if ``trace_path``."""
    kinds = [prompts.templates[kind] for kind in outcome.method.prompts]
    template = prompts.main(outcome.method)
    config = run_config(settings, template, [outcome.method], task, kinds)
    record = outcome.record()
    return _finish(run, record, settings, config, template, trace_path, created, trace_extra)


def write_interrupted_trace(
    question: str,
    *,
    settings: Settings,
    prompts: PromptSet,
    path: Path,
    created: datetime,
    extra: dict[str, Any] | None = None,
) -> Trace:
    """The trace of a run Ctrl-C stopped before its first step (while it was being set up)."""
    method = Method(settings.method)
    duration = (now_utc() - created).total_seconds()
    run = Run(
        question=question.strip(),
        answer=None,
        stop_reason=StopReason.INTERRUPTED,
        steps=[],
        usage=Usage(),
        duration_s=max(0.0, duration),
        error="interrupted by the user",
    )
    template = prompts.main(method)
    kinds = [prompts.templates[kind] for kind in method.prompts]
    config = run_config(settings, template, [method], prompts.task, kinds)
    record = MethodRecord(method, None, 0)
    return _finish(run, record, settings, config, template, path, created, extra)


def _finish(
    run: Run,
    record: MethodRecord,
    settings: Settings,
    config: RunConfig,
    template: PromptTemplate,
    trace_path: Path | None,
    created: datetime,
    trace_extra: dict[str, Any] | None,
) -> Trace:
    trace = Trace(
        run,
        config,
        record,
        id=new_run_id(),
        created=created.isoformat(),
        prompt_template=template.text,
        extra={"forced": run.forced, "cost": run_cost(run, settings), **(trace_extra or {})},
        path=trace_path,
    )
    if trace_path is not None:
        write_trace(trace_path, trace.to_json())
    return trace
