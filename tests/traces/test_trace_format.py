"""The trace format does not move: today's records write, and read back, the exact bytes of
``fixtures/traces/now`` (version 3); the version-2 traces the code before steps held replies
and actions wrote for the same runs (``fixtures/traces/v2-calls``) upgrade to exactly those
bytes; the older ones, written before calls and tool sets were recorded
(``fixtures/traces/v2``) and before methods (``fixtures/traces``, version 1), upgrade to the
same steps but for what they never recorded (the pages the observations showed). The
examples stay as they were recorded (versions 1 and 2): each upgrades to a trace that reads
back to its own bytes."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from react_cli.core.conversation import ConversationRecord, Earlier, Turn, TurnStep
from react_cli.core.errors import LLMConnectionError, TraceError
from react_cli.core.method import Method
from react_cli.core.records import ProtocolName, ToolCall, Usage
from react_cli.core.sources import PageSource, Sentence, Wiki, WikiKind
from react_cli.core.trajectory import PARSE_FAILURE, Cue, ErrorKind, Step
from react_cli.infra.deadline import Deadline
from react_cli.infra.untrusted import dump_json
from react_cli.llm.base import Completion, ModelRequest, TextSink
from react_cli.llm.toolcalls import assistant_message
from react_cli.loop.limits import Limits
from react_cli.loop.prompts import prompt_set
from react_cli.methods.memo import Sampling
from react_cli.session import Session, settings_protocols
from react_cli.settings.settings import Settings
from react_cli.tools.base import ToolResult, ToolSet
from react_cli.tools.paper import LOOKUP, SEARCH
from react_cli.traces.diffs import compare, compare_records
from react_cli.traces.recorder import trace_of
from react_cli.traces.replay import rerun
from react_cli.traces.trace import Trace

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"
V2 = FIXTURES / "v2"
V2_CALLS = FIXTURES / "v2-calls"
NOW = FIXTURES / "now"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "traces"
CREATED = datetime(2026, 12, 1, 12, 0, tzinfo=timezone.utc)
BROKEN = "Wikipedia request failed: HTTP 503 from x"
Reply = str | tuple[str, str] | Exception


class Model:
    """Scripted replies: text (finish ``stop``), (text, finish reason), or an error raised."""

    def __init__(self, replies: list[Reply]) -> None:
        self.replies = list(replies)

    def complete(
        self, request: ModelRequest, *, deadline: Deadline, on_text: TextSink | None = None
    ) -> Completion:
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        text, finish = reply if isinstance(reply, tuple) else (reply, "stop")
        if on_text:
            on_text(text)
        return Completion(text, Usage(100, 10), 0.25, 1 if "retry" in text else 0, finish)


def page(title: str, sentence: int) -> PageSource:
    """The source of an observation showing one sentence of ``title``."""
    wiki = Wiki(WikiKind.MEDIAWIKI, host="en.wikipedia.org", language="en")
    url = f"https://en.wikipedia.org/w/index.php?title={title.replace(' ', '_')}&oldid=123456"
    return PageSource(wiki, title, url, 123456, (Sentence(sentence, f"{title} is a page."),))


class Search:
    """A hit, a disambiguation page, a failure."""

    spec = SEARCH

    def call(self, entity: str, *, deadline: Deadline) -> ToolResult:
        if entity == "Broken":
            unavailable = "Wikipedia is unavailable right now (HTTP 503); try again or Finish."
            return ToolResult(unavailable, error=BROKEN)
        if entity == "Bush":
            details = {"similar": ["Bush (plant)", "George W. Bush"], "disambiguation": True}
            details.update(resolved_title="Bush", folded=False)
            return ToolResult("Could not find [Bush]. Similar: ['Bush (plant)'].", details)
        details = {"query": entity, "resolved_title": entity, "folded": False}
        return ToolResult(f"{entity} is a page.", details, source=page(entity, 0))


class Lookup:
    """Always finds something."""

    spec = LOOKUP

    def call(self, keyword: str, *, deadline: Deadline) -> ToolResult:
        details = {"resolved_title": "X", "total": 2, "result": 1}
        return ToolResult(f"(Result 1 / 2) About {keyword}.", details, source=page("X", 3))


SCENARIOS: dict[str, tuple[dict[str, Any], list[Reply], dict[str, Any] | None]] = {
    "answered": (
        {},
        [
            " I search.\nAction 1: Search[Ed Wood]",
            " retry then look.\nAction 2: Lookup[born]",
            " Done.\nAction 3: Finish[1994]",
        ],
        None,
    ),
    "every-error": (  # a parse error, tool errors, a reply cut at max_tokens, a forced answer
        {"max_steps": 4, "force_answer": True, "max_tool_errors": 3, "max_parse_errors": 3},
        [
            " hmm",
            " nothing",
            " t\nAction 2: Search[Broken]",
            (" cut short", "length"),
            " Search[Bush]",
            " t\nAction 4: Search[Broken]",
            "1994]",
        ],
        None,
    ),
    "endpoint-failed": (
        {"price_input": 0.15, "price_output": 0.6},
        [
            " t\nAction 1: Search[Ed Wood]",
            LLMConnectionError(
                "cannot reach http://127.0.0.1:9/v1/chat/completions: connection refused"
            ),
        ],
        None,
    ),
    "fork": (
        {"max_steps": 2},
        [" t\nAction 1: Search[A]", " u\nAction 2: Search[B]"],
        {"forked_from": {"trace": "/tmp/x.json", "id": "0123456789ab", "step": 2}},
    ),
}


def written(name: str) -> str:
    """The trace of scenario ``name`` as the current code writes it (machine times fixed)."""
    settings_values, replies, extra = SCENARIOS[name]
    settings = Settings(
        model="scripted",
        base_url="http://user:pw@127.0.0.1:9/v1?key=SECRET12345",
        **settings_values,
    )
    session = Session(
        prompts=prompt_set("hotpotqa", [Method.REACT]),
        model=Model(replies),
        tools=lambda: ToolSet([Search(), Lookup()]),
        limits=Limits(**{k: v for k, v in settings_values.items() if not k.startswith("price")}),
        hybrid_steps=7,
        sampling=Sampling(),
        settings=settings,
    )
    outcome, run = session.answer("Who directed Ed Wood?", Method.REACT)
    document = trace_of(session, outcome, run, created=CREATED, extra=extra).to_json()
    return with_fixed_times(document)


def with_fixed_times(document: dict[str, Any]) -> str:
    """A written trace's bytes, its id and machine times fixed."""
    document.update(id="0123456789ab", duration_s=1.0)
    for step in document["steps"]:
        if step["error"] is not None and not step["replies"]:  # its call failed: time measured
            step["latency_s"] = 0.0
        for action in step["actions"]:
            action["latency_s"] = 0.0
    return dump_json(document, indent=2) + "\n"


