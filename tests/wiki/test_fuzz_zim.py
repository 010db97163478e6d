"""Fuzzing ZIM archives: whatever a page holds, or a damaged entry, a run answers or stops cleanly.

Hypothesis builds pages from every class issue 10 names: size (300 KB of text), depth
(elements nested thousands deep, nested lists of links on a disambiguation page), encoding
(invalid UTF-8, encoded surrogates, control characters and escape sequences), malformed markup
(every tag the HTML slicer skips, left unclosed; headings that never end; odd links). Each page
goes into a real archive (libzim's writer) searched by ``react-cli ask`` in-process with a
scripted model. Damaged archives have a directory entry whose name is no longer UTF-8 (what
libzim reports with a message it cannot decode): the usual "not a readable ZIM archive" usage
error when met at open, else a failed Search shown to the model. Never a traceback, always
within a bound, the trace valid UTF-8 JSON.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI, scripted
from hostile import cli_fuzz
from hypothesis import given
from hypothesis import strategies as st
from inproc import Runner, actions
from zim_fixtures import build_archive

BOUND_S = 10.0
TITLE = "Zqxpage"
SCRIPT = (
    f" I should search it.\nAction 1: Search[{TITLE}]",
    " Look closer.\nAction 2: Lookup[page]",
    " So it is.\nAction 3: Finish[done]",
)
FRAGMENTS = st.one_of(
    st.text(max_size=40).map(lambda text: text.encode()),
    st.sampled_from(
        [
            b"<p>The page is a test.</p>",
            b"<style>", b"<script>", b"<math", b"<figure>", b'<sup class="reference">',
            b'<sup id="cite_ref', b"<a href=\"Other\">Other</a>", b"<a href=\"../../x\">",
            b'<a href="%ZZ">', b'<a href="http://x">', b"<a", b"<h2>", b"<h2>See also</h2>",
            b'<div id="toc"', b"</ul>", b"</div>", b"<table><tr><td>cell", b"<li>", b"<ul>",
            b'<span class="mw-editsection"><span class="mw-editsection-bracket">[</span>',
            b'<div class="disambig">', b"may refer to:", b"\x1b[31m\x1b]8;;x\x07\x9b\xe2\x80\xae",
            b"\xff\xfe\xc3(", b"\xed\xa0\x80 encoded surrogate", b"\x00", b"=" * 3000,
            b'<div id="mw-content-text">', b'<p class="mwe-math-element"><img alt="x^2">',
        ]
    ),
    st.integers(1, 3000).map(lambda depth: b"<div>" * depth + b"deep text"),
    st.integers(1, 1000).map(lambda depth: b'<ul><li><a href="Other">Other</a>' * depth),
    st.just(b"<p>" + b"A long sentence of the page. " * 10_000 + b"</p>"),  # 300 KB
)  # fmt: skip
PAGES = st.lists(FRAGMENTS, max_size=8).map(b"".join)


def ask(cli: Runner, archive: Path) -> dict[str, object]:
    """Run the scripted search; it must answer. Returns the --json summary."""
    with FakeOpenAI(scripted(*SCRIPT)) as llm:
        started = time.monotonic()
        result = cli(
            ["ask", "What?", "--json", "--wiki", f"zim:{archive}"],
            OPENAI_BASE_URL=llm.url,
            REACT_CLI_MODEL="m",
        )
    assert time.monotonic() - started < BOUND_S
    assert result.code == 0 and result.stderr == "", result.stderr
    assert cli.trace()["stop_reason"] == "finish"  # valid UTF-8 JSON, or this fails
    for control in ("\x1b", "\x9b", "\u202e", "\x00"):
        assert control not in result.stdout
    summary: dict[str, object] = json.loads(result.stdout)
    return summary


@cli_fuzz(10)
@given(html=PAGES, as_redirect=st.booleans())
def test_any_page_is_an_observation(
    cli: Runner, tmp_path: Path, html: bytes, as_redirect: bool
) -> None:
    pages = {"Other": b"<p>The other page is here.</p>"}
    if as_redirect:  # the searched title is a redirect to the hostile page
        pages["Target"] = html
        archive = build_archive(tmp_path / "fuzz.zim", pages, redirects={TITLE: "Target"})
    else:
        pages[TITLE] = html
        archive = build_archive(tmp_path / "fuzz.zim", pages)
    summary = ask(cli, archive)
    assert isinstance(summary["steps"], list) and summary["answer"] == "done"
    for step in actions(summary)[:2]:
        assert "\n" not in step["observation"] and 0 < len(step["observation"]) <= 2000


DAMAGED_PATH, DAMAGED_TITLE = "Azqx_path", "Azqxpage"


def damaged(path: Path, name: str, occurrences: slice, byte: int) -> Path:
    """A small archive where the stored copies ``occurrences`` of ``name`` (the page's path or
    title: directory entry, listings) have their third byte replaced by ``byte`` (not UTF-8)."""
    build_archive(
        path, {"Other": b"<p>Other page.</p>"}, pages_by_path={DAMAGED_PATH: DAMAGED_TITLE}
    )
    data = bytearray(path.read_bytes())
    encoded = name.encode()
    places = [i for i in range(len(data)) if data.startswith(encoded, i)]
    for place in places[occurrences]:
        data[place + 2] = byte
    path.write_bytes(bytes(data))
    return path


def ask_damaged(cli: Runner, archive: Path) -> tuple[int, str, str]:
    """The exit code, stderr and (if it answered) first observation of a Search in it."""
    script = [SCRIPT[0].replace(TITLE, DAMAGED_TITLE), *SCRIPT[1:]]
    with FakeOpenAI(scripted(*script)) as llm:
        result = cli(
            ["ask", "What?", "--json", "--wiki", f"zim:{archive}"],
            OPENAI_BASE_URL=llm.url,
            REACT_CLI_MODEL="m",
        )
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    if result.code != 0:
        return result.code, result.stderr, ""
    return 0, result.stderr, json.loads(result.stdout)["steps"][0]["actions"][0]["observation"]


UNREADABLE = "is not a readable ZIM archive (an entry whose name or message is not UTF-8 text)"
READ_ERROR = "Wikipedia is unavailable right now (ZIM archive read error (an entry "


def test_a_damaged_name_met_at_open_is_the_usual_usage_error(cli: Runner, tmp_path: Path) -> None:
    archive = damaged(tmp_path / "damaged.zim", DAMAGED_PATH, slice(None), 0xFF)
    code, stderr, _ = ask_damaged(cli, archive)
    assert (code, stderr) == (2, f"Error: {str(archive)!r} {UNREADABLE}\n")


def test_a_damaged_name_met_in_a_search_is_a_failed_search(cli: Runner, tmp_path: Path) -> None:
    archive = damaged(tmp_path / "damaged.zim", DAMAGED_TITLE, slice(None), 0xFF)
    code, stderr, observation = ask_damaged(cli, archive)
    assert code == 0, stderr
    assert observation.startswith(READ_ERROR + "whose name or message is not UTF-8 text))")


@pytest.mark.parametrize(("name", "byte"), [(DAMAGED_PATH, 0xFF), (DAMAGED_TITLE, 0x80)])
@pytest.mark.parametrize("occurrence", [0, 1, 2, 3])
def test_any_damaged_name_is_unreadable_or_a_failed_search(
    cli: Runner, tmp_path: Path, occurrence: int, name: str, byte: int
) -> None:
    archive = damaged(tmp_path / "damaged.zim", name, slice(occurrence, occurrence + 1), byte)
    code, stderr, observation = ask_damaged(cli, archive)
    if code == 2:
        assert stderr == f"Error: {str(archive)!r} {UNREADABLE}\n"
    else:
        assert code == 0, stderr
        assert observation.startswith(("The page is intact.", "Could not find", READ_ERROR))
