"""Time limits hold whatever a server sends, for every transfer shape, model and Wikipedia.

Each server here keeps the connection busy forever without ever finishing: SSE keep-alives,
chunks without choices, empty deltas, one byte at a time (chunked, Content-Length, or delimited
by the close), even the response head a byte at a time. The bytes come faster than any socket
timeout, so only the request's own limit (``timeout_s`` / ``wiki_timeout_s``, each attempt) and
the run's ``--timeout`` can end them; both must, within a bound.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, scripted
from hostile_server import Answer, HostileServer, bytewise, chunked, forever, head
from inproc import HANG_S, Runner, one_error_line

TIMEOUT_S = 0.1  # timeout_s and wiki_timeout_s in these tests
TRICKLE_S = 0.02  # far below any socket timeout: only a limit on the whole request ends it
BOUND_S = HANG_S  # a run that must stop after one cut attempt (TIMEOUT_S) ends well before this
SSE = "text/event-stream"


def endless_sse(event: bytes) -> Iterator[bytes]:
    """A valid SSE start, then ``event`` forever."""
    start = b'data: {"choices": [{"delta": {"role": "assistant", "content": " Hmm"}}]}\n\n'
    yield start
    yield from forever(event)


def endless_bytes() -> Iterator[bytes]:
    """The start of a chunk that never ends, one byte at a time."""
    yield from bytewise(b'data: {"choices": [{"delta": {"content": "')
    yield from forever(b"a")


MODEL_SHAPES = {
    "keepalive-comments": Answer(head(Content_Type=SSE, Transfer_Encoding="chunked"),
                                 chunked(endless_sse(b": ping\n\n")), TRICKLE_S),
    "chunks-without-choices": Answer(head(Content_Type=SSE, Transfer_Encoding="chunked"),
                                     chunked(endless_sse(b'data: {"object": "x"}\n\n')), TRICKLE_S),
    "empty-deltas": Answer(head(Content_Type=SSE, Transfer_Encoding="chunked"),
                           chunked(endless_sse(b'data: {"choices": [{"delta": {}}]}\n\n')),
                           TRICKLE_S),
    "bytes-chunked": Answer(head(Content_Type=SSE, Transfer_Encoding="chunked"),
                            chunked(endless_bytes()), TRICKLE_S),
    "bytes-content-length": Answer(head(Content_Type=SSE, Content_Length="1000000000"),
                                   endless_bytes(), TRICKLE_S),
    "bytes-until-close": Answer(head(Content_Type=SSE, Connection="close"), endless_bytes(),
                                TRICKLE_S),
    "json-bytes-content-length": Answer(head(Content_Type="application/json",
                                             Content_Length="1000000000"),
                                        bytewise(b'{"choices": [' * 10**6), TRICKLE_S),
    "head-bytes": Answer(head(X_Padding="x" * 10**6), trickle_head=True, interval_s=TRICKLE_S),
    "keepalive-flood": Answer(head(Content_Type=SSE, Connection="close"),
                              endless_sse(b": ping\n\n")),
}  # fmt: skip


@pytest.fixture
def cli(cli: Runner) -> Runner:
    cli.config(retries=0, timeout_s=TIMEOUT_S, wiki_timeout_s=TIMEOUT_S)
    return cli


@pytest.mark.parametrize("shape", MODEL_SHAPES)
def test_a_model_request_ends_at_timeout_s(cli: Runner, wiki: FakeMediaWiki, shape: str) -> None:
    with HostileServer(MODEL_SHAPES[shape]) as server:
        result = cli(
            ["ask", "When?"],
            OPENAI_BASE_URL=server.url + "/v1",
            REACT_CLI_MODEL="m",
            REACT_CLI_WIKI=wiki.url,
        )
    assert result.code == 1 and result.stdout == ""
    assert "timed out waiting for the answer" in one_error_line(result.stderr)
    assert cli.trace()["stop_reason"] == "llm_error"
    assert cli.elapsed_s < BOUND_S


@pytest.mark.parametrize("shape", ["bytes-content-length", "head-bytes"])
def test_the_run_ends_at_its_timeout(cli: Runner, wiki: FakeMediaWiki, shape: str) -> None:
    cli.config(retries=3, timeout_s=60)  # only --timeout can end this early
    with HostileServer(MODEL_SHAPES[shape]) as server:
        result = cli(
            ["ask", "When?", "--timeout", "0.15"],
            OPENAI_BASE_URL=server.url + "/v1",
            REACT_CLI_MODEL="m",
            REACT_CLI_WIKI=wiki.url,
        )
    assert result.code == 1
    assert "time limit (0.15 s)" in one_error_line(result.stderr)
    assert cli.trace()["stop_reason"] == "timeout"
    assert cli.elapsed_s < BOUND_S


def wiki_json_start() -> bytes:
    return b'{"batchcomplete": true, "query": {"pages": [{"title": "'


WIKI_SHAPES = {
    "bytes-chunked": Answer(head(Content_Type="application/json", Transfer_Encoding="chunked"),
                            chunked(bytewise(wiki_json_start() + b"a" * 10**6)), TRICKLE_S),
    "bytes-content-length": Answer(head(Content_Type="application/json",
                                        Content_Length="1000000000"),
                                   bytewise(wiki_json_start() + b"a" * 10**6), TRICKLE_S),
    "bytes-until-close": Answer(head(Content_Type="application/json", Connection="close"),
                                bytewise(wiki_json_start() + b"a" * 10**6), TRICKLE_S),
    "head-bytes": Answer(head(X_Padding="x" * 10**6), trickle_head=True, interval_s=TRICKLE_S),
}  # fmt: skip
SEARCH_THEN_FINISH = (
    " I should search it.\nAction 1: Search[Arthur's Magazine]",
    " Wikipedia is down; I will answer anyway.\nAction 2: Finish[1844]",
)


@pytest.mark.parametrize("shape", WIKI_SHAPES)
def test_a_wikipedia_request_ends_at_wiki_timeout_s(cli: Runner, shape: str) -> None:
    cli.config(retries=0, wiki_timeout_s=TIMEOUT_S)  # the model's answers: the usual timeout
    with (
        HostileServer(WIKI_SHAPES[shape]) as wiki,
        FakeOpenAI(scripted(*SEARCH_THEN_FINISH)) as llm,
    ):
        result = cli.ask(llm, wiki, "--json", question="When?")
    assert result.code == 0, result.stderr
    step = json.loads(result.stdout)["steps"][0]["actions"][0]
    assert step["observation"].startswith("Wikipedia is unavailable right now (no answer from")
    assert f"within {TIMEOUT_S:g}s" in step["observation"]
    assert cli.elapsed_s < BOUND_S
