"""Answers a server sends that cannot be read (nested past every JSON reader's depth, cut
short), over stdio and streamable HTTP, through the real CLI: each fails its request at once
saying why, a listing keeps the tools it can read and says which it left out, and an
``initialize`` that cannot be read refuses the server at once. The server is written by hand
(``support/mcp_raw.py``): no SDK writes such bytes. Then the scanner that finds an unreadable
answer's id, on hostile input, in linear time."""

from __future__ import annotations

import json
import shlex
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, scripted
from hostile import cli_fuzz
from hypothesis import given
from hypothesis import strategies as st
from inproc import FAST_CONFIG, HANG_S, Runner, actions, one_error_line, toml_value
from mcp_raw import raw_http

from react_cli.tools.mcp import messages

RAW = Path(__file__).resolve().parents[2] / "support" / "mcp_raw.py"
STDIO = shlex.join([sys.executable, "-S", str(RAW)])
QUESTION = "What do my notes say?"
SCRIPT = (
    " Deep.\nAction 1: deep[x]",
    " Echo.\nAction 2: echo[hi]",
    " Cut.\nAction 3: garbled[x]",
    " Done.\nAction 4: Finish[hi]",
)
LEFT_OUT = [
    "warning: MCP server raw: its tool 'nested' could not be read: left out",
    "warning: MCP server raw: its tool 'odd' could not be read: left out",
    "warning: MCP server raw: its tool huge has an input schema that cannot be used: left out",
]


def config(cli: Runner) -> None:
    """A tool limit no answer here should come near: only waiting one out would reach it."""
    settings = {**FAST_CONFIG, "tool_timeout_s": 60.0}
    cli.config_text("".join(f"{key} = {toml_value(v)}\n" for key, v in settings.items()))


@pytest.fixture(params=["stdio", "http-json", "http-events"])
def server(request: pytest.FixtureRequest) -> Iterator[str]:
    if request.param == "stdio":
        yield STDIO
        return
    with raw_http(events=request.param == "http-events") as hostile:
        yield f"{hostile.url}/mcp"


def test_an_unreadable_answer_fails_its_call_at_once_and_the_listing_keeps_the_rest(
    cli: Runner, wiki: FakeMediaWiki, server: str
) -> None:
    config(cli)
    with FakeOpenAI(scripted(*SCRIPT)) as llm:
        result = cli(
            ["ask", QUESTION, "--mcp", server],
            OPENAI_BASE_URL=llm.url,
            REACT_CLI_MODEL="m",
            REACT_CLI_WIKI=wiki.url,
        )
    assert (result.code, result.stdout) == (0, "hi\n"), result.stderr
    assert cli.elapsed_s < HANG_S  # nothing waited out its limit (60 s)
    assert [line for line in result.stderr.splitlines() if "left out" in line] == LEFT_OUT
    prompt = llm.requests[0].json["messages"][0]["content"]
    assert "echo[text]" in prompt and "deep[text]" in prompt and "garbled[text]" in prompt
    assert "nested" not in prompt and "odd" not in prompt and "huge" not in prompt
    shown = [action["observation"] for action in actions(cli.trace())]
    assert shown[:3] == [
        "deep failed: its answer is nested too deeply to read",
        "echo: hi",
        "garbled failed: its answer is not JSON",
    ]


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_an_unreadable_initialize_refuses_the_server_at_once(
    cli: Runner, wiki: FakeMediaWiki, llm: FakeOpenAI, transport: str
) -> None:
    config(cli)
    llm.requests.clear()
    with raw_http(events=True, deep_initialize=True) as hostile:
        server = f"{STDIO} --deep-initialize" if transport == "stdio" else f"{hostile.url}/mcp"
        result = cli.ask(llm, wiki, "--mcp", server)
    assert result.code == 2 and cli.elapsed_s < HANG_S, result.stderr
    assert one_error_line(result.stderr).endswith(
        "failed to start: its answer is nested too deeply to read"
    )
    assert llm.requests == []


def test_tools_lists_what_an_unreadable_listing_holds(cli: Runner) -> None:
    config(cli)
    shown = cli(["tools", "--no-wiki", "--json", "--mcp", STDIO])
    assert shown.code == 0 and cli.elapsed_s < HANG_S, shown.stderr
    names = [tool["name"] for tool in json.loads(shown.stdout)]
    assert names == ["echo", "deep", "garbled", "Finish"]
    assert shown.stderr.splitlines() == LEFT_OUT


