"""One normalised view of a trace for every exporter: any version and method, text cleaned.

The exporters never read the trace document: they read this view, whose text is already
cleaned and clipped (``text.shown``), so escaping for Markdown or HTML is all they add. Parts a
trace may lack (samples and votes of the sampling methods, a branch, a fork) are empty or None
here and simply not shown; the trace reader has checked them (``methods.record``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from react_cli.core.method import Method
from react_cli.core.sources import Revision
from react_cli.core.trajectory import Cue, ErrorKind, Step
from react_cli.display.render import step_meta
from react_cli.display.sources import where
from react_cli.display.terminal import format_seconds
from react_cli.infra.untrusted import dump_json
from react_cli.methods.record import Sample
from react_cli.methods.sources import RunSource
from react_cli.share.text import link_target, one_line, shown
from react_cli.traces.trace import Trace


@dataclass(frozen=True)
class SourceView:
    """A page the run was shown, as shown: numbered from 1 in the order first seen, its
    title, where it is (URL at the revision, or ZIM archive and entry), a link only where the
    URL is a safe http(s) one, its revision, its sentences (index, text), and whether they
    contain the answer."""

    number: int
    title: str
    where: str
    link: str | None
    revision: str | None
    sentences: tuple[tuple[int, str], ...]
    supports: bool


@dataclass(frozen=True)
class ActionView:
    """One action of a step as shown: its label (``2``, or ``2.1`` in a step of several), as
    written (None: the reply held none), what it gave back and the page that showed."""

    label: str
    written: str | None
    observation: str
    source: SourceView | None = None  # the page (at its revision) the observation showed


@dataclass(frozen=True)
class ReplyView:
    """One model call of a step as received: what it asked for (``Thought 2``, ``Action 2``),
    its text, and its native calls as sent (JSON text; None: it made none)."""

    asked: str
    text: str
    tool_calls: str | None = None


@dataclass(frozen=True)
class StepView:
    """One Thought/Action/Observation round as shown: ``thought`` None when the step asked
    for none and holds none (Act, a forced answer)."""

    index: int
    thought: str | None
    actions: tuple[ActionView, ...]
    replies: tuple[ReplyView, ...]
    error: str | None  # why the model failed, shown after the actions
    costs: str  # "model 0.52 s · tool 0.10 s · 1657 tokens", and "no valid action", "forced answer"


@dataclass(frozen=True)
class SampleView:
    """One sampled completion of a sampling method (CoT-SC): its text and the answer it gave."""

    raw: str
    answer: str | None
    tokens: int


@dataclass(frozen=True)
class TraceView:
    """A run as shown: question, steps, samples, answer, and labelled facts about it."""

    question: str
    answer: str | None
    stop_reason: str
    error: str | None
    steps: tuple[StepView, ...]
    samples: tuple[SampleView, ...]
    votes: tuple[tuple[str, int], ...]  # (answer, count), most votes first
    facts: tuple[tuple[str, str], ...]  # ("Model", "gpt-4o-mini"), ("Tokens", "5,176 …"), …
    calls: int  # model calls of the run (one request may give every sample)
    sources: tuple[SourceView, ...] = ()  # the pages it was shown, first seen first


def load_view(path: Path) -> TraceView:
    """Read a trace file (any readable version); TraceError names the file and the problem."""
    return view_of(Trace.read(path))


def view_of(trace: Trace) -> TraceView:
    """The view of a loaded trace (its samples and votes read, and checked, with it)."""
    extra, run, record = trace.extra, trace.run, trace.record
    samples = tuple(_sample(sample) for sample in record.samples)
    votes = _votes(record.votes or {})
    plain_react = record.method == Method.REACT  # shown as every trace was before methods
    method = None if plain_react else _text(record.method)
    branch = None if plain_react else _text(record.branch)
    sources = tuple(_source(n, source) for n, source in enumerate(trace.sources or (), 1))
    by_page = {s.page.page: view for s, view in zip(trace.sources or (), sources, strict=True)}
    steps = tuple(_step(step, by_page) for step in run.steps)
    usage = run.usage
    tokens = (
        f"{usage.total_tokens:,} ({usage.prompt_tokens:,} prompt + "
        f"{usage.completion_tokens:,} completion)"
        if usage.total_tokens
        else "not reported by the endpoint"
    )
    facts: list[tuple[str, str | None]] = [
        ("Stop reason", one_line(run.stop_reason)),
        ("Method", method),
        ("Protocol", _protocol(trace.config.protocol)),
        ("Branch", branch),
        ("Model", _text(trace.config.model)),
        ("Prompt", _text(trace.config.prompt_name)),
        ("Steps", str(len(steps))),
        ("Model calls", str(record.calls)),
        ("Tokens", tokens),
        ("Time", format_seconds(run.duration_s)),
        ("Forced answer", "yes (--force-answer)" if run.forced else None),
        ("Forked from", _fork(extra.get("forked_from"))),
        ("Recorded", _text(trace.created)),
    ]
    return TraceView(
        calls=record.calls,
        question=shown(run.question),
        answer=None if run.answer is None else shown(run.answer),
        stop_reason=one_line(run.stop_reason),
        error=None if run.error is None else shown(run.error),
        steps=steps,
        samples=samples,
        votes=votes,
        facts=tuple((name, value) for name, value in facts if value is not None),
        sources=sources,
    )


def _source(number: int, source: RunSource) -> SourceView:
    page = source.page
    return SourceView(
        number=number,
        title=one_line(page.title),
        where=one_line(where(page), 2000),
        link=link_target(page.url),
        revision=None if page.revision is None else one_line(str(page.revision)),
        sentences=tuple((sentence.index, shown(sentence.text)) for sentence in page.sentences),
        supports=source.supports,
    )


def _step(step: Step, by_page: dict[tuple[str, str, Revision | None], SourceView]) -> StepView:
    failed = step.error if step.failed(ErrorKind.MODEL) else None
    asked = step.replies[0].shown_as if step.replies else Cue.THOUGHT
    actions = tuple(
        ActionView(
            label=step.label(position),
            written=None if action.written is None else shown(action.written),
            observation=shown(action.observation),
            source=None if action.source is None else by_page.get(action.source.page),
        )
        for position, action in enumerate(step.actions)
    )
    replies = tuple(
        ReplyView(
            f"{'Thought' if reply.shown_as is Cue.THOUGHT else 'Action'} {step.index}",
            shown(reply.text),
            _calls_text(reply.message),
        )
        for reply in step.replies
    )
    return StepView(
        index=step.index,
        thought=shown(step.thought) if step.thought or asked is Cue.THOUGHT else None,
        actions=actions,
        replies=replies,
        error=shown(failed.message) if failed and failed.message else None,
        costs=step_meta(step),
    )


def _calls_text(message: dict[str, Any] | None) -> str | None:
    """A recorded reply's native calls as JSON text, shown as text (None: it has none)."""
    calls = message.get("tool_calls") if message is not None else None
    if not calls:
        return None
    try:
        return shown(dump_json(calls, indent=1))
    except (TypeError, ValueError, RecursionError):  # a hand-made trace's odd values
        return None


def _sample(sample: Sample) -> SampleView:
    answer = None if sample.answer is None else shown(sample.answer)
    return SampleView(shown(sample.raw), answer, sample.usage.total_tokens)


def _votes(votes: dict[str, int]) -> tuple[tuple[str, int], ...]:
    """Vote counts, most first (ties keep the recorded order, which is the tie-break order)."""
    counts = [(one_line(answer), count) for answer, count in votes.items()]
    return tuple(sorted(counts, key=lambda pair: -pair[1]))


def _text(value: Any) -> str | None:
    """A recorded label (model, method, time…) on one line; None when absent."""
    return None if value is None else one_line(str(value))


def _protocol(value: Any) -> str | None:
    """The protocol, shown unless it was the paper's text (or not recorded)."""
    return None if value is None or str(value) == "text" else one_line(str(value))


def _fork(value: Any) -> str | None:
    if not isinstance(value, dict):
        return None
    step, trace, run_id = (_text(value.get(key)) for key in ("step", "trace", "id"))
    return f"step {step or '?'} of {trace or '?'} (run {run_id or '?'})"
