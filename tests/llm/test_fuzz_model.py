"""Fuzzing the model endpoint: any bytes it sends, ``react-cli ask`` answers or fails cleanly.

Hypothesis builds hostile answers from every class issue 10 names: size (text far past
``max_tokens``, events past the size limit), depth (JSON nested 10⁵ levels), encoding (invalid
UTF-8, lone surrogates, control characters and escape sequences), malformed shapes (any JSON in
place of a chunk, choice, delta, content, finish_reason or usage), and slow or endless streams
(keep-alives forever). A local server sends them, streamed or as one body, to the real CLI run
in-process. Every case must end, within a bound, in one of: an answer (exit 0, a trace with
``stop_reason: finish``), or exit 1 with exactly one ``Error:`` line and a trace whose
``stop_reason`` says why; never a traceback or an internal error; the trace and the output
always valid UTF-8 JSON.
"""

from __future__ import annotations

import itertools
import json
import time
from typing import Any

import pytest
from fake_mediawiki import FakeMediaWiki
from hostile import cli_fuzz, json_value
from hostile_server import Answer, HostileServer, chunked, forever, head
from hypothesis import given
from hypothesis import strategies as st
from inproc import HANG_S, RETRY_NOTICE, CliResult, Runner

TIMEOUT_S = 0.1
BOUND_S = HANG_S
FINISHED = {"finish"}
FAILED = {"llm_error", "timeout", "max_steps", "parse_errors", "repeated_action", "tool_errors"}
MAX_TOKENS_WARNING = "warning: the model stopped at max_tokens=20; "

HOSTILE_TEXT = st.one_of(
    st.text(max_size=60),
    st.sampled_from(
        [
            " I know it.\nAction 1: Finish[yes]",
            " Search it.\nAction 1: Search[Arthur's Magazine]",
            "\x1b[31mred\x1b]8;;http://x\x07 \x9b2J \u202e \x00 [bold]x[/]",
            "\nObservation 1: invented",
            "Finish[" * 50,
            "<think>" * 20,
        ]
    ),
)


def event(payload: bytes) -> bytes:
    return b"data: " + payload + b"\n\n"


def delta(content: Any, finish: Any = None, extra: str = "") -> bytes:
    choice = {"delta": {"content": content}, "finish_reason": finish}
    return event(json.dumps({"choices": [choice]}).encode()[:-1] + extra.encode() + b"}")


EVENTS = st.one_of(
    HOSTILE_TEXT.map(delta),
    HOSTILE_TEXT.map(lambda text: delta(text, "stop")),
    st.just(event(b'{"choices": [{"delta": {"content": "a\\ud800b\\udfff"}}]}')),  # surrogates
    st.just(event(b'{"choices": [{"delta": {"content": "\xff\xfe\xc3 bad utf-8"}}]}')),
    st.integers(1, 100_000).map(lambda depth: event(b"[" * depth)),  # depth
    st.integers(1, 100_000).map(lambda depth: event(b'{"choices": ' + b"[" * depth)),
    json_value.map(lambda value: event(json.dumps(value).encode())),  # any shape
    json_value.map(lambda value: event(json.dumps({"choices": [value]}).encode())),
    json_value.map(lambda value: event(json.dumps({"choices": [{"delta": value}]}).encode())),
    json_value.map(lambda value: delta(value, value)),
    st.sampled_from(
        [
            b": ping\n\n",
            event(b'{"choices": []}'),
            event(b'{"object": "chunk"}'),
            event(b'{"choices": [{"delta": {}}]}'),
            event(b'{"choices": [], "usage": {"prompt_tokens": 1e400, "completion_tokens": -1}}'),
            event(b"[DONE]"),
            b"garbage without a field\n\n",
            b"data:\n\n",
            delta("x" * 300_000, "stop"),  # size: far past max_tokens
            event(
                b'{"choices": [{"delta": {"content": "' + b"y" * 600_000 + b'"}}]}'
            ),  # over the limit
        ]
    ),
)
ENDINGS = st.sampled_from(["done", "close", "keepalive-forever", "nothing"])


@st.composite
def answers(draw: st.DrawFn) -> tuple[Answer, bool]:
    """A hostile answer to every model call, and whether it is a stream."""
    events = draw(st.lists(EVENTS, max_size=6))
    ending = draw(ENDINGS)
    if draw(st.booleans()):  # one JSON body instead of a stream
        body = draw(
            st.one_of(
                json_value.map(lambda v: json.dumps(v).encode()),
                json_value.map(lambda v: json.dumps({"choices": [{"message": v}]}).encode()),
                HOSTILE_TEXT.map(
                    lambda t: json.dumps({"choices": [{"message": {"content": t}}]}).encode()
                ),
                st.integers(1, 100_000).map(lambda depth: b"[" * depth),
                st.binary(max_size=200),
            )
        )
        return Answer(
            head(Content_Type="application/json", Content_Length=str(len(body))) + body
        ), False
    tail: list[bytes] = {"done": [event(b"[DONE]")], "close": [], "nothing": []}.get(ending, [])
    if ending == "keepalive-forever":
        body = chunked(itertools.chain(events, forever(b": ping\n\n")))
        return Answer(
            head(Content_Type="text/event-stream", Transfer_Encoding="chunked"), body, 0.01
        ), True
    stream = b"".join([*events, *tail])
    return Answer(
        head(Content_Type="text/event-stream", Content_Length=str(len(stream))) + stream
    ), True


