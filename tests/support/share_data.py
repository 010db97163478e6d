"""Data for the share tests: hostile text, hand-made traces, and real eval folders.

The eval folders themselves are made by the session fixtures of ``support/share_evals.py``.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from bs4 import BeautifulSoup
from eval_fakes import CLAIMS, HOTPOT_SCRIPTS, Q, finish, search
from fake_openai import Reply

ROOT = Path(__file__).resolve().parents[2]
TRACES = sorted((ROOT / "examples" / "traces").glob("*.json"))

# Markup of every kind, escape sequences, bidi controls, a lone surrogate, block syntax.
HOSTILE_LINE = (
    "<script>alert(1)</script></script><img src=x onerror=alert(2)> **bold** _em_ `code` "
    "[link](javascript:alert(3)) ![img](https://evil.example/x.png) </details></td> "
    "<!-- &amp; &lt; | a | b | $x$ ~~gone~~ \x1b[31mred\x1b[0m \x1b]8;;https://evil.example"
    "\x07osc\x1b]8;;\x07 \u202eevil\u202c \x9b31m"
)
HOSTILE = (
    HOSTILE_LINE + "\n# heading\n    indented code\n- item\n1. one\n> quote\n---\n```\nfence\n"
    "\n\n| x | y |\n| --- | --- |\n<div>block</div>\n[ref]: https://evil.example \ud800 end"
)
ESCAPES = ("\x1b", "\x9b", "\u202e", "\u202c", "\x07", "\ud800")


def step(index: int, **fields: Any) -> dict[str, Any]:
    """A trace step in today's shape, with small usage and latency."""
    base = {
        "index": index,
        "thought": f"Thought number {index}.",
        "action": f"Search[Page {index}]",
        "observation": f"Page {index} is a page.",
        "raw": f" Thought number {index}.\nAction {index}: Search[Page {index}]",
        "followup_raw": None,
        "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
        "latency_s": 0.5,
        "tool_latency_s": 0.1,
        "retries": 0,
        "tool_retries": 0,
        "error": None,
        "details": {},
    }
    return {**base, **fields}


def trace_document(steps: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    """A version-1 trace around ``steps``."""
    base = {
        "version": 1,
        "id": "0123456789ab",
        "created": "2026-11-30T12:00:00+00:00",
        "question": "Which magazine was started first?",
        "answer": "Arthur's Magazine",
        "stop_reason": "finish",
        "error": None,
        "config": {"model": "test-model", "prompt": {"name": "hotpotqa", "sha256": "ab" * 32}},
        "prompt_template": "Question: {question}\n",
        "usage": {"prompt_tokens": 300, "completion_tokens": 30, "total_tokens": 330},
        "duration_s": 1.5,
        "steps": steps,
    }
    return {**base, **fields}


def method_trace() -> dict[str, Any]:
    """A trace carrying the fields the paper's sampling methods add (issue 12)."""
    return trace_document(
        [step(1), step(2, followup_raw=" Action 2: Finish[Paris]", action="Finish[Paris]")],
        method="react+cot-sc",
        branch="cot-sc",
        answer="Paris",
        samples=[
            {"raw": "Thought: it is Paris.\nAnswer: Paris", "answer": "Paris", "usage": {}},
            {"raw": "Thought: Lyon?\nAnswer: Lyon", "answer": "Lyon", "usage": {}},
            {"raw": "I am not sure.", "answer": None, "usage": {"prompt_tokens": 7}},
        ],
        votes={"Lyon": 1, "Paris": 2},
    )


def hostile_trace() -> dict[str, Any]:
    """Hostile text in every text field a trace has, the sampling fields included."""
    hostile_step = step(
        1,
        thought=HOSTILE,
        action=HOSTILE_LINE,
        call={"name": HOSTILE_LINE.partition("[")[0].strip(), "argument": HOSTILE, "id": None},
        observation=HOSTILE,
        raw=HOSTILE,
        followup_raw=HOSTILE,
        details={"resolved_title": HOSTILE_LINE, "forced": True},
    )
    failed = step(2, error=HOSTILE, observation="", action=HOSTILE_LINE)
    return trace_document(
        [hostile_step, failed, step(3, error="parse_error", action=None, observation="")],
        question=HOSTILE,
        answer=HOSTILE,
        error=HOSTILE,
        stop_reason=HOSTILE_LINE,
        created=HOSTILE_LINE,
        config={"model": HOSTILE_LINE, "prompt": {"name": HOSTILE_LINE}},
        method=HOSTILE_LINE,
        branch=HOSTILE_LINE,
        samples=[{"raw": HOSTILE, "answer": HOSTILE_LINE, "usage": {}}],
        votes={HOSTILE_LINE: 1},
        forked_from={"trace": HOSTILE_LINE, "id": HOSTILE_LINE, "step": 1},
    )


def write_json(path: Path, document: Any) -> Path:
    """Write JSON as a hostile file may be: ASCII escapes, so lone surrogates survive."""
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


# --- scripts of the real eval folders (share_evals.py runs them) -------------------------

# Run A: right on questions 0 and 2 (F1 partly on 1 and 4), no answer on 5.
A_SCRIPTS = HOTPOT_SCRIPTS
# Run B: right on every question but 2, so 1 flip right → wrong and 4 wrong → right.
B_SCRIPTS: dict[str, list[str | Reply]] = {
    Q[0]: [finish("yes")],
    Q[1]: [search("Kiss and Tell"), finish("Chief of Protocol", 2)],
    Q[2]: [finish("Remnants")],
    Q[3]: [finish("no")],
    Q[4]: [search("Big Stone Gap"), finish("Greenwich Village, New York City", 2)],
    Q[5]: [finish("YG Entertainment")],
}
FEVER_SCRIPTS: dict[str, list[str | Reply]] = {
    CLAIMS[0]: [finish("NOT ENOUGH INFO")],
    CLAIMS[1]: [finish("SUPPORTS")],
    CLAIMS[2]: [search("Soul Food"), finish("SUPPORTS", 2)],
}
HOSTILE_QUESTIONS = [
    "Who wrote " + HOSTILE_LINE + "?",
    "What does the evil page say? " + HOSTILE_LINE,
]
HOSTILE_SCRIPTS: dict[str, list[str | Reply]] = {
    HOSTILE_QUESTIONS[0]: [f" {HOSTILE_LINE}\nAction 1: Finish[</td><script>alert(4)</script>]"],
    HOSTILE_QUESTIONS[1]: [f" {HOSTILE_LINE}\nAction {k}: Search[Evil page]" for k in range(1, 4)],
}


def _row(index: int, question: str, **fields: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"index": index, "id": None, "question": question, "gold": "g"}
    row["answer"] = "a"
    row.update(em=0.0, f1=0.0, stop_reason="finish", error=None, steps=1, tokens=5)
    row.update(latency_s=0.1, trace=None)
    return {**row, **fields}


# Lines appended to the hostile eval's results.jsonl: (line, whether it is a valid row).
EXTRA_LINES: list[tuple[str, bool]] = [
    ('{"index": 10, "question": "cut short by a cra', False),
    (json.dumps(_row(11, "NaN score", em=float("nan"))), False),
    (json.dumps(_row(12, "score above one", em=2.0)), False),
    (json.dumps(_row(13, "negative steps", steps=-1)), False),
    (json.dumps(["not", "an", "object"]), False),
    (
        json.dumps(
            _row(
                20,
                "trace outside",
                trace="../../../../etc/passwd",
                stop_reason="llm_error",
                error="HTTP 401 from \x1b[31mthe endpoint",
            )
        ),
        True,
    ),
    (json.dumps(_row(21, "trace absolute", trace="/etc/passwd")), True),
    (json.dumps(_row(22, "broken trace", trace="traces/broken.json")), True),
    (json.dumps(_row(23, "lone \ud800 surrogate", answer="bad \udfff text", calls=4)), True),
]


def copy_rows(source: Path, target: Path, change: Any) -> Path:
    """A copy of an eval folder whose rows went through ``change(row) -> row | None``."""
    target.mkdir()
    (target / "summary.json").write_bytes((source / "summary.json").read_bytes())
    rows = [json.loads(line) for line in (source / "results.jsonl").read_text().splitlines()]
    kept = [changed for row in rows if (changed := change(copy.deepcopy(row))) is not None]
    (target / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in kept))
    return target


