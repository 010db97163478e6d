"""Spans of ``ask`` and ``eval`` over OTLP, as a collector receives them (``support/otlp_receiver``,
one for the module): an agent span per run with a model span per model call and a tool span per
tool call, parents right across an eval's worker threads, the prompts only on request, no
secret in any attribute, and a collector that is down or hangs slows no request of the run.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from eval_fakes import HOTPOT, rows_of, summary_of
from fake_mediawiki import FakeMediaWiki
from fake_openai import ECHO, FakeOpenAI, Reply, scripted
from inproc import GOOD_RUN, QUESTION, Runner, actions, servers_env, sourceless
from method_fakes import SCRIPTS, MethodsEndpoint
from otlp_receiver import OtlpReceiver, ReceivedSpan
from tool_fakes import tool_call

OK, ERROR = 1, 2  # OTLP's status codes

KEY = "sk-otel-test-secret-0123456789"
OTLP_TOKEN = "otlp-header-secret-9876543210"
WIKI_PASSWORD = "wiki-pass-55555"
MODEL_TOKEN = "model-query-token-77777"


@pytest.fixture(scope="module")
def collector() -> Iterator[OtlpReceiver]:
    with OtlpReceiver() as receiver:
        yield receiver


LIVE_TIMEOUT_S = 60.0
"""``otel_timeout_s`` with the live collector: it always answers, however busy the machine."""


@pytest.fixture
def receiver(collector: OtlpReceiver, cli: Runner) -> OtlpReceiver:
    collector.clear()
    cli.config(otel_timeout_s=LIVE_TIMEOUT_S)
    return collector


def otel_env(receiver: OtlpReceiver, **extra: str) -> dict[str, str]:
    return {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url, **extra}


def by_kind(spans: list[ReceivedSpan]) -> Counter[str]:
    return Counter(span.kind for span in spans)


def test_an_ask_is_an_agent_span_holding_a_span_per_model_and_tool_call(
    cli: Runner, wiki: FakeMediaWiki, receiver: OtlpReceiver, tmp_path: Path
) -> None:
    trace_path = tmp_path / "run.json"
    with FakeOpenAI(scripted(*GOOD_RUN)) as llm:
        env = {**servers_env(llm, wiki), **otel_env(receiver)}
        result = cli(["ask", QUESTION, "--trace", str(trace_path)], **env)
    assert (result.code, result.stdout, sourceless(result.stderr)) == (0, "Arthur's Magazine\n", "")
    trace = json.loads(trace_path.read_text(encoding="utf-8"))
    spans = receiver.spans
    assert by_kind(spans) == {"AGENT": 1, "LLM": 3, "TOOL": 2}
    assert len(llm.requests) == trace["calls"] == 3  # a model span per model call
    (agent,) = (span for span in spans if span.kind == "AGENT")
    assert agent.parent is None and agent.name == "react-cli ask"
    assert {span.parent for span in spans if span is not agent} == {agent.span_id}
    assert {span.trace_id for span in spans} == {agent.trace_id}
    assert all(agent.start_ns <= s.start_ns <= s.end_ns <= agent.end_ns for s in spans)
    facts = agent.attributes
    assert facts["input.value"] == QUESTION and facts["output.value"] == "Arthur's Magazine"
    assert (facts["react_cli.method"], facts["react_cli.protocol"]) == ("react", "text")
    assert (facts["react_cli.stop_reason"], facts["react_cli.calls"]) == ("finish", 3)
    models = [span for span in spans if span.kind == "LLM"]
    assert [span.name for span in models] == ["llm step 1", "llm step 2", "llm step 3"]
    for span, step in zip(models, trace["steps"], strict=True):
        assert span.attributes["llm.model_name"] == "test-model"
        assert span.attributes["llm.token_count.prompt"] == step["usage"]["prompt_tokens"]
        assert span.attributes["llm.token_count.total"] == step["usage"]["total_tokens"]
        assert json.loads(span.attributes["llm.invocation_parameters"])["stop"][0] == (
            "\nObservation"
        )
        assert "input.value" not in span.attributes  # the prompt only on request
    tools = [span for span in spans if span.kind == "TOOL"]
    assert [span.attributes["tool.name"] for span in tools] == ["Search", "Search"]
    assert json.loads(tools[0].attributes["tool.parameters"]) == {
        "type": "object",
        "properties": {"entity": {"type": "string"}},
        "required": ["entity"],
    }
    assert not [s for s in tools if {"input.value", "output.value"} & set(s.attributes)]
    assert {(span.status, span.message) for span in spans} == {(OK, "")}  # none is left Unset
    assert receiver.resources[0]["service.name"] == "react-cli"
    from opentelemetry import trace as global_trace

    # react-cli's provider is its own: the process's global one (the MCP SDK's) is untouched
    assert type(global_trace.get_tracer_provider()).__name__ == "ProxyTracerProvider"


def test_prompts_replies_and_tools_content_only_when_content_capture_is_asked_for(
    cli: Runner, wiki: FakeMediaWiki, receiver: OtlpReceiver, tmp_path: Path
) -> None:
    """One opt-in covers every content: the prompts and replies of the model spans, the
    arguments and results of the tool spans."""
    capture = {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"}
    trace_path = tmp_path / "run.json"
    with FakeOpenAI(scripted(*GOOD_RUN, *GOOD_RUN)) as llm:
        env = {**servers_env(llm, wiki), **otel_env(receiver, **capture)}
        assert cli(["ask", QUESTION, "--trace", str(trace_path)], **env).code == 0
        first = next(span for span in receiver.spans if span.kind == "LLM")
        sent = llm.requests[0].json
        assert sent is not None
        assert first.attributes["input.value"] == sent["messages"][0]["content"]
        assert first.attributes["llm.input_messages.0.message.content"].endswith("Thought 1:")
        assert first.attributes["output.value"] == GOOD_RUN[0]
        tool = next(span for span in receiver.spans if span.kind == "TOOL")
        assert json.loads(tool.attributes["input.value"]) == {"entity": "Arthur's Magazine"}
        assert tool.attributes["input.mime_type"] == "application/json"
        observed = json.loads(trace_path.read_text("utf-8"))["steps"][0]["actions"][0]
        assert tool.attributes["output.value"] == observed["observation"]
        receiver.clear()
        assert cli(["ask", QUESTION], **env, REACT_CLI_OTEL_CAPTURE_CONTENT="0").code == 0
    calls = [span for span in receiver.spans if span.kind in ("LLM", "TOOL")]
    assert len(calls) == 5
    assert not [s for s in calls if {"input.value", "output.value"} & set(s.attributes)]


CONCAT_TOOLS = (
    "from react_cli import tool\n\n@tool\n"
    "def concat(a: str, b: str) -> str:\n    'Join a and b.'\n    return a + b\n"
)


@pytest.mark.parametrize("protocol", ["text", "tools"])
def test_a_tool_span_names_each_argument_as_the_tools_schema_does(
    cli: Runner, wiki: FakeMediaWiki, receiver: OtlpReceiver, tmp_path: Path, protocol: str
) -> None:
    """A tool of two arguments: its span's input is the object the call passed, keyed by the
    schema's names (no made-up ``"a, b"`` holding a string of JSON), in both protocols."""
    tools = tmp_path / "concat_tools.py"
    tools.write_text(CONCAT_TOOLS, encoding="utf-8")
    if protocol == "text":
        replies = [
            Reply(text=' Join.\nAction 1: Concat[{"a": "x", "b": "y"}]'),
            Reply(text=" Done.\nAction 2: Finish[xy]"),
        ]
    else:
        replies = [
            Reply(text="Join.", tool_calls=[tool_call("concat", a="x", b="y")]),
            Reply(text="Done.", tool_calls=[tool_call("finish", answer="xy")]),
        ]
    with FakeOpenAI(replies) as llm:
        env = {**servers_env(llm, wiki), **otel_env(receiver, REACT_CLI_OTEL_CAPTURE_CONTENT="1")}
        args = ["ask", QUESTION, "--tools-from", str(tools), "--protocol", protocol]
        result = cli(args, **env)
    assert (result.code, result.stdout) == (0, "xy\n"), result.stderr
    (concat,) = (span for span in receiver.spans if span.kind == "TOOL")
    assert concat.attributes["tool.name"] == "Concat"
    assert json.loads(concat.attributes["input.value"]) == {"a": "x", "b": "y"}
    assert concat.attributes["output.value"] == "xy"
    schema = json.loads(concat.attributes["tool.parameters"])
    assert sorted(schema["properties"]) == ["a", "b"]
    assert concat.status == OK


