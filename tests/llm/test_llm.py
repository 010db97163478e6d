"""OpenAIClient against the fake server over real loopback HTTP (no monkeypatching)."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable, Iterator

import pytest
from fake_openai import TRANSIENT_FAILURES, FakeOpenAI, Reply, scripted
from inproc import HANG_S

from react_cli.core.errors import (
    LLMAuthError,
    LLMConnectionError,
    LLMNotFoundError,
    LLMRequestError,
    LLMResponseError,
)
from react_cli.infra.deadline import NO_DEADLINE
from react_cli.infra.retry import RetryPolicy
from react_cli.llm.base import CallKind, ModelRequest
from react_cli.llm.client import OpenAIClient
from react_cli.loop.text.cutter import ObservationCutter

FAST = RetryPolicy(
    retries=2, backoff_factor=0.01, backoff_max_s=0.02, backoff_jitter_s=0.0, max_retry_after_s=0.05
)
KEY = "sk-test-secret-1234567890"
PROMPT = "Question: Is water wet?\nThought 1:"
STOP = ["\nObservation 1:"]
REQUEST = ModelRequest(CallKind.STEP, PROMPT, tuple(STOP), 1, ObservationCutter)
STEP = "Thought 1: I should search water.\nAction 1: Search[water]"
INVENTED = STEP + "\nObservation 1: Water is wet.\nThought 2: Done.\nAction 2: Finish[yes]"
BOTH_APIS = pytest.mark.parametrize("api", ["chat", "completions"])
BOTH_MODES = pytest.mark.parametrize("stream", [True, False])

MakeClient = Callable[..., OpenAIClient]


@pytest.fixture
def make_client() -> Iterator[MakeClient]:
    clients: list[OpenAIClient] = []

    def make(fake: FakeOpenAI, **kwargs: object) -> OpenAIClient:
        options: dict[str, object] = {"model": "fake-model", "policy": FAST, "timeout_s": 2.0}
        options.update(kwargs)
        client = OpenAIClient(base_url=fake.url, **options)  # type: ignore[arg-type]
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


def error_body(message: str) -> str:
    return json.dumps({"error": {"message": message, "type": "invalid_request_error"}})


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@BOTH_APIS
@BOTH_MODES
def test_request_shape_and_text(make_client: MakeClient, api: str, stream: bool) -> None:
    with FakeOpenAI(scripted(STEP)) as fake:
        result = make_client(fake, api=api, stream=stream).complete(REQUEST, deadline=NO_DEADLINE)
    assert result.text == STEP
    assert result.finish_reason == "stop"
    assert result.retries == 0
    assert result.latency_s > 0
    [request] = fake.requests
    assert request.path == ("/v1/chat/completions" if api == "chat" else "/v1/completions")
    body = request.json
    assert body is not None
    assert body["model"] == "fake-model"
    assert body["temperature"] == 0.0
    assert body["stop"] == STOP
    assert body["stream"] is stream
    assert "max_tokens" not in body
    assert ("stream_options" in body) is stream
    if api == "chat":
        assert body["messages"] == [{"role": "user", "content": PROMPT}]
    else:
        assert body["prompt"] == PROMPT
    assert "authorization" not in request.headers
    assert request.headers["user-agent"].startswith("react-cli/")


def test_key_max_tokens_and_trailing_slash(make_client: MakeClient) -> None:
    with FakeOpenAI(scripted(STEP)) as fake:
        client = OpenAIClient(
            base_url=fake.url + "/", model="m", api_key=KEY, max_tokens=64, policy=FAST
        )
        client.complete(REQUEST, deadline=NO_DEADLINE)
        client.close()
    [request] = fake.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.json is not None and request.json["max_tokens"] == 64


@BOTH_MODES
def test_on_text_gets_exactly_the_kept_text(make_client: MakeClient, stream: bool) -> None:
    pieces: list[str] = []
    with FakeOpenAI(scripted(STEP)) as fake:
        result = make_client(fake, stream=stream).complete(
            REQUEST, deadline=NO_DEADLINE, on_text=pieces.append
        )
    assert "".join(pieces) == result.text == STEP
    assert len(pieces) > 1 if stream else len(pieces) == 1


def test_server_applies_stop(make_client: MakeClient) -> None:
    with FakeOpenAI(scripted(INVENTED)) as fake:
        assert make_client(fake).complete(REQUEST, deadline=NO_DEADLINE).text == STEP


@BOTH_MODES
def test_a_clients_calls_share_one_connection(make_client: MakeClient, stream: bool) -> None:
    """A streamed answer read to [DONE] leaves its connection to the next call, as a whole body
    does: a real endpoint's connection (its TLS handshake) is made once, not once a call."""
    with FakeOpenAI(scripted(STEP)) as fake:
        client = make_client(fake, stream=stream)
        for _ in range(3):
            assert client.complete(REQUEST, deadline=NO_DEADLINE).text == STEP
    assert len(fake.requests) == 3
    assert fake.connections == 1