# --- checks shared by the page tests ------------------------------------------------------

FORBIDDEN_TAGS = {"link", "iframe", "frame", "object", "embed", "base", "form", "audio", "video"}


def self_contained(page: str) -> BeautifulSoup:
    """Parse a page and assert it loads nothing: every src/href/url() checked, CSP hashes right.

    Links are to the page itself, or to a page's source (an http(s) link a reader may follow,
    without a referrer). Returns the parsed page. SVG images (``data:`` URIs) are decoded and
    checked the same way.
    """
    soup = BeautifulSoup(page, "html.parser")
    assert page.startswith('<!DOCTYPE html>\n<html lang="en">')
    for tag in soup.find_all(True):
        assert tag.name not in FORBIDDEN_TAGS, tag.name
        for name, value in tag.attrs.items():
            assert not name.startswith("on") and name != "style", (tag.name, name)
            if name == "href" and not value.startswith("#"):
                assert tag.name == "a" and value.startswith(("http://", "https://")), value
                assert tag.get("rel") == ["noreferrer"], tag
            if name == "src":
                assert value.startswith(SVG_URI), value[:80]
                svg_is_inert(base64.b64decode(value[len(SVG_URI) :]).decode("utf-8"))
    (style,) = soup.find_all("style")
    (script,) = soup.find_all("script")
    assert "src" not in script.attrs
    assert "url(" not in style.string and "@import" not in style.string
    csp = soup.find("meta", attrs={"http-equiv": "Content-Security-Policy"})["content"]
    directives = dict(part.strip().split(" ", 1) for part in csp.split(";"))
    assert directives["default-src"] == "'none'"
    assert directives["img-src"] == "data:"
    assert directives["style-src"] == sha256_source(style.string)
    assert directives["script-src"] == sha256_source(script.string)
    assert soup.find("meta", attrs={"name": "viewport"})["content"].startswith("width=device-width")
    return soup


SVG_URI = "data:image/svg+xml;base64,"


def sha256_source(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def svg_is_inert(svg: str) -> None:
    """An SVG image that parses as XML and refers to nothing outside itself."""
    root = ElementTree.fromstring(svg)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    for element in root.iter():
        assert not element.tag.endswith(("script", "foreignObject", "image")), element.tag
        for name, value in element.attrib.items():
            if name.endswith("href"):
                assert value.startswith("#"), value
            assert "url(" not in value or value.startswith("url(#"), value


# Debian's chromium, headless, quiet: no GPU, no background fetches (see test_share_browser).
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
