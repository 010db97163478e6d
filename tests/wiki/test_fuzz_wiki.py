"""Fuzzing the Wikipedia host: whatever it answers, a Search is an observation, the run goes on.

Hypothesis builds hostile ``api.php`` answers of every class issue 10 names: size (a 2 MB
extract, a line of 10,000 ``=``), depth (JSON nested 10⁵ levels), encoding (invalid UTF-8,
lone surrogates, control characters and escape sequences), malformed shapes (any JSON in place
of ``query``, ``pages``, a page, ``search``, ``normalized``, ``redirects``, an extract),
``maxlag`` errors with any ``Retry-After``, error statuses, and answers that trickle forever.
A scripted model searches, looks up and finishes; the real CLI runs in-process. Every case must
answer (a failed Search is shown to the model as its observation, on one line), within a bound,
with no traceback, and write a trace that is valid UTF-8 JSON.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from fake_openai import FakeOpenAI, scripted
from hostile import cli_fuzz, json_value
from hostile_server import Answer, HostileServer, bytewise, chunked, head
from hypothesis import given
from hypothesis import strategies as st
from inproc import HANG_S, Runner, actions, retry_notices

TIMEOUT_S = 0.1
BOUND_S = HANG_S
SCRIPT = (
    " I should search it.\nAction 1: Search[Arthur's Magazine]",
    " Look closer.\nAction 2: Lookup[magazine]",
    " So it is.\nAction 3: Finish[1844]",
)
HOSTILE_TEXT = st.one_of(
    st.text(max_size=80),
    st.sampled_from(
        [
            "Arthur's Magazine (1844–1846) was an American literary periodical.",
            "\x1b[31mred\x1b]8;;http://x\x07 \x9b2J \u202egnp.exe \x00 [bold]x[/] in Ohio.",
            "=" * 10_000,
            "== Heading ==\n" * 50,
            "Magazine sentence. " * 110_000,  # a 2 MB article
            "可以指：\n" + "\n".join(f"Page {i}" for i in range(50)),
        ]
    ),
)


def page(**fields: Any) -> dict[str, Any]:
    return {"query": {"pages": [{"pageid": 1, "ns": 0, "title": "Arthur's Magazine", **fields}]}}


def dumps(value: Any) -> bytes:
    return json.dumps(value).encode()


BODIES = st.one_of(
    HOSTILE_TEXT.map(lambda text: dumps(page(extract=text))),
    json_value.map(lambda value: dumps(page(extract=value))),  # numeric extracts and worse
    json_value.map(lambda value: dumps(page(title=value, extract="x y z"))),
    json_value.map(lambda value: dumps(page(pageprops=value, extract="x y z"))),
    json_value.map(lambda value: dumps({"query": {"pages": value}})),
    json_value.map(lambda value: dumps({"query": {"pages": [value]}})),
    json_value.map(lambda value: dumps({"query": {"search": value}})),
    json_value.map(lambda value: dumps({"query": {"search": [value]}})),  # a hit without a title
    json_value.map(lambda value: dumps({"query": {"normalized": value, "pages": []}})),
    json_value.map(lambda value: dumps({"query": {"redirects": [value], "pages": []}})),
    json_value.map(lambda value: dumps({"query": value})),
    json_value.map(lambda value: dumps({"error": value})),
    json_value.map(dumps),
    st.just(dumps(page(extract="A\\ud800B")).replace(b"\\\\ud800", b"\\ud800")),  # surrogate
    st.just(dumps(page(extract="bad utf-8: ")).replace(b"utf-8: ", b"utf-8: \xff\xfe\xc3")),
    st.integers(1, 100_000).map(lambda depth: b'{"query": ' + b"[" * depth),  # depth
    st.binary(max_size=100),
)
RETRY_AFTER = st.one_of(st.text(max_size=12), st.sampled_from(["nan", "-1", "1.5", "0", "9999"]))


@st.composite
def answers(draw: st.DrawFn) -> Answer:
    """One hostile answer, given to every Wikipedia request of the run."""
    kind = draw(st.sampled_from(["body", "body", "body", "maxlag", "status", "trickle"]))
    if kind == "maxlag":
        body = dumps({"error": {"code": "maxlag", "info": draw(HOSTILE_TEXT)}})
        wait = draw(RETRY_AFTER).encode("latin-1", "replace").decode("latin-1")
        wait = "".join(c for c in wait if c.isprintable()) or "x"
        return Answer(head(Content_Type="application/json", Retry_After=wait) + body)
    if kind == "status":
        status = draw(st.sampled_from(["403 Forbidden", "429 Too Many", "500 Oops", "503 Down"]))
        body = draw(HOSTILE_TEXT).encode("utf-8", "surrogatepass")[:5000]
        kind_of = draw(st.sampled_from(["text/plain", "text/html", "application/json"]))
        length = str(len(body))
        return Answer(
            head(status, Content_Type=kind_of, Content_Length=length, Retry_After="0") + body
        )
    if kind == "trickle":
        body = dumps(page(extract="x" * 10_000))
        return Answer(head(Content_Type="application/json", Transfer_Encoding="chunked"),
                      chunked(bytewise(body)), 0.01)  # fmt: skip
    body = draw(BODIES)
    return Answer(head(Content_Type="application/json", Content_Length=str(len(body))) + body)


@pytest.fixture
def cli(cli: Runner) -> Runner:
    cli.config(retries=1, wiki_timeout_s=TIMEOUT_S)
    return cli


@cli_fuzz(20)
@given(answer=answers())
def test_any_wikipedia_answer_is_an_observation(cli: Runner, answer: Answer) -> None:
    with HostileServer(answer) as wiki, FakeOpenAI(scripted(*SCRIPT)) as llm:
        started = time.monotonic()
        result = cli.ask(llm, wiki, "--json", question="When?")
    assert time.monotonic() - started < BOUND_S
    assert result.code == 0, result.stderr
    assert len(retry_notices(result.stderr)) == len(result.stderr.splitlines()), result.stderr
    summary = json.loads(result.stdout)
    assert summary["answer"] == "1844"
    search, lookup = actions(summary)[:2]
    assert search["action"] == "Search[Arthur's Magazine]" and summary["steps"][0]["error"] is None
    for step in (search, lookup):
        assert "\n" not in step["observation"] and 0 < len(step["observation"]) <= 2000
    if "error" in search:
        assert search["observation"].startswith("Wikipedia is unavailable right now (")
    assert cli.trace()["stop_reason"] == "finish"  # valid UTF-8 JSON, or this fails
    for control in ("\x1b", "\x9b", "\u202e", "\x00"):
        assert control not in result.stdout
