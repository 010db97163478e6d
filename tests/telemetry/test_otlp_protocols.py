"""How spans travel: OTLP over gRPC when ``OTEL_EXPORTER_OTLP_PROTOCOL=grpc`` asks for it (a real
``grpcio`` collector, ``support/otlp_receiver.GrpcReceiver``), a protocol react-cli cannot speak
said once, and a collector that fails said with its reason."""

from __future__ import annotations

import socket

from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, scripted
from inproc import GOOD_RUN, QUESTION, Runner, servers_env, sourceless
from otlp_receiver import GrpcReceiver, OtlpReceiver

GRPC = {"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}


def test_spans_go_over_grpc_when_the_protocol_says_so(cli: Runner, wiki: FakeMediaWiki) -> None:
    cli.config(otel_timeout_s=60.0)  # the collector always answers, however busy the machine
    with GrpcReceiver() as receiver, FakeOpenAI(scripted(*GOOD_RUN)) as llm:
        env = {
            **servers_env(llm, wiki),
            **GRPC,
            "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url,
            "OTEL_EXPORTER_OTLP_HEADERS": "x-team=team42",
        }
        result = cli(["ask", QUESTION], **env)
    assert (result.code, result.stdout, sourceless(result.stderr)) == (0, "Arthur's Magazine\n", "")
    kinds = sorted(span.kind for span in receiver.spans)
    assert kinds == ["AGENT", "LLM", "LLM", "LLM", "TOOL", "TOOL"]
    assert {span.status for span in receiver.spans} == {1}  # OK
    assert receiver.headers[0]["x-team"] == "team42"  # the exporter's headers, as metadata


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def test_a_grpc_collector_that_is_down_is_said_with_its_status(
    cli: Runner, wiki: FakeMediaWiki
) -> None:
    endpoint = f"http://127.0.0.1:{closed_port()}"
    with FakeOpenAI(scripted(*GOOD_RUN)) as llm:
        env = {**servers_env(llm, wiki), **GRPC, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": endpoint}
        result = cli(["ask", QUESTION], **env)
    assert (result.code, result.stdout) == (0, "Arthur's Magazine\n")
    said = f"warning: cannot send spans to {endpoint} (gRPC status UNAVAILABLE): 6 spans dropped\n"
    assert sourceless(result.stderr) == said


def test_a_collector_refusing_the_key_is_said_with_its_status(
    cli: Runner, wiki: FakeMediaWiki
) -> None:
    with OtlpReceiver() as receiver, FakeOpenAI(scripted(*GOOD_RUN)) as llm:
        receiver.status = 401
        env = {**servers_env(llm, wiki), "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url}
        result = cli(["ask", QUESTION], **env)
    assert (result.code, result.stdout) == (0, "Arthur's Magazine\n")
    endpoint = f"{receiver.url}/v1/traces"
    said = f"cannot send spans to {endpoint} (HTTP 401 Unauthorized): 6 spans dropped"
    assert sourceless(result.stderr) == f"warning: {said}\n"


def test_a_protocol_react_cli_cannot_speak_is_said_once(cli: Runner, wiki: FakeMediaWiki) -> None:
    with OtlpReceiver() as receiver, FakeOpenAI(scripted(*GOOD_RUN, *GOOD_RUN)) as llm:
        env = {
            **servers_env(llm, wiki),
            "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url,
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json",
        }
        inherited = cli(["ask", QUESTION], **env)
        asked = cli(["ask", QUESTION, "--otel"], **env)
    problem = (
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL='http/json' is not supported: "
        "spans go over http/protobuf or grpc"
    )
    assert (inherited.code, inherited.stdout) == (0, "Arthur's Magazine\n")
    assert sourceless(inherited.stderr) == (
        f"warning: OTEL_EXPORTER_OTLP_ENDPOINT is set, but {problem}: no spans are sent\n"
    )
    assert (asked.code, asked.stderr) == (2, f"Error: --otel: {problem}\n")
    assert receiver.requests == 0