@BOTH_APIS
@BOTH_MODES
def test_invented_observation_is_cut_when_stop_is_ignored(
    make_client: MakeClient, api: str, stream: bool
) -> None:
    pieces: list[str] = []
    with FakeOpenAI([Reply(text=INVENTED, ignore_stop=True)]) as fake:
        result = make_client(fake, api=api, stream=stream).complete(
            REQUEST, deadline=NO_DEADLINE, on_text=pieces.append
        )
    assert result.text == STEP
    assert result.finish_reason == "stop"
    assert "".join(pieces) == STEP
    assert not any("Observation" in piece for piece in pieces)


@BOTH_MODES
def test_stop_rejected_is_dropped_for_the_run(make_client: MakeClient, stream: bool) -> None:
    rejected = Reply(
        status=400,
        body=error_body("Unsupported parameter: 'stop' is not supported with this model."),
    )
    with FakeOpenAI([rejected, Reply(text=INVENTED)]) as fake:
        client = make_client(fake, stream=stream)
        result = client.complete(REQUEST, deadline=NO_DEADLINE)
        assert result.text == STEP
        assert result.retries == 1
        assert client.parameters.stop_supported is False
        assert client.complete(REQUEST, deadline=NO_DEADLINE).text == STEP
    bodies = [r.json or {} for r in fake.requests]
    assert [("stop" in body) for body in bodies] == [True, False, False]


def test_stream_options_rejected_is_dropped_for_the_run(make_client: MakeClient) -> None:
    rejected = Reply(status=400, body=error_body("Unrecognized request argument: stream_options"))
    with FakeOpenAI([rejected, Reply(text=STEP)]) as fake:
        client = make_client(fake)
        assert client.complete(REQUEST, deadline=NO_DEADLINE).text == STEP
        assert client.parameters.stream_options_supported is False
        client.complete(REQUEST, deadline=NO_DEADLINE)
    bodies = [r.json or {} for r in fake.requests]
    assert [("stream_options" in body) for body in bodies] == [True, False, False]
    assert all(body["stop"] == STOP and body["stream"] is True for body in bodies)


@pytest.mark.parametrize("failure", list(TRANSIENT_FAILURES.values()), ids=list(TRANSIENT_FAILURES))
def test_transient_failure_then_success(make_client: MakeClient, failure: Reply) -> None:
    with FakeOpenAI([failure, Reply(text=STEP)]) as fake:
        result = make_client(fake).complete(REQUEST, deadline=NO_DEADLINE)
    assert result.text == STEP
    assert result.retries == 1


def test_persistent_503_is_a_connection_error_in_bounded_time(make_client: MakeClient) -> None:
    started = time.monotonic()
    with FakeOpenAI([Reply(status=503)]) as fake, pytest.raises(LLMConnectionError) as caught:
        make_client(fake).complete(REQUEST, deadline=NO_DEADLINE)
    assert time.monotonic() - started < HANG_S
    assert len(fake.requests) == FAST.retries + 1
    assert "503" in str(caught.value)