def test_an_eval_is_a_span_holding_a_span_per_question_from_every_worker(
    cli: Runner, wiki: FakeMediaWiki, receiver: OtlpReceiver, tmp_path: Path
) -> None:
    out = tmp_path / "eval"
    args = ["eval", str(HOTPOT), "--methods", "react,cot-sc", "--concurrency", "3"]
    with FakeOpenAI(MethodsEndpoint(SCRIPTS)) as llm:
        env = {**servers_env(llm, wiki), **otel_env(receiver)}
        result = cli([*args, "--out", str(out)], **env)
    assert result.code == 0, result.stderr
    spans, rows, summary = receiver.spans, rows_of(out), summary_of(out)
    (root,) = (span for span in spans if span.parent is None)
    assert (root.name, root.kind, root.status) == ("react-cli eval", "CHAIN", OK)
    assert root.attributes["react_cli.em"] == summary["em"]
    ran = json.loads(root.attributes["input.value"])
    assert (ran["dataset"], ran["methods"], ran["questions"]) == (HOTPOT.name, "react,cot-sc", 6)
    assert root.attributes["output.mime_type"] == "application/json"
    ended = json.loads(root.attributes["output.value"])
    assert {m: (f["em"], f["f1"], f["n"]) for m, f in ended.items()} == {
        m: (f["em"], f["f1"], f["n"]) for m, f in summary["methods"].items()
    }
    questions = {span.span_id: span for span in spans if span.kind == "AGENT"}
    assert {span.parent for span in questions.values()} == {root.span_id}
    by_index = {span.attributes["react_cli.index"]: span for span in questions.values()}
    assert sorted(by_index) == [row["index"] for row in rows] == list(range(6))
    calls = [span for span in spans if span.kind in ("LLM", "TOOL")]
    assert {span.parent for span in calls} <= set(questions)  # each under its question
    assert {span.trace_id for span in spans} == {root.trace_id}
    models = [span for span in calls if span.kind == "LLM"]
    assert len(models) == summary["calls_made"] == len(llm.requests)  # one per request
    for row in rows:
        question = by_index[row["index"]]
        under = [span for span in models if span.parent == question.span_id]
        assert len(under) == row["calls_made"]
        sampled = [span for span in under if span.attributes["react_cli.call.kind"] == "sample"]
        assert len(sampled) == 1  # CoT-SC's 21 samples: one request answering n = 21
        react = json.loads((out / row["methods"]["react"]["trace"]).read_text("utf-8"))
        searched = [a for a in actions(react) if a["call"]["name"] != "Finish"]
        tools = [span for span in calls if span.kind == "TOOL"]
        assert len([t for t in tools if t.parent == question.span_id]) == len(searched)
        assert question.attributes["input.value"] == row["question"]
        assert question.attributes["output.value"] == (row["methods"]["react"]["answer"] or "")
        gold = row["gold"]
        assert question.attributes["react_cli.gold"] == ([gold] if isinstance(gold, str) else gold)
        react = row["methods"]["react"]
        assert (question.attributes["react_cli.em"], question.attributes["react_cli.f1"]) == (
            react["em"],
            react["f1"],
        )
        assert question.status == OK
        said = json.loads(question.attributes["metadata"])
        for method in ("react", "cot-sc"):
            done = row["methods"][method]
            assert (said[method]["stop_reason"], said[method]["em"], said[method]["f1"]) == (
                done["stop_reason"],
                done["em"],
                done["f1"],
            )