@pytest.mark.parametrize("name", SCENARIOS)
def test_a_run_writes_the_bytes_it_always_wrote(name: str) -> None:
    assert written(name) == (NOW / f"{name}.json").read_text(encoding="utf-8")


def test_a_trace_reads_back_to_the_same_bytes(tmp_path: Path) -> None:
    for path in NOW.glob("*.json"):
        assert dump_json(Trace.read(path).to_json(), indent=2) + "\n" == path.read_text("utf-8")
    for path in EXAMPLES.glob("*.json"):  # upgraded once, then stable
        upgraded = dump_json(Trace.read(path).to_json(), indent=2) + "\n"
        (tmp_path / path.name).write_text(upgraded, encoding="utf-8")
        again = dump_json(Trace.read(tmp_path / path.name).to_json(), indent=2) + "\n"
        assert '"version": 3' in upgraded and again == upgraded


@pytest.mark.parametrize("name", [*SCENARIOS, "tools", "conversation"])
def test_a_version_2_trace_upgrades_to_what_today_writes(name: str) -> None:
    old = V2_CALLS / f"{name}.json"
    assert '"version": 2' in old.read_text(encoding="utf-8")
    upgraded = dump_json(Trace.read(old).to_json(), indent=2) + "\n"
    assert upgraded == (NOW / f"{name}.json").read_text(encoding="utf-8")


def _without_sources(steps: list[Step]) -> list[Step]:
    return [
        replace(step, actions=[replace(action, source=None) for action in step.actions])
        for step in steps
    ]


@pytest.mark.parametrize("folder", [V2, FIXTURES])
@pytest.mark.parametrize("name", SCENARIOS)
def test_older_traces_upgrade_to_todays_steps(name: str, folder: Path) -> None:
    """Before calls were recorded: each action's call read again from its text."""
    old = Trace.read(folder / f"{name}.json")
    assert old.run.steps == _without_sources(Trace.read(NOW / f"{name}.json").run.steps)
    assert old.record.method is Method.REACT


