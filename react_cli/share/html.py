"""A trace as one self-contained HTML page: collapsible steps, raw model text, nothing loaded."""

from __future__ import annotations

from react_cli.share.page import Html, el, join, page
from react_cli.share.view import SourceView, StepView, TraceView


def _field(label: str, text: str, *, class_: str = "text") -> Html:
    return el("div", el("span", f"{label}:", class_="label"), el("div", text, class_=class_))


def _step(step: StepView) -> Html:
    n = step.index
    written = [action.written for action in step.actions if action.written is not None]
    headline = "; ".join(written) if written else "no valid action"
    parts = [] if step.thought is None else [_field(f"Thought {n}", step.thought)]
    for action in step.actions:
        if action.written is not None:
            parts.append(_field(f"Action {action.label}", action.written))
        if action.observation:
            parts.append(_field(f"Observation {action.label}", action.observation))
        if action.source is not None:
            parts.append(el("p", f"Source [{action.source.number}]: ", _page(action.source)))
    if step.error is not None:
        parts.append(_field(f"Error {n}", step.error, class_="text error"))
    parts.append(el("p", step.costs, class_="costs"))
    raw: list[Html] = []
    for number, reply in enumerate(step.replies):
        if number:
            raw.append(el("p", f"Extra call for {reply.asked}:", class_="muted"))
        raw.append(el("pre", reply.text))
        if reply.tool_calls is not None:
            raw.append(el("p", "Tool calls:", class_="muted"))
            raw.append(el("pre", reply.tool_calls))
    parts.append(el("details", el("summary", "Raw model text"), *raw, class_="raw"))
    summary = el("summary", f"Step {n} · ", el("span", headline, class_="muted"))
    return el("details", summary, *parts, class_="step")


def _page(source: SourceView) -> Html:
    """A page as a link to it at its revision (a ZIM page: its archive and entry), and the
    revision."""
    page = (
        el("a", source.title, href=source.link, rel="noreferrer")
        if source.link
        else join([source.title, el("span", f" ({source.where})", class_="muted")])
    )
    if source.revision is None:
        return page
    return join([page, el("span", f" · revision {source.revision}", class_="muted")])


def _sources(view: TraceView, heading: str) -> list[Html]:
    """The pages the run was shown, numbered, each with the sentences shown of it."""
    if not view.sources:
        return []
    items = []
    for source in view.sources:
        mark = el("span", " · contains the answer", class_="good") if source.supports else ""
        sentences = (
            el("li", el("span", f"sentence {n}: ", class_="muted"), text, class_="text")
            for n, text in source.sentences
        )
        shown = el("details", el("summary", "sentences shown"), el("ul", *sentences))
        items.append(el("li", _page(source), mark, shown))
    return [el(heading, f"Sources ({len(view.sources)})"), el("ol", *items, class_="sources")]


def facts(rows: list[tuple[str, str]]) -> Html:
    pairs = (join([el("dt", name), el("dd", value)]) for name, value in rows)
    return el("dl", *pairs, class_="facts")


def _samples(view: TraceView, heading: str) -> list[Html]:
    if not view.samples and not view.votes:
        return []
    parts: list[Html] = [el(heading, "Samples and votes")]
    if view.votes:
        parts.append(facts([(answer, f"{count} votes") for answer, count in view.votes]))
    for n, sample in enumerate(view.samples, start=1):
        answer = sample.answer if sample.answer is not None else "no answer"
        summary = el("summary", f"Sample {n} · ", el("span", answer, class_="muted"))
        costs = el("p", f"{sample.tokens:,} tokens", class_="costs")
        parts.append(el("details", summary, el("pre", sample.raw), costs, class_="step"))
    return parts


def _answer(view: TraceView) -> Html:
    if view.answer is not None:
        return el("p", el("span", "Answer: ", class_="label"), view.answer, class_="answer text")
    reason = f": {view.error}" if view.error else ""
    return el("p", f"No answer ({view.stop_reason}){reason}", class_="answer none text")


def trace_body(view: TraceView, level: int = 1) -> Html:
    """The run as a page fragment: the trace page, or a trajectory in a report (``level`` 3)."""
    title, section = f"h{level}", f"h{level + 1}"
    return join(
        [
            el(title, "ReAct run"),
            el("p", view.question, class_="question text"),
            _answer(view),
            facts(list(view.facts)),
            el(section, f"Steps ({len(view.steps)})"),
            *(_step(step) for step in view.steps),
            *_samples(view, section),
            *_sources(view, section),
        ]
    )


def trace_page(view: TraceView) -> str:
    """The whole page of one run."""
    expand = el("button", "Expand all steps", type="button", data_expand=True)
    tools = el("p", expand, class_="tools")
    return page(f"ReAct run: {view.question[:80]}", el("main", tools, trace_body(view)))
