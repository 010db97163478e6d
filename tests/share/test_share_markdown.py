"""Trace → GitHub Markdown: parsed back with a CommonMark parser (markdown-it-py, GFM tables)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from markdown_it.token import Token
from share_data import (
    ESCAPES,
    HOSTILE,
    HOSTILE_LINE,
    TRACES,
    hostile_trace,
    method_trace,
    step,
    trace_document,
    write_json,
)

from react_cli.share.export import ExportFormat, export_trace
from react_cli.share.markdown import FOLD_CHARS, cell, paragraphs
from react_cli.share.text import MAX_SHOWN_CHARS, clean, one_line
from react_cli.traces.trace import Trace

PARSER = MarkdownIt("commonmark").enable(["table", "strikethrough"])
# Token types untrusted text must never produce (ours: headings, tables, strong, em, details).
FOREIGN = {
    "link_open",
    "image",
    "code_inline",
    "code_block",
    "fence",
    "blockquote_open",
    "bullet_list_open",
    "ordered_list_open",
    "hr",
    "s_open",
    "html_inline",
}


def parse(markdown: str) -> list[Token]:
    return PARSER.parse(markdown)


def flat(tokens: list[Token]) -> list[Token]:
    """Block tokens and the children of inline ones, in order."""
    out = []
    for token in tokens:
        out.append(token)
        out.extend(token.children or [])
    return out


def inline_text(token: Token) -> str:
    """The text an inline token renders to (line breaks as newlines, markup left out)."""
    parts = []
    for child in token.children or []:
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append("\n")
    return "".join(parts)


def headings(tokens: list[Token]) -> list[tuple[str, str]]:
    return [
        (token.tag, inline_text(tokens[n + 1]))
        for n, token in enumerate(tokens)
        if token.type == "heading_open"
    ]


def paragraph_texts(tokens: list[Token]) -> list[str]:
    return [
        inline_text(tokens[n + 1])
        for n, token in enumerate(tokens)
        if token.type == "paragraph_open"
    ]


def table_rows(tokens: list[Token]) -> list[list[str]]:
    rows: list[list[str]] = []
    for n, token in enumerate(tokens):
        if token.type == "tr_open":
            rows.append([])
        elif token.type in ("td_open", "th_open"):
            rows[-1].append(inline_text(tokens[n + 1]))
    return rows


def expected_paragraphs(text: str) -> str:
    """What ``paragraphs`` promises: lines stripped, blank lines between paragraphs kept."""
    blocks: list[list[str]] = [[]]
    for line in text.splitlines():
        if line.strip():
            blocks[-1].append(line.strip())
        elif blocks[-1]:
            blocks.append([])
    return "\n\n".join("\n".join(block) for block in blocks if block)


def markdown_of(tmp_path: Path, document: dict[str, Any]) -> str:
    return export_trace(write_json(tmp_path / "trace.json", document), ExportFormat.MARKDOWN)


@pytest.mark.parametrize("path", TRACES, ids=lambda path: path.stem)
def test_real_traces_give_the_expected_markdown_structure(path: Path) -> None:
    trace = json.loads(path.read_text(encoding="utf-8"))
    markdown = export_trace(path, ExportFormat.MARKDOWN)
    tokens = parse(markdown)
    steps = Trace.read(path).run.steps  # as any version records them, upgraded
    sampled = [("h2", "Votes"), ("h2", "Samples")] if "samples" in trace else []
    assert headings(tokens) == [
        ("h1", "ReAct run"),
        *(("h3", f"Step {s.index}") for s in steps),
        *sampled,  # a sampling method's votes and samples
        ("h2", "Answer"),
    ]
    texts = paragraph_texts(tokens)
    assert texts[0] == f"Question: {trace['question']}"
    for s in steps:
        if s.thought:
            assert f"Thought {s.index}: {s.thought}" in texts
        for position, action in enumerate(s.actions):
            n = s.label(position)  # "2", or "2.1" for a call of a reply of several
            assert f"Action {n}: {action.written}" in texts
            observation = clean(action.observation)
            if len(observation) > FOLD_CHARS:  # folded: the label is in <details>' summary
                assert observation in texts
                assert f"<summary>Observation {n} ({len(observation):,} characters)" in markdown
            elif observation:
                assert f"Observation {n}: {observation}" in texts
    rows = table_rows(tokens)
    tables = rows.index(["Answer", "Votes"]) if ["Answer", "Votes"] in rows else len(rows)
    facts = dict(row for row in rows[1:tables])  # the run's table, before a votes table
    answer = trace["answer"] if trace["answer"] is not None else "—"
    assert facts["Answer"] == answer
    assert facts["Stop reason"] == trace["stop_reason"]
    assert facts["Model"] == trace["config"]["model"]
    assert facts["Steps"] == str(len(steps))
    assert facts["Tokens"].startswith(f"{trace['usage']['total_tokens']:,}") or (
        trace["usage"]["total_tokens"] == 0 and facts["Tokens"] == "not reported by the endpoint"
    )
    assert ("Forked from" in facts) == ("forked_from" in trace)
    assert "Votes" not in dict(headings(tokens)).values()
    assert not FOREIGN & {token.type for token in flat(tokens)}
    final = texts[-1]
    assert final == (trace["answer"] or f"No answer ({trace['stop_reason']})")


def test_hostile_text_stays_text_in_every_field(tmp_path: Path) -> None:
    markdown = markdown_of(tmp_path, hostile_trace())
    for escape in ESCAPES:
        assert escape not in markdown
    tokens = parse(markdown)
    assert not FOREIGN & {token.type for token in flat(tokens)}
    # The only HTML is our own <details>, for the long observation and nowhere else.
    blocks = [token.content.strip() for token in tokens if token.type == "html_block"]
    assert blocks == [
        "<details>\n<summary>Observation 1 (" + blocks[0].split("(", 1)[1],
        "</details>",
    ]
    assert headings(tokens) == [
        ("h1", "ReAct run"),
        ("h3", "Step 1"),
        ("h3", "Step 2"),
        ("h3", "Step 3"),
        ("h2", "Votes"),
        ("h2", "Samples"),
        ("h2", "Answer"),
    ]
    texts = paragraph_texts(tokens)
    shown = expected_paragraphs(clean(HOSTILE))
    assert f"Question: {shown}" in "\n\n".join(texts)
    assert f"Thought 1: {shown}" in "\n\n".join(texts)
    assert f"Error 2: {shown}" in "\n\n".join(texts)
    assert "\n\n".join(texts).endswith(shown)  # the answer, last
    line = one_line(HOSTILE_LINE)  # labels are one line, clipped
    facts = dict(row for row in table_rows(tokens)[1:] if len(row) == 2)
    assert facts["Model"] == facts["Method"] == facts["Branch"] == facts["Stop reason"] == line
    assert facts["Forked from"] == f"step 1 of {line} (run {line})"
    assert [line, "1"] in table_rows(tokens)  # the votes table


def test_long_observations_fold_and_huge_ones_are_clipped(tmp_path: Path) -> None:
    long = "A sentence of an article. " * (FOLD_CHARS // 10)
    huge = "x" * (MAX_SHOWN_CHARS + 12_345)
    five, six = "\n".join("abcde"), "\n".join("abcdef")  # short, but six lines fold
    observations = ["short", long, huge, five, six]
    trace = trace_document([step(n, observation=o) for n, o in enumerate(observations, start=1)])
    tokens = parse(markdown_of(tmp_path, trace))
    summaries = [t.content for t in tokens if t.type == "html_block" and "<summary>" in t.content]
    assert [summary.split("<summary>")[1].split(" (")[0] for summary in summaries] == [
        "Observation 2",
        "Observation 3",
        "Observation 5",
    ]
    assert f"Observation 2 ({len(long):,} characters)" in summaries[0]
    assert "Observation 4: a\nb\nc\nd\ne" in paragraph_texts(tokens)
    texts = paragraph_texts(tokens)
    assert "Observation 1: short" in texts
    assert long.strip() in texts
    assert "x" * MAX_SHOWN_CHARS + " [… 12,345 more characters not shown]" in texts


def test_sampling_fields_are_shown_when_present(tmp_path: Path) -> None:
    tokens = parse(markdown_of(tmp_path, method_trace()))
    assert [title for _, title in headings(tokens)][-3:] == ["Votes", "Samples", "Answer"]
    rows = table_rows(tokens)
    facts = dict(row for row in rows[1:] if len(row) == 2)
    assert facts["Method"] == "react+cot-sc" and facts["Branch"] == "cot-sc"
    assert facts["Model calls"] == "6"  # 2 steps, one with an extra Action call, 3 samples
    assert ["Paris", "2"] in rows and ["Lyon", "1"] in rows
    assert rows.index(["Paris", "2"]) < rows.index(["Lyon", "1"])  # most votes first
    assert ["Sample 3", "— (7 tokens)"] in rows


def test_a_trace_without_them_shows_no_sampling_parts(tmp_path: Path) -> None:
    tokens = parse(markdown_of(tmp_path, trace_document([step(1)])))
    assert [title for _, title in headings(tokens)] == ["ReAct run", "Step 1", "Answer"]
    facts = dict(row for row in table_rows(tokens)[1:])
    assert "Method" not in facts and "Branch" not in facts and "Forced answer" not in facts


LINE_PIECES = st.sampled_from(
    [
        *"\\`*_~[]<>&|$#-+=.)(!:1234567890 \taé\n\r\u00a0{}'\"/@^?,",
        "&amp;",
        "&#x41;",
        "<a>",
        "</details>",
        "```",
        "~~~",
        "---",
        "***",
        "    ",
        "1.",
        "2)",
        "http://x.y",
        "[^1]",
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(LINE_PIECES, max_size=40).map("".join))
def test_escaped_text_renders_back_to_itself(text: str) -> None:
    tokens = parse(paragraphs(text))
    assert {token.type for token in tokens} <= {"paragraph_open", "inline", "paragraph_close"}
    assert not FOREIGN & {token.type for token in flat(tokens)}
    assert "\n\n".join(paragraph_texts(tokens)) == expected_paragraphs(text)


@settings(max_examples=200, deadline=None)
@given(st.lists(LINE_PIECES, min_size=1, max_size=30).map("".join))
def test_a_table_cell_stays_one_cell(text: str) -> None:
    tokens = parse(f"| a | b |\n| --- | --- |\n| {cell(text)} | end |\n")
    assert table_rows(tokens)[1] == [" ".join(text.split()), "end"]