def forms(secret: str) -> set[str]:
    return {secret, json.dumps(secret)[1:-1], repr(secret)[1:-1]}


def test_no_secret_reaches_any_attribute(
    cli: Runner, wiki: FakeMediaWiki, receiver: OtlpReceiver
) -> None:
    """The model echoes its request (its Authorization header, its URL) into every reply, the
    prompt is captured, the wiki URL carries a password, the exporter a header with a key."""
    echoing = [Reply(text=f" {ECHO}\nAction 1: Search[Arthur's Magazine]"), Reply(text=ECHO)]
    with FakeOpenAI(echoing) as llm:
        env = {
            **servers_env(llm, wiki),
            **otel_env(receiver),
            "OPENAI_BASE_URL": f"{llm.url}?token={MODEL_TOKEN}",
            "OPENAI_API_KEY": KEY,
            "REACT_CLI_WIKI": wiki.url.replace("http://", f"http://bot:{WIKI_PASSWORD}@"),
            "REACT_CLI_OTEL_CAPTURE_CONTENT": "1",
            "OTEL_EXPORTER_OTLP_HEADERS": f"authorization=Bearer%20{OTLP_TOKEN},x-team=team42x",
        }
        result = cli(["ask", QUESTION, "--max-steps", "2"], **env)
    assert result.code == 1, result.stderr  # the echoes hold no Finish
    assert any(KEY in str(request.headers) for request in llm.requests)  # it was sent
    assert receiver.headers[0]["authorization"] == f"Bearer {OTLP_TOKEN}"  # to the collector
    sent = list(receiver.texts())
    assert any("***" in text for text in sent)  # the echoes were there, masked
    secrets = forms(KEY) | forms(OTLP_TOKEN) | forms(WIKI_PASSWORD) | forms(MODEL_TOKEN)
    leaked = [(secret, text[:80]) for text in sent for secret in secrets if secret in text]
    assert leaked == []


