"""A trace as GitHub Markdown, with untrusted text escaped so it can only ever be text.

Untrusted text is backslash-escaped wherever CommonMark or GitHub could read syntax in it:
the inline characters ``\\ ` * _ ~ [ ] < > & | $`` everywhere, and list, heading and setext
markers at the start of a line; lines are stripped so none becomes an indented code block.
Each such escape is a literal character in CommonMark, so no emphasis, link, HTML, heading,
list or table can arise from the text. The only HTML in the output is our own ``<details>``,
which folds long observations.
"""

from __future__ import annotations

import re

from react_cli.share.view import ActionView, SourceView, StepView, TraceView

FOLD_CHARS = 600
"""An observation longer than this (or of more than 5 lines) is folded in ``<details>``."""
_FOLD_LINES = 5
_INLINE = re.compile(r"[\\`*_~\[\]<>&|$]")
_LINE_START = re.compile(r"^(?:[-+=#]|(\d{1,9})([.)]))")


def _line_start(match: re.Match[str]) -> str:
    digits, mark = match.groups()
    return f"{digits}\\{mark}" if digits else "\\" + match.group()


def escape(line: str) -> str:
    """One line of untrusted text as literal Markdown text."""
    return _LINE_START.sub(_line_start, _INLINE.sub(r"\\\g<0>", line))


def paragraphs(text: str) -> str:
    """Untrusted text as Markdown paragraphs: its lines kept (hard breaks), blank lines kept."""
    blocks: list[list[str]] = [[]]
    for line in text.splitlines():
        if line.strip():
            blocks[-1].append(escape(line.strip()))
        elif blocks[-1]:
            blocks.append([])
    return "\n\n".join("\\\n".join(block) for block in blocks if block)


def cell(text: str) -> str:
    """Untrusted text as one table cell (lines joined, ``|`` escaped with the rest)."""
    return escape(" ".join(text.split()))


def _labelled(label: str, text: str) -> str:
    body = paragraphs(text)
    return f"**{label}:** {body}" if body else f"**{label}:** *(empty)*"


def _observation(action: ActionView) -> str:
    label = f"Observation {action.label}"
    text = action.observation
    if len(text) <= FOLD_CHARS and len(text.splitlines()) <= _FOLD_LINES:
        return _labelled(label, text)
    return (
        f"<details>\n<summary>{label} ({len(text):,} characters)</summary>\n\n"
        f"{paragraphs(text)}\n\n</details>"
    )


def _page(source: SourceView) -> str:
    """A page as a link to it at its revision (a ZIM page, which has no URL: its archive and
    entry), and the revision."""
    title = escape(source.title)
    page = f"[{title}]({source.link})" if source.link else f"{title} ({escape(source.where)})"
    return page if source.revision is None else f"{page}, revision {escape(source.revision)}"


def _step(step: StepView) -> list[str]:
    blocks = [f"### Step {step.index}"]
    if step.thought is not None:
        blocks.append(_labelled(f"Thought {step.index}", step.thought))
    for action in step.actions:
        if action.written is not None:
            blocks.append(_labelled(f"Action {action.label}", action.written))
        if action.observation:
            blocks.append(_observation(action))
        if action.source is not None:
            blocks.append(f"Source \\[{action.source.number}\\]: {_page(action.source)}")
    if step.error is not None:
        blocks.append(_labelled(f"Error {step.index}", step.error))
    blocks.append("*" + escape(step.costs) + "*")
    return blocks


def _sources(sources: tuple[SourceView, ...]) -> list[str]:
    """The pages the run was shown, numbered, each with the sentences shown of it."""
    if not sources:
        return []
    items = []
    for source in sources:
        mark = " · contains the answer" if source.supports else ""
        lines = [f"{source.number}. {_page(source)}{mark}"]
        lines += [f"   - sentence {n}: {cell(text)}" for n, text in source.sentences]
        items.append("\n".join(lines))
    return ["## Sources", "\n".join(items)]


def _table(header: tuple[str, str], rows: list[tuple[str, str]]) -> str:
    lines = [f"| {header[0]} | {header[1]} |", "| --- | --- |"]
    lines += [f"| {cell(name)} | {cell(value)} |" for name, value in rows]
    return "\n".join(lines)


def trace_markdown(view: TraceView) -> str:
    """The whole run: question, facts, every step, samples and votes if any, the answer."""
    blocks = ["# ReAct run", _labelled("Question", view.question)]
    answer = view.answer if view.answer is not None else "—"
    blocks.append(_table(("Run", ""), [("Answer", answer), *view.facts]))
    for step in view.steps:
        blocks += _step(step)
    if view.votes:
        blocks += ["## Votes", _table(("Answer", "Votes"), [(a, str(n)) for a, n in view.votes])]
    if view.samples:
        rows = [
            (f"Sample {n}", f"{s.answer if s.answer is not None else '—'} ({s.tokens:,} tokens)")
            for n, s in enumerate(view.samples, start=1)
        ]
        blocks += ["## Samples", _table(("Sample", "Answer"), rows)]
    blocks.append("## Answer")
    if view.answer is not None:
        blocks.append(paragraphs(view.answer))
    else:
        reason = f": {view.error}" if view.error else ""
        blocks.append(paragraphs(f"No answer ({view.stop_reason}){reason}"))
    blocks += _sources(view.sources)
    return "\n\n".join(blocks) + "\n"
