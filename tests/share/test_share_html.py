"""Trace → one self-contained HTML page: parsed back, nothing external, everything escaped."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup
from hypothesis import given, settings
from hypothesis import strategies as st
from share_data import (
    ESCAPES,
    HOSTILE,
    HOSTILE_LINE,
    TRACES,
    hostile_trace,
    method_trace,
    self_contained,
    step,
    trace_document,
    write_json,
)

from react_cli.core.errors import TraceError, UsageError
from react_cli.share.export import ExportFormat, export_trace, write_output
from react_cli.share.page import el
from react_cli.share.text import clean, one_line
from react_cli.traces.trace import Trace


def page_of(tmp_path: Path, document: dict[str, Any]) -> str:
    return export_trace(write_json(tmp_path / "trace.json", document), ExportFormat.HTML)


def text(node: Any) -> str:
    return str(node.get_text())


@pytest.mark.parametrize("path", TRACES, ids=lambda path: path.stem)
def test_real_traces_give_self_contained_pages(path: Path) -> None:
    trace = json.loads(path.read_text(encoding="utf-8"))
    loaded = Trace.read(path).run.steps  # as any version records them, upgraded
    soup = self_contained(export_trace(path, ExportFormat.HTML))
    assert text(soup.find(class_="question")) == trace["question"]
    steps = soup.find_all("details", class_="step")
    samples = trace.get("samples", [])  # a sampling method's, after the steps
    assert len(steps) == len(loaded) + len(samples)
    for details, recorded in zip(steps, loaded, strict=False):
        assert "open" not in details.attrs  # collapsed until the reader opens it
        n = recorded.index
        written = "; ".join(str(action.written) for action in recorded.actions)
        assert text(details.summary) == f"Step {n} · {written}"
        fields = [text(div) for div in details.find_all("div", recursive=False)]
        if recorded.thought:
            assert f"Thought {n}:{recorded.thought}" in fields
        for position, action in enumerate(recorded.actions):
            label = recorded.label(position)
            assert f"Action {label}:{action.written}" in fields
            if action.observation:
                assert f"Observation {label}:{clean(action.observation)}" in fields
        raw = details.find("details", class_="raw")
        assert text(raw.summary) == "Raw model text"
        pres = raw.find_all("pre")
        assert text(pres[0]) == recorded.replies[0].text
        message = recorded.replies[0].message or {}
        if message.get("tool_calls"):  # native calls shown as sent
            assert json.loads(text(pres[1])) == message["tool_calls"]
    answer = text(soup.find(class_="answer"))
    expected = f"Answer: {trace['answer']}" if trace["answer"] else "No answer"
    assert answer.startswith(expected)
    facts = dict(zip(map(text, soup.find_all("dt")), map(text, soup.find_all("dd")), strict=True))
    assert facts["Model"] == trace["config"]["model"]
    assert facts["Steps"] == str(len(loaded))
    assert facts["Model calls"] == str(trace.get("calls", len(trace["steps"])))
    for answer_voted, count in trace.get("votes", {}).items():
        assert facts[answer_voted] == f"{count} votes"
    assert soup.find("button", attrs={"data-expand": True}) is not None


def test_hostile_text_is_escaped_everywhere(tmp_path: Path) -> None:
    page = page_of(tmp_path, hostile_trace())
    for escape in ESCAPES:
        assert escape not in page
    soup = self_contained(page)
    assert [tag.name for tag in soup.find_all(["script", "img", "a"])] == ["script"]  # ours
    shown = clean(HOSTILE)
    assert text(soup.find(class_="question")) == shown
    first, failed, no_action = soup.find_all("details", class_="step")[:3]
    assert "Thought 1:" + shown in [text(div) for div in first.find_all("div", recursive=False)]
    assert [text(pre) for pre in first.find("details", class_="raw").find_all("pre")] == [
        shown,
        shown,
    ]
    assert "forced answer" in text(first)
    assert text(failed.find(class_="error")) == shown
    assert "no valid action" in text(no_action.summary) and "no valid action" in text(no_action)
    assert text(soup.find(class_="answer")) == "Answer: " + shown
    samples = soup.find_all("details", class_="step")[3:]
    assert [text(sample.pre) for sample in samples] == [shown]
    facts = dict(zip(map(text, soup.find_all("dt")), map(text, soup.find_all("dd")), strict=True))
    assert facts["Model"] == facts["Method"] == facts["Branch"] == one_line(HOSTILE_LINE)
    assert soup.title.string.startswith("ReAct run: <script>")  # as text, in the title


def test_sampling_fields_render_when_present(tmp_path: Path) -> None:
    soup = self_contained(page_of(tmp_path, method_trace()))
    assert [text(h) for h in soup.find_all("h2")] == ["Steps (2)", "Samples and votes"]
    samples = soup.find_all("details", class_="step")[2:]
    assert [text(sample.summary) for sample in samples] == [
        "Sample 1 · Paris",
        "Sample 2 · Lyon",
        "Sample 3 · no answer",
    ]
    second = soup.find_all("details", class_="step")[1]
    assert [text(pre) for pre in second.find_all("pre")] == [
        " Thought number 2.\nAction 2: Search[Page 2]",
        " Action 2: Finish[Paris]",
    ]
    facts = dict(zip(map(text, soup.find_all("dt")), map(text, soup.find_all("dd")), strict=True))
    assert facts["Paris"] == "2 votes" and facts["Model calls"] == "6"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(exclude_categories=("Cs", "Cc"))))
def test_text_and_attributes_parse_back_unchanged(value: str) -> None:
    fragment = el("p", value, el("span", value), data_key=value, title=value)
    p = BeautifulSoup(fragment, "html.parser").p
    assert p is not None and p.find_all(True) == [p.span]
    assert text(p) == value * 2
    assert p["data-key"] == value and p["title"] == value


def test_an_unreadable_trace_is_a_trace_error(tmp_path: Path) -> None:
    with pytest.raises(TraceError, match="no such trace file"):
        export_trace(tmp_path / "missing.json", ExportFormat.MARKDOWN)
    bad = trace_document([step(1)], samples={"not": "a list"})
    with pytest.raises(TraceError, match=r"trace\.json: malformed trace \(samples is dict"):
        page_of(tmp_path, bad)
    with pytest.raises(TraceError, match="a vote count is -1"):
        page_of(tmp_path, trace_document([step(1)], votes={"x": -1}))


def test_write_output_replaces_the_file_or_says_why_not(tmp_path: Path) -> None:
    target = tmp_path / "run.html"
    target.write_text("old", encoding="utf-8")
    write_output(target, "<p>new</p>\n")
    assert target.read_text(encoding="utf-8") == "<p>new</p>\n"
    assert [path.name for path in tmp_path.iterdir()] == ["run.html"]  # no temporary file left
    with pytest.raises(UsageError, match=r"^cannot write .*: is a directory, not a regular file$"):
        write_output(tmp_path, "x")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(UsageError, match=r"^cannot write .*fifo: is a FIFO"):
        write_output(fifo, "x")
    assert (target.stat().st_mode & 0o777) == 0o666 & ~current_umask()
    with pytest.raises(UsageError, match=r"^cannot write .*missing/run.html: No such file"):
        write_output(tmp_path / "missing" / "run.html", "x")


def current_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