def test_connection_refused(make_client: MakeClient) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    client = OpenAIClient(base_url=url, model="m", policy=FAST)
    with pytest.raises(LLMConnectionError) as caught:
        client.complete(REQUEST, deadline=NO_DEADLINE)
    client.close()
    assert str(caught.value) == (
        f"cannot reach {url}/chat/completions: connection refused; is the model server "
        "started? ('react-cli models' lists what it serves)"
    )


def test_read_timeout(make_client: MakeClient) -> None:
    with FakeOpenAI([Reply(text=STEP, delay_s=5)]) as fake, pytest.raises(LLMConnectionError) as e:
        make_client(fake, timeout_s=0.1).complete(REQUEST, deadline=NO_DEADLINE)
    assert "timed out" in str(e.value)


@BOTH_MODES
def test_malformed_json(make_client: MakeClient, stream: bool) -> None:
    with FakeOpenAI([Reply(body="{not json")]) as fake, pytest.raises(LLMResponseError) as e:
        make_client(fake, stream=stream).complete(REQUEST, deadline=NO_DEADLINE)
    assert "malformed JSON" in str(e.value)


def test_plain_json_answer_to_a_stream_request(make_client: MakeClient) -> None:
    body = json.dumps({"choices": [{"message": {"content": STEP}, "finish_reason": "stop"}]})
    with FakeOpenAI([Reply(body=body)]) as fake:
        assert make_client(fake, stream=True).complete(REQUEST, deadline=NO_DEADLINE).text == STEP


@BOTH_MODES
def test_empty_choices(make_client: MakeClient, stream: bool) -> None:
    with FakeOpenAI([Reply(fault="empty_choices")]) as fake, pytest.raises(LLMResponseError):
        make_client(fake, stream=stream).complete(REQUEST, deadline=NO_DEADLINE)


def test_cut_stream_keeps_failing(make_client: MakeClient) -> None:
    cut = Reply(text=STEP, fault="cut_stream")
    with FakeOpenAI([cut]) as fake, pytest.raises(LLMResponseError) as caught:
        make_client(fake).complete(REQUEST, deadline=NO_DEADLINE)
    assert len(fake.requests) == FAST.retries + 1
    assert "[DONE]" in str(caught.value)


def test_cut_stream_then_success_shows_text_once(make_client: MakeClient) -> None:
    pieces: list[str] = []
    with FakeOpenAI([Reply(text=STEP, fault="cut_stream"), Reply(text=STEP)]) as fake:
        result = make_client(fake).complete(REQUEST, deadline=NO_DEADLINE, on_text=pieces.append)
    assert result.text == STEP
    assert result.retries == 1
    assert "".join(pieces) == STEP


def test_stream_ending_without_a_finish_reason_is_cut_off(make_client: MakeClient) -> None:
    interrupted = Reply(text=STEP, fault="interrupted_stream")
    with FakeOpenAI([interrupted, Reply(text=STEP)]) as fake:
        result = make_client(fake).complete(REQUEST, deadline=NO_DEADLINE)
    assert result.text == STEP and result.retries == 1
    with FakeOpenAI([interrupted]) as fake, pytest.raises(LLMResponseError) as caught:
        make_client(fake).complete(REQUEST, deadline=NO_DEADLINE)
    assert len(fake.requests) == FAST.retries + 1
    assert "no finish_reason" in str(caught.value) and "--concurrency 1" in str(caught.value)


def test_stalled_stream_is_reissued(make_client: MakeClient) -> None:
    with FakeOpenAI([Reply(text=STEP, fault="stall_stream"), Reply(text=STEP)]) as fake:
        result = make_client(fake, timeout_s=0.3).complete(REQUEST, deadline=NO_DEADLINE)
    assert result.text == STEP
    assert result.retries == 1