QUERY_TOKEN = "collector-query-token-31337"


def test_an_endpoint_s_query_stays_its_query_and_its_token_is_never_shown(
    cli: Runner, wiki: FakeMediaWiki, receiver: OtlpReceiver
) -> None:
    """``/v1/traces`` goes on the endpoint's path, its query (a token) after it; the token is
    a secret: neither a warning naming the collector nor a span holds it."""
    base = f"{receiver.url}/collector/?token={QUERY_TOKEN}"
    with FakeOpenAI(scripted(*GOOD_RUN)) as llm:
        env = {**servers_env(llm, wiki), **otel_env(receiver)}
        result = cli(["ask", QUESTION, "-v"], **{**env, "OTEL_EXPORTER_OTLP_ENDPOINT": base})
        down = f"http://127.0.0.1:{closed_port()}/c?token={QUERY_TOKEN}"
        cli.config()  # the quick otel_timeout_s: a refused export is not retried for long
        refused = cli(["ask", QUESTION], **{**env, "OTEL_EXPORTER_OTLP_ENDPOINT": down})
    assert (result.code, result.stdout) == (0, "Arthur's Magazine\n"), result.stderr
    assert receiver.paths[0] == f"/collector/v1/traces?token={QUERY_TOKEN}"
    assert by_kind(receiver.spans) == {"AGENT": 1, "LLM": 3, "TOOL": 2}
    said = f"warning: cannot send spans to http://127.0.0.1:{down.split(':')[2].split('/')[0]}"
    assert sourceless(refused.stderr).startswith(f"{said}/c/v1/traces (connection refused): ")
    shown = [result.stderr, refused.stderr, *receiver.texts()]
    shown += [path.read_text() for path in (cli.home / "traces").glob("*.json")]
    assert not [text for text in shown for form in forms(QUERY_TOKEN) if form in text]


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port  # nothing listens there any more: connections are refused


def test_a_refused_collector_changes_nothing_but_one_warning(
    cli: Runner, wiki: FakeMediaWiki
) -> None:
    port = closed_port()
    with FakeOpenAI(scripted(*GOOD_RUN)) as llm:
        env = {**servers_env(llm, wiki), "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{port}"}
        result = cli(["ask", QUESTION], **env)
    assert (result.code, result.stdout) == (0, "Arthur's Magazine\n")
    endpoint = f"http://127.0.0.1:{port}/v1/traces"
    said = f"warning: cannot send spans to {endpoint} (connection refused): 6 spans dropped\n"
    assert sourceless(result.stderr) == said