def test_a_version_1_trace_is_upgraded_as_version_2_is() -> None:
    for name in SCENARIOS:
        old = FIXTURES / f"{name}.json"
        assert '"version": 1' in old.read_text(encoding="utf-8")
        upgraded = dump_json(Trace.read(old).to_json(), indent=2)
        assert upgraded == dump_json(Trace.read(V2 / f"{name}.json").to_json(), indent=2)


@pytest.mark.parametrize("folder", [FIXTURES, NOW])
def test_each_step_error_is_typed_by_kind(folder: Path) -> None:
    steps = Trace.read(folder / "every-error.json").run.steps
    assert [step.error for step in steps] == [PARSE_FAILURE, None, None, None, None]
    assert [[action.error for action in step.actions] for step in steps] == [
        [None],
        [BROKEN],
        [None],
        [BROKEN],
        [None],
    ]
    assert [(step.forced, step.max_tokens_reached) for step in steps][2:] == [
        (False, True),
        (False, False),
        (True, False),
    ]
    assert all("error" not in a.details for s in steps for a in s.actions)  # typed, not a detail
    failed = Trace.read(folder / "endpoint-failed.json").run.steps[-1]
    assert failed.error is not None and failed.error.kind is ErrorKind.MODEL
    assert failed.replies == [] and failed.actions == [] and failed.calls == 1


def test_the_config_is_read_back_once_with_its_stop_rules() -> None:
    trace = Trace.read(FIXTURES / "every-error.json")
    limits = trace.config.limits
    assert (limits.max_steps, limits.force_answer, limits.max_tool_errors) == (4, True, 3)
    assert trace.config.base_url == "http://127.0.0.1:9/v1"  # recorded without its secrets
    assert trace.template().name == "hotpotqa"


def test_a_malformed_config_is_a_trace_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    text = (FIXTURES / "answered.json").read_text(encoding="utf-8")
    path.write_text(text.replace('"max_steps": 8', '"max_steps": "eight"'), encoding="utf-8")
    with pytest.raises(TraceError, match=rf"^{path}: malformed trace \(config"):
        Trace.read(path)


def test_a_method_trace_keeps_its_method_through_the_upgrade() -> None:
    path = EXAMPLES / "kiss-and-tell-cot-sc-react.json"
    trace = Trace.read(path)
    upgraded = trace.to_json()
    old = json.loads(path.read_text("utf-8"))
    assert {key: upgraded[key] for key in old if key not in ("version", "steps")} == {
        key: value for key, value in old.items() if key not in ("version", "steps")
    }
    record = trace.record
    assert (record.method, record.branch, record.calls) == (
        Method.COT_SC_REACT,
        Method.REACT,
        3,
    )
    assert len(record.samples) == 21 and record.votes == {"Chief of Protocol": 10, "Ambassador": 6}
    assert trace.config.samples == 21 and trace.config.hybrid_max_steps == 7
    assert set(trace.config.prompts) == {"react", "cot"}


class CallingModel:
    """Native tool calls: each reply's text and calls, as an endpoint sends them."""

    def __init__(self, replies: list[tuple[str, tuple[ToolCall, ...]]]) -> None:
        self.replies = list(replies)

    def complete(
        self, request: ModelRequest, *, deadline: Deadline, on_text: TextSink | None = None
    ) -> Completion:
        text, calls = self.replies.pop(0)
        message = assistant_message(text, calls)
        return Completion(text, Usage(100, 10), 0.25, 0, "tool_calls", calls, message)


TOOL_REPLIES = [  # two calls in one reply, a malformed call, no call (and its follow-up), finish
    (
        "I search both.",
        (
            ToolCall("search", '{"entity": "Ed Wood"}', "c1"),
            ToolCall("lookup", '{"keyword": "born"}', "c2"),
        ),
    ),
    ("Oops.", (ToolCall("search", '{"title": "x"}', "c3"),)),
    ("Thinking.", ()),
    ("", (ToolCall("finish", '{"answer": "1994"}', "c4"),)),
]


def written_tools() -> str:
    settings = Settings(model="scripted", base_url="http://127.0.0.1:9/v1", protocol="tools")
    session = Session(
        prompts=prompt_set("hotpotqa", [Method.REACT], ProtocolName.TOOLS),
        model=CallingModel(TOOL_REPLIES),
        tools=lambda: ToolSet([Search(), Lookup()]),
        limits=Limits(),
        hybrid_steps=7,
        protocols=settings_protocols(settings),
        settings=settings,
    )
    outcome, run = session.answer("Who directed Ed Wood?", Method.REACT)
    document = trace_of(session, outcome, run, created=CREATED).to_json()
    return with_fixed_times(document)


