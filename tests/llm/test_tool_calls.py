"""Native tool calls through ``OpenAIClient`` over real loopback HTTP: the request's tools and
tool_choice, calls assembled from streamed fragments (OpenAI's and llama-cpp-python's habits),
read from a JSON answer, an endpoint that refuses tools, a forced choice or a grammar, and the
assembler fed hostile deltas."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from fake_openai import FakeOpenAI, Reply
from hostile import json_value
from hypothesis import given, settings
from hypothesis import strategies as st

from react_cli.core.errors import LLMConfigError, LLMConnectionError
from react_cli.core.records import ToolCall
from react_cli.infra.deadline import NO_DEADLINE
from react_cli.infra.retry import RetryPolicy
from react_cli.llm.base import AUTO, REQUIRED, CallKind, ModelRequest, ToolChoice
from react_cli.llm.client import OpenAIClient
from react_cli.llm.endpoint import EndpointFacts
from react_cli.llm.toolcalls import MAX_CALLS, CallAssembler, assistant_message, calls_of
from react_cli.tools.paper import PAPER_TOOLS

FAST = RetryPolicy(retries=2, backoff_factor=0.01, backoff_max_s=0.02, backoff_jitter_s=0.0)
TOOLS = tuple(spec.declaration() for spec in PAPER_TOOLS)
MESSAGES = ({"role": "system", "content": "Solve it."}, {"role": "user", "content": "Q?"})
SEARCH = {"name": "search", "arguments": json.dumps({"entity": "Ed Wood (film)"}), "id": "c1"}
LOOKUP = {"name": "lookup", "arguments": '{"keyword": "born"}', "id": "c2"}


def request(choice: ToolChoice = AUTO, **extra: object) -> ModelRequest:
    return ModelRequest(
        CallKind.STEP, "", step=1, messages=MESSAGES, tools=TOOLS, tool_choice=choice, **extra
    )  # type: ignore[arg-type]


@pytest.fixture
def clients() -> Iterator[list[OpenAIClient]]:
    made: list[OpenAIClient] = []
    yield made
    for client in made:
        client.close()


def client_of(fake: FakeOpenAI, made: list[OpenAIClient], **options: object) -> OpenAIClient:
    client = OpenAIClient(
        base_url=fake.url,
        model="m",
        policy=FAST,
        timeout_s=2.0,
        **options,  # type: ignore[arg-type]
    )
    made.append(client)
    return client


@pytest.mark.parametrize(
    ("stream", "deltas"),
    [(True, "openai"), (True, "repeat"), (True, "no_index"), (False, "openai")],
)
def test_calls_come_whole_however_they_are_sent(
    clients: list[OpenAIClient], stream: bool, deltas: str
) -> None:
    reply = Reply(text="I search both.", tool_calls=[SEARCH, LOOKUP], call_deltas=deltas)
    with FakeOpenAI([reply], chunk_size=3) as fake:
        shown: list[str] = []
        completion = client_of(fake, clients, stream=stream).complete(
            request(), deadline=NO_DEADLINE, on_text=shown.append
        )
    body = fake.requests[0].json
    assert body is not None and body["tools"] == list(TOOLS) and body["tool_choice"] == "auto"
    assert body["messages"] == list(MESSAGES) and "stop" not in body
    assert completion.text == "I search both." == "".join(shown)
    assert completion.tool_calls == (
        ToolCall("search", SEARCH["arguments"], "c1"),
        ToolCall("lookup", LOOKUP["arguments"], "c2"),
    )
    assert completion.finish_reason == "tool_calls"
    assert completion.message == {
        "role": "assistant",
        "content": "I search both.",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "search", "arguments": SEARCH["arguments"]},
            },
            {
                "id": "c2",
                "type": "function",
                "function": {"name": "lookup", "arguments": LOOKUP["arguments"]},
            },
        ],
    }


def test_arguments_sent_as_an_object_become_their_text(clients: list[OpenAIClient]) -> None:
    call = {"name": "finish", "arguments": {"answer": "1994"}, "id": "c9"}
    with FakeOpenAI([Reply(tool_calls=[call])]) as fake:
        completion = client_of(fake, clients).complete(request(), deadline=NO_DEADLINE)
    assert completion.tool_calls == (ToolCall("finish", '{"answer": "1994"}', "c9"),)
    assert completion.message is not None and completion.message["content"] == ""


def test_a_forced_choice_is_sent_as_openai_writes_it(clients: list[OpenAIClient]) -> None:
    with FakeOpenAI([Reply(tool_calls=[SEARCH])]) as fake:
        client = client_of(fake, clients)
        client.complete(request(REQUIRED), deadline=NO_DEADLINE)
        client.complete(request(ToolChoice.of("finish")), deadline=NO_DEADLINE)
    chosen = [r.json["tool_choice"] for r in fake.requests if r.json]
    assert chosen == ["required", {"type": "function", "function": {"name": "finish"}}]


LLAMA_500 = Reply(
    status=500, body=json.dumps({"error": {"message": "", "type": "internal_server_error"}})
)


@pytest.mark.parametrize(
    "refusal",
    [
        [
            Reply(
                status=400,
                body=json.dumps({"error": {"message": "tool_choice 'required' is not supported"}}),
            )
        ],
        [LLAMA_500] * (FAST.retries + 1),  # a 500 on every try: its refusal
    ],
    ids=["400 naming it", "llama-cpp-python's 500"],
)
def test_a_refused_forced_choice_is_asked_as_auto_from_then_on(
    clients: list[OpenAIClient], refusal: list[Reply]
) -> None:
    facts = EndpointFacts()
    with FakeOpenAI([*refusal, Reply(tool_calls=[SEARCH])]) as fake:
        client = client_of(fake, clients, facts=facts)
        first = client.complete(request(REQUIRED), deadline=NO_DEADLINE)
        client.complete(request(REQUIRED), deadline=NO_DEADLINE)
    sent = [r.json["tool_choice"] for r in fake.requests if r.json]
    assert sent == ["required"] * len(refusal) + ["auto", "auto"]
    assert first.retries == len(refusal) and "required" in facts.refused


def test_one_500_to_a_forced_choice_is_retried_forced(clients: list[OpenAIClient]) -> None:
    facts = EndpointFacts()
    with FakeOpenAI([LLAMA_500, Reply(tool_calls=[SEARCH])]) as fake:
        client = client_of(fake, clients, facts=facts)
        first = client.complete(request(REQUIRED), deadline=NO_DEADLINE)
        client.complete(request(REQUIRED), deadline=NO_DEADLINE)
    sent = [r.json["tool_choice"] for r in fake.requests if r.json]
    assert sent == ["required"] * 3 and first.retries == 1 and not facts.refused


@pytest.mark.parametrize(
    "message",
    [
        "Unrecognized request argument supplied: tools",
        "registry.ollama.ai/library/gemma:2b does not support tools",
        '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
    ],
)
def test_an_endpoint_refusing_tools_is_a_configuration_error(
    clients: list[OpenAIClient], message: str
) -> None:
    body = json.dumps({"error": {"message": message}})
    with (
        FakeOpenAI([Reply(status=400, body=body)]) as fake,
        pytest.raises(LLMConfigError) as raised,
    ):
        client_of(fake, clients).complete(request(), deadline=NO_DEADLINE)
    said = str(raised.value)
    assert "does not accept tools" in said and said.endswith("use --protocol text")
    assert raised.value.exit_code == 2 and len(fake.requests) == 1


def test_an_empty_stream_to_a_tool_request_is_asked_again_unstreamed(
    clients: list[OpenAIClient],
) -> None:
    """llama-cpp-python fails a streamed ``auto`` request whose model picks a tool after its
    200: the stream holds nothing. The call is made again, once, without streaming."""
    empty = Reply(body="", headers={"Content-Type": "text/event-stream"})
    with FakeOpenAI([empty, Reply(tool_calls=[SEARCH])]) as fake:
        client = client_of(fake, clients)
        completion = client.complete(request(), deadline=NO_DEADLINE)
        client.complete(request(), deadline=NO_DEADLINE)
    assert [r.json["stream"] for r in fake.requests if r.json] == [True, False, False]
    assert completion.tool_calls[0].name == "search"


def test_a_grammar_goes_in_both_servers_fields_until_refused_with_one_warning(
    clients: list[OpenAIClient],
) -> None:
    refused = Reply(
        status=400,
        body=json.dumps({"error": {"message": "Unrecognized request argument supplied: grammar"}}),
    )
    warnings: list[str] = []
    text_request = ModelRequest(
        CallKind.STEP, "Q\nThought 1:", ("\nObservation",), 1, grammar='root ::= "x"\n'
    )
    with FakeOpenAI([refused, Reply(text=" x")]) as fake:
        client = client_of(fake, clients, api="completions", on_warning=warnings.append)
        for _ in range(3):
            assert client.complete(text_request, deadline=NO_DEADLINE).text == " x"
    bodies = [r.json for r in fake.requests if r.json]
    assert bodies[0]["grammar"] == 'root ::= "x"\n'
    assert bodies[0]["structured_outputs"] == {"grammar": 'root ::= "x"\n'}
    assert all("grammar" not in b and "structured_outputs" not in b for b in bodies[1:])
    assert len(bodies) == 4 and len(warnings) == 1
    assert "does not take a grammar" in warnings[0] and "not constrained" in warnings[0]


def test_a_server_that_hangs_up_on_a_grammar_is_not_asked_again(
    clients: list[OpenAIClient],
) -> None:
    text_request = ModelRequest(CallKind.STEP, "Q", grammar='root ::= "x"\n')
    with (
        FakeOpenAI([Reply(fault="drop")]) as fake,
        pytest.raises(
            LLMConnectionError, match="closed the connection on a request with a grammar"
        ),
    ):
        client_of(fake, clients, api="completions").complete(text_request, deadline=NO_DEADLINE)
    assert len(fake.requests) == 1


def test_the_assembler_takes_ids_and_names_once_and_arguments_in_fragments() -> None:
    assembler = CallAssembler(max_chars=1000)
    assembler.feed([{"index": 1, "id": "b", "function": {"name": "lookup", "arguments": "{"}}])
    assembler.feed([{"index": 0, "id": "a", "function": {"name": "search", "arguments": '{"ent'}}])
    assembler.feed(
        [{"index": 0, "id": "a", "function": {"name": "search", "arguments": 'ity": "X"}'}}]
    )
    assembler.feed([{"index": 1, "function": {"arguments": "}"}}])
    assert assembler.calls() == (
        ToolCall("search", '{"entity": "X"}', "a"),
        ToolCall("lookup", "{}", "b"),
    )


def test_the_assembler_is_bounded() -> None:
    assembler = CallAssembler(max_chars=10)
    for index in range(MAX_CALLS + 5):
        assembler.feed(
            [
                {
                    "index": index * 10**12,
                    "id": "x" * 10_000,
                    "function": {"name": "n" * 10_000, "arguments": "y" * 100},
                }
            ]
        )
    calls = assembler.calls()
    assert len(calls) == MAX_CALLS
    assert sum(len(call.argument) for call in calls) == 10
    assert all(len(call.name) <= 256 and len(call.id or "") <= 256 for call in calls)


@settings(max_examples=60, deadline=None)
@given(st.lists(json_value, max_size=3), json_value)
def test_the_assembler_survives_any_deltas(deltas: list[object], message: object) -> None:
    assembler = CallAssembler(max_chars=500)
    for delta in deltas:
        assembler.feed(delta)
        assembler.feed([delta])
    for call in (
        *assembler.calls(),
        *calls_of(message, 500),
        *calls_of({"tool_calls": deltas}, 500),
    ):
        assert isinstance(call.name, str) and isinstance(call.argument, str)
        assert call.id is None or isinstance(call.id, str)
    json.dumps(assistant_message("t", assembler.calls()))  # always a message that can be sent