# --- the scanner, on hostile input -------------------------------------------------------------


def test_the_id_of_an_answer_is_found_however_deep_or_cut_it_is() -> None:
    deep = b"[" * 10**6
    answers = {
        b'{"jsonrpc": "2.0", "id": 7, "result": ' + deep: "its answer is nested too deeply to read",
        b'{"id": 7, "jsonrpc": "2.0", "result": {"x": ' + deep + b"]" * 10**6 + b"}}": (
            "its answer is nested too deeply to read"
        ),
        b'{"jsonrpc": "2.0", "id": 7, "result": {"text": "\\"}}': "its answer is not JSON",
        b'{"jsonrpc": "2.0", "id": 7}': "its answer is not a JSON-RPC message",
        b'{"jsonrpc": "2.0", "id": 7, "result": {"text": "cut': "its answer is not JSON",
        deep: "its answer is nested too deeply to read",  # no id: the one request waiting
    }
    for raw, said in answers.items():
        started = time.process_time()
        made = messages.read(raw, {7: "tools/call"}, messages.Heard())
        assert time.process_time() - started < 2.0  # linear (a hang detector, not a timing)
        assert not isinstance(made, Exception), raw[:60]
        error = getattr(made.message, "error", None)
        assert error is not None and (error.message, error.data) == (said, messages.UNREADABLE)


def test_what_answers_no_request_is_left_to_the_session() -> None:
    notification = b'{"jsonrpc": "2.0", "method": "notifications/x", "params": ' + b"[" * 300
    assert isinstance(messages.read(notification, {7: "tools/call"}, messages.Heard()), ValueError)
    unknown = b'{"jsonrpc": "2.0", "id": 8, "result": ' + b"[" * 300
    assert isinstance(messages.read(unknown, {7: "tools/call"}, messages.Heard()), ValueError)
    asked = {7: "tools/call", 9: "tools/call"}  # two waiting: no guess
    assert isinstance(messages.read(b"[" * 300, asked, messages.Heard()), ValueError)


JSON_PIECES = st.sampled_from([b"{", b"}", b"[", b"]", b",", b":", b'"', b"\\", b" ", b"1"])


@cli_fuzz(100)
@given(st.lists(JSON_PIECES | st.binary(max_size=4), max_size=60))
def test_any_bytes_are_scanned_or_refused(pieces: list[bytes]) -> None:
    raw = b"".join(pieces)
    found = messages.children(raw, 0)
    if found is None:
        return
    for _, start, end in found:
        assert 0 <= start <= end <= len(raw)
    made = messages.read(
        b'{"jsonrpc": "2.0", "id": 1, "result": ' + raw, {1: "tools/list"}, messages.Heard()
    )
    assert isinstance(made, Exception) or made.message is not None


def test_an_event_stream_is_mended_event_by_event() -> None:
    import anyio

    good = b'{"jsonrpc": "2.0", "id": 1, "result": {}}'
    bad = b'{"jsonrpc": "2.0", "id": 1, "result": ' + b"[" * 300
    stream = b": ping\r\n\r\nevent: message\r\ndata: " + good + b"\r\n\r\ndata: " + bad + b"\n\n"

    async def chunks() -> Iterator[bytes]:  # type: ignore[misc]
        for i in range(0, len(stream), 7):  # cut anywhere, a \r\n between two chunks too
            yield stream[i : i + 7]

    def mend(data: bytes) -> bytes:
        return messages.mended_body(data, {1: "tools/call"}, messages.Heard())

    async def main() -> list[bytes]:
        return [event async for event in messages.mended_events(chunks(), mend, 1 << 20)]

    events = anyio.run(main)
    assert events[:2] == [b": ping\r\n\r\n", b"event: message\r\ndata: " + good + b"\r\n\r\n"]
    (data,) = [line for line in events[2].splitlines() if line.startswith(b"data: ")]
    assert json.loads(data[6:])["error"]["message"] == "its answer is nested too deeply to read"
    too_large = messages.mended_events(chunks(), mend, 10)
    with pytest.raises(messages.MessageTooLarge):
        anyio.run(lambda: _drain(too_large))


async def _drain(events: object) -> None:
    async for _ in events:  # type: ignore[attr-defined]
        pass