def test_a_tools_run_writes_and_reads_back_the_bytes_it_always_wrote() -> None:
    path = NOW / "tools.json"
    assert written_tools() == path.read_text(encoding="utf-8")
    trace = Trace.read(path)
    assert dump_json(trace.to_json(), indent=2) + "\n" == path.read_text("utf-8")
    steps = trace.run.steps
    assert [[action.call for action in step.actions] for step in steps] == [
        [
            ToolCall("Search", "Ed Wood", "c1", {"entity": "Ed Wood"}),
            ToolCall("Lookup", "born", "c2", {"keyword": "born"}),
        ],
        [None],
        [ToolCall("Finish", "1994", "c4", {"answer": "1994"})],
    ]
    assert steps[1].error == PARSE_FAILURE and steps[2].replies[1].message is not None
    assert [reply.cue for reply in steps[2].replies] == [Cue.THOUGHT, Cue.ACTION]
    assert steps[2].replies[1].text == "" and steps[0].label(1) == "1.2"
    assert trace.protocol is ProtocolName.TOOLS and trace.record.calls == 4


EARLIER = Earlier(
    (
        Turn(
            "Who directed Ed Wood?",
            "Tim Burton",
            (TurnStep("I search.", ToolCall("Search", "Ed Wood"), "Ed Wood is a page.", 1),),
        ),
    ),
    max_tokens=1000,
    carried={"page": "Ed Wood"},
)


def written_turn() -> str:
    """The trace of a conversation's second question (fields only added to today's)."""
    settings = Settings(model="scripted", base_url="http://127.0.0.1:9/v1")
    session = Session(
        prompts=prompt_set("hotpotqa", [Method.REACT]),
        model=Model([" I look.\nAction 1: Lookup[born]", " Done.\nAction 2: Finish[1958]"]),
        tools=lambda: ToolSet([Search(), Lookup()]),
        limits=Limits(),
        hybrid_steps=7,
        settings=settings,
    )
    outcome, run = session.answer("When was he born?", Method.REACT, earlier=EARLIER)
    record = ConversationRecord("fedcba987654", 2, EARLIER)
    extra = {"conversation": record.to_json()}
    document = trace_of(session, outcome, run, created=CREATED, extra=extra).to_json()
    return with_fixed_times(document)


def test_a_turn_of_a_conversation_writes_and_reads_back_the_bytes_it_always_wrote() -> None:
    path = NOW / "conversation.json"
    assert written_turn() == path.read_text(encoding="utf-8")
    trace = Trace.read(path)
    assert dump_json(trace.to_json(), indent=2) + "\n" == path.read_text("utf-8")
    assert trace.conversation == ConversationRecord("fedcba987654", 2, EARLIER)
    answered = Trace.read(NOW / "answered.json")
    assert answered.conversation is None  # traces from before conversations: none


@pytest.mark.parametrize(
    "conversation",
    [{"id": "../x", "turn": 1}, {"id": "ab", "turn": 0}, {"id": "ab", "turn": 1, "earlier": [7]}],
)
def test_a_malformed_conversation_is_a_trace_error(tmp_path: Path, conversation: Any) -> None:
    path = tmp_path / "t.json"
    document = json.loads((NOW / "answered.json").read_text(encoding="utf-8"))
    path.write_text(json.dumps({**document, "conversation": conversation}), encoding="utf-8")
    with pytest.raises(TraceError, match=rf"^{path}: malformed trace \("):
        Trace.read(path)


EVERY_TRACE = sorted(
    [*EXAMPLES.glob("*.json"), *FIXTURES.glob("*.json"), *FIXTURES.glob("*/*.json")],
    key=lambda path: str(path.relative_to(FIXTURES.parents[2])),
)


@pytest.mark.parametrize(
    "path", EVERY_TRACE, ids=lambda path: str(path.relative_to(FIXTURES.parents[2]))
)
def test_every_example_and_fixture_trace_re_runs_as_recorded(path: Path) -> None:
    """Each version's traces re-run offline with today's loop and reproduce: the same actions,
    observations, answer and stop reason, step by step (a reply of several calls is one step
    today, as it is once upgraded)."""
    recorded = Trace.read(path)
    outcome, now = rerun(recorded)
    assert compare(recorded.run, now) == []
    assert compare_records(recorded.record, outcome.record()) == []