def test_a_collector_holding_an_export_holds_no_request_of_the_run(
    cli: Runner, wiki: FakeMediaWiki, receiver: OtlpReceiver
) -> None:
    """Each span is exported at once (a 1 ms batch delay); the collector takes the first export
    and answers nothing until the model's last request. The model's second reply waits until
    that export arrived, so the rest of the run (a Search, the last model request) went on
    while it hung: no request waited for the collector. Then it answers, and every span
    arrives."""
    exported, served = receiver.first_request, []

    def replies(body: dict[str, Any]) -> Reply:
        served.append(body)
        if len(served) == 2:
            assert exported.wait(timeout=30), "the first span was never exported"
        if len(served) == 3:
            receiver.release()  # the collector recovers
        return Reply(text=GOOD_RUN[min(len(served), 3) - 1])

    with FakeOpenAI(replies) as llm:
        receiver.hold(lambda: len(llm.requests))
        env = {**servers_env(llm, wiki), **otel_env(receiver, OTEL_BSP_SCHEDULE_DELAY="1")}
        result = cli(["ask", QUESTION], **env)
    assert (result.code, result.stdout, sourceless(result.stderr)) == (0, "Arthur's Magazine\n", "")
    assert receiver.model_requests_then is not None
    assert receiver.model_requests_then < len(llm.requests) == 3  # one came while it hung
    assert by_kind(receiver.spans) == {"AGENT": 1, "LLM": 3, "TOOL": 2}


def test_a_hanging_collector_ends_the_command_with_one_warning(
    cli: Runner, wiki: FakeMediaWiki
) -> None:
    """A collector that accepts connections and never answers: the export fails at
    ``otel_timeout_s``, the answer is the same, and stderr has one line."""
    cli.config(otel_timeout_s=0.2)
    with socket.socket() as hanging, FakeOpenAI(scripted(*GOOD_RUN)) as llm:
        hanging.bind(("127.0.0.1", 0))
        hanging.listen(8)  # connections complete in the backlog; nothing reads them
        endpoint = f"http://127.0.0.1:{hanging.getsockname()[1]}"
        env = {**servers_env(llm, wiki), "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint}
        result = cli(["ask", QUESTION], **env)
    assert (result.code, result.stdout) == (0, "Arthur's Magazine\n")
    why = "timed out waiting for the answer"
    dropped = f"warning: cannot send spans to {endpoint}/v1/traces ({why}): 6 spans dropped\n"
    assert sourceless(result.stderr) == dropped


def test_no_otel_wins_over_an_inherited_endpoint_and_a_bad_one_is_said(
    cli: Runner, wiki: FakeMediaWiki, receiver: OtlpReceiver
) -> None:
    with FakeOpenAI(scripted(*GOOD_RUN)) as llm:
        env = {**servers_env(llm, wiki), **otel_env(receiver)}
        assert sourceless(cli(["ask", QUESTION, "--no-otel"], **env).stderr) == ""
        assert receiver.requests == 0
        bad = {**env, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "ftp://collector/v1/traces"}
        inherited = cli(["ask", QUESTION], **bad)
        asked = cli(["ask", QUESTION, "--otel"], **bad)
    problem = "the OTLP endpoint must be an http(s) URL, not 'ftp://collector/v1/traces'"
    assert (inherited.code, inherited.stdout) == (0, "Arthur's Magazine\n")
    assert inherited.stderr == (
        f"warning: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set, but {problem}: no spans are sent\n"
    )
    assert (asked.code, asked.stderr) == (2, f"Error: --otel: {problem}\n")


_WITHOUT_EXTRA = """
import sys
from importlib.abc import MetaPathFinder
class NoOtel(MetaPathFinder):
    hidden = "opentelemetry.exporter.otlp.proto.grpc"
    def find_spec(self, name, path=None, target=None):
        if name.startswith(self.hidden):
            raise ModuleNotFoundError(name)
from react_cli.settings.settings import Settings
from react_cli.telemetry.setup import open_spans
warnings = []
open_spans(Settings(), warnings.append, {})  # off: nothing to import
print(sorted(m for m in sys.modules if m.startswith(("opentelemetry", "react_cli.telemetry.s"))))
sys.meta_path.insert(0, NoOtel())
try:
    open_spans(Settings(otel=True), warnings.append, {"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"})
except Exception as exc:
    print(type(exc).__name__, exc)
NoOtel.hidden = "opentelemetry"
open_spans(Settings(), warnings.append, {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://h:4318"})
print(*warnings)
try:
    open_spans(Settings(otel=True), warnings.append, {})
except Exception as exc:
    print(type(exc).__name__, exc)
"""


def test_spans_off_import_nothing_and_a_missing_extra_is_said() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _WITHOUT_EXTRA], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    needs = "spans need the 'otel' extra (pip install 'react-cli[otel]')"
    grpc = "spans over gRPC need the 'otel-grpc' extra (pip install 'react-cli[otel-grpc]')"
    assert out == [
        "['react_cli.telemetry.setup']",
        f"UsageError --otel: {grpc}",
        f"OTEL_EXPORTER_OTLP_ENDPOINT is set, but {needs}: no spans are sent",
        f"UsageError --otel: {needs}",
    ]