@pytest.mark.parametrize("status", [401, 403])
def test_auth_error_never_shows_the_key(make_client: MakeClient, status: int) -> None:
    echoed = error_body(f"Incorrect API key provided: {KEY}")
    rejected = Reply(status=status, body=echoed)
    with FakeOpenAI([rejected]) as fake, pytest.raises(LLMAuthError) as caught:
        make_client(fake, api_key=KEY).complete(REQUEST, deadline=NO_DEADLINE)
    message = str(caught.value)
    assert KEY not in message
    assert f"HTTP {status}" in message
    assert "OPENAI_API_KEY" in message and "--api-key" in message


def test_not_found(make_client: MakeClient) -> None:
    body = error_body("The model `nope` does not exist")
    with FakeOpenAI([Reply(status=404, body=body)]) as fake, pytest.raises(LLMNotFoundError) as e:
        make_client(fake, model="nope").complete(REQUEST, deadline=NO_DEADLINE)
    assert "does not exist" in str(e.value)
    assert "'nope'" in str(e.value)


def test_other_400_is_a_request_error_with_one_line_message(make_client: MakeClient) -> None:
    body = error_body("temperature must be\nbetween 0 and 2 " + "x" * 1000)
    with FakeOpenAI([Reply(status=400, body=body)]) as fake, pytest.raises(LLMRequestError) as e:
        make_client(fake).complete(REQUEST, deadline=NO_DEADLINE)
    message = str(e.value)
    assert "temperature must be between 0 and 2" in message
    assert "\n" not in message
    assert len(message) < 500
    assert len(fake.requests) == 1


@BOTH_MODES
def test_usage_is_recorded(make_client: MakeClient, stream: bool) -> None:
    with FakeOpenAI(scripted(STEP)) as fake:
        usage = make_client(fake, stream=stream).complete(REQUEST, deadline=NO_DEADLINE).usage
    assert usage.prompt_tokens == len(PROMPT) // 4
    assert usage.completion_tokens == len(STEP) // 4


@BOTH_MODES
def test_reasoning_content_is_ignored(make_client: MakeClient, stream: bool) -> None:
    reply = Reply(text=STEP, reasoning="Let me think about water at length.")
    pieces: list[str] = []
    with FakeOpenAI([reply]) as fake:
        result = make_client(fake, stream=stream).complete(
            REQUEST, deadline=NO_DEADLINE, on_text=pieces.append
        )
    assert result.text == "".join(pieces) == STEP


def test_think_blocks_are_kept(make_client: MakeClient) -> None:
    text = "<think>Water is H2O.</think>\n" + STEP
    with FakeOpenAI(scripted(text)) as fake:
        assert make_client(fake).complete(REQUEST, deadline=NO_DEADLINE).text == text


def test_debug_log_redacts_the_key(make_client: MakeClient) -> None:
    lines: list[str] = []
    with FakeOpenAI(scripted(STEP)) as fake:
        make_client(fake, api_key=KEY, debug_log=lines.append).complete(
            REQUEST, deadline=NO_DEADLINE
        )
    assert lines[0].startswith(f"POST {fake.url}/chat/completions ")
    assert "Bearer ***" in lines[0]
    assert any(line.startswith("HTTP 200 ") for line in lines)
    assert all(KEY not in line and "\n" not in line for line in lines)


def test_debug_log_shows_a_request_before_it_is_sent() -> None:
    """One logger for every request: a refused one is logged too (no answer to log after)."""
    url = f"http://127.0.0.1:{closed_port()}/v1"
    lines: list[str] = []
    client = OpenAIClient(base_url=url, model="m", policy=FAST, api_key=KEY, debug_log=lines.append)
    with pytest.raises(LLMConnectionError):
        client.complete(REQUEST, deadline=NO_DEADLINE)
    client.close()
    posts = [line for line in lines if line.startswith(f"POST {url}/chat/completions ")]
    assert len(posts) == 1 and '"Authorization": "Bearer ***"' in posts[0]  # refused: no retry
    assert '"model": "m"' in posts[0] and all(KEY not in line for line in lines)