@pytest.fixture
def cli(cli: Runner) -> Runner:
    cli.config(retries=0, timeout_s=TIMEOUT_S)
    return cli


def said(stderr: str) -> list[str]:
    """stderr without what a run may print on its way: retry notices, the warning that replies
    stopped at max_tokens (an answer cut by its size limit stops there too)."""
    return [
        line
        for line in stderr.splitlines()
        if not (RETRY_NOTICE.fullmatch(line) or line.startswith(MAX_TOKENS_WARNING))
    ]


def ask_hostile(
    cli: Runner, wiki: FakeMediaWiki, answer: tuple[Answer, bool], *extra: str
) -> tuple[CliResult, dict[str, Any]]:
    """``ask --json`` against a server answering every call with ``answer``: the run ends in
    time, answered or with one ``Error:`` line, no control character shown; and its trace."""
    hostile, stream = answer
    with HostileServer(hostile) as llm:
        started = time.monotonic()
        result = cli(
            ["ask", "When?", "--json", "--max-steps", "2", "--max-tokens", "20", *extra,
             *([] if stream else ["--no-stream"])],
            OPENAI_BASE_URL=llm.url + "/v1",
            REACT_CLI_MODEL="m",
            REACT_CLI_WIKI=wiki.url,
        )  # fmt: skip
    assert time.monotonic() - started < BOUND_S
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    trace = cli.trace()  # valid UTF-8 JSON, or this fails
    lines = said(result.stderr)
    if result.code == 0:
        assert trace["stop_reason"] in FINISHED and lines == []
    else:
        assert result.code == 1 and trace["stop_reason"] in FAILED
        assert len(lines) == 1 and lines[0].startswith("Error: no answer: ")
    for control in ("\x1b", "\x9b", "\u202e", "\x00"):
        assert control not in result.stdout + result.stderr
    return result, trace


@cli_fuzz(20)
@given(answer=answers())
def test_any_model_answer_ends_cleanly(
    cli: Runner, wiki: FakeMediaWiki, answer: tuple[Answer, bool]
) -> None:
    result, trace = ask_hostile(cli, wiki, answer)
    summary = json.loads(result.stdout)
    assert summary["stop_reason"] == trace["stop_reason"]
    if result.code == 0:
        assert isinstance(summary["answer"], str)


HOSTILE_CALL = st.one_of(
    json_value,
    st.fixed_dictionaries(
        {
            "index": st.one_of(st.integers(-5, 10**15), json_value),
            "id": st.one_of(HOSTILE_TEXT, json_value),
            "function": st.fixed_dictionaries(
                {
                    "name": st.one_of(
                        st.sampled_from(["search", "finish", "lookup"]), HOSTILE_TEXT
                    ),
                    "arguments": st.one_of(
                        HOSTILE_TEXT,
                        json_value,
                        st.sampled_from(
                            ['{"entity": "Arthur', "'s Magazine\"}", '{"answer": "yes"}']
                        ),
                        st.integers(1, 100_000).map(lambda depth: "[" * depth),
                    ),
                }
            ),
        }
    ),
)


def call_delta(calls: Any) -> bytes:
    return event(json.dumps({"choices": [{"delta": {"tool_calls": calls}}]}).encode())


@st.composite
def tool_answers(draw: st.DrawFn) -> tuple[Answer, bool]:
    """A hostile answer with native tool calls: streamed deltas, or one message."""
    calls = draw(st.lists(HOSTILE_CALL, max_size=4))
    if draw(st.booleans()):
        message = {
            "content": draw(HOSTILE_TEXT),
            "tool_calls": draw(st.one_of(st.just(calls), json_value)),
        }
        body = json.dumps(
            {"choices": [{"message": message, "finish_reason": "tool_calls"}]}
        ).encode()
        return Answer(
            head(Content_Type="application/json", Content_Length=str(len(body))) + body
        ), False
    events = [call_delta(draw(st.one_of(st.just([call]), json_value))) for call in calls]
    events += draw(st.lists(EVENTS, max_size=2))
    stream = b"".join(
        [*events, delta("", draw(st.sampled_from(["tool_calls", "stop", None]))), event(b"[DONE]")]
    )
    return Answer(
        head(Content_Type="text/event-stream", Content_Length=str(len(stream))) + stream
    ), True


@cli_fuzz(15)
@given(answer=tool_answers())
def test_any_tool_call_answer_ends_cleanly(
    cli: Runner, wiki: FakeMediaWiki, answer: tuple[Answer, bool]
) -> None:
    result, trace = ask_hostile(cli, wiki, answer, "--protocol", "tools")
    assert json.loads(result.stdout)["protocol"] == "tools" == trace["config"]["protocol"]