def test_text_no_encoder_takes_is_cleaned_for_the_spans(
    cli: Runner, wiki: FakeMediaWiki, receiver: OtlpReceiver
) -> None:
    """A lone surrogate (JSON may carry one) would make the whole batch unencodable."""
    with FakeOpenAI(scripted(" Go.\nAction 1: Search[a\ud800b]", GOOD_RUN[2])) as llm:
        env = {**servers_env(llm, wiki), **otel_env(receiver, REACT_CLI_OTEL_CAPTURE_CONTENT="1")}
        result = cli(["ask", QUESTION], **env)
    assert (result.code, sourceless(result.stderr)) == (0, "")
    assert by_kind(receiver.spans) == {"AGENT": 1, "LLM": 2, "TOOL": 1}
    (tool,) = (span for span in receiver.spans if span.kind == "TOOL")
    assert json.loads(tool.attributes["input.value"]) == {"entity": "a\ufffdb"}


def test_a_failed_call_is_an_error_span_in_a_failed_run(
    cli: Runner, wiki: FakeMediaWiki, receiver: OtlpReceiver
) -> None:
    with FakeOpenAI([Reply(status=500)]) as llm:  # down for good: retried, then given up
        env = {**servers_env(llm, wiki), **otel_env(receiver)}
        result = cli(["ask", QUESTION, "--method", "cot"], **env)
    assert result.code == 1
    (agent,) = (span for span in receiver.spans if span.kind == "AGENT")
    (model,) = (span for span in receiver.spans if span.kind == "LLM")
    assert (model.name, model.status, model.parent) == ("llm sample", 2, agent.span_id)
    assert "500" in model.message and model.attributes["react_cli.call.kind"] == "sample"
    assert (agent.status, agent.attributes["react_cli.stop_reason"]) == (2, "llm_error")
    assert (
        agent.attributes["react_cli.method"] == "cot"
        and "react_cli.protocol" not in agent.attributes
    )


def test_a_call_refused_for_want_of_consent_is_an_error_span_saying_who_refused(
    cli: Runner, wiki: FakeMediaWiki, receiver: OtlpReceiver, tmp_path: Path
) -> None:
    tools = tmp_path / "notes_tools.py"
    tools.write_text(
        "from react_cli import tool\n\n@tool(needs_consent=True)\n"
        "def remember(text: str) -> str:\n    'Write the text down.'\n    return 'kept'\n\n"
        "@tool\ndef shout(text: str) -> str:\n    'Say it loud.'\n    return text.upper()\n",
        encoding="utf-8",
    )
    script = (
        " Loud.\nAction 1: Shout[hi]",
        " Keep.\nAction 2: Remember[hi]",
        " Done.\nAction 3: Finish[hi]",
    )
    with FakeOpenAI(scripted(*script)) as llm:
        env = {**servers_env(llm, wiki), **otel_env(receiver)}
        result = cli(["ask", QUESTION, "--tools-from", str(tools)], **env)  # piped: nobody asked
    assert result.code == 0, result.stderr
    shout, remember = (span for span in receiver.spans if span.kind == "TOOL")
    assert (shout.status, shout.attributes["react_cli.tool.needs_consent"]) == (OK, False)
    assert "react_cli.tool.refused" not in shout.attributes
    assert remember.attributes["react_cli.tool.refused"] == "no_terminal"
    assert remember.attributes["react_cli.tool.needs_consent"] is True
    assert (remember.status, remember.message) == (ERROR, "refused: no terminal to ask")
    assert "output.value" not in remember.attributes  # content: only with capture on
