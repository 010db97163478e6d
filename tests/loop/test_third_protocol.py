"""The seam for protocols, proven: a third protocol defined in this module alone (the model
answers each step with a JSON object: a thought and the calls it makes, written as function
calls, ``search("Ed Wood")``) runs through the real loop, and its steps are shown by the live
renderer, by ``replay`` (from the trace alone), by the Markdown and HTML exports and by the
Inspect AI export, with no change under ``react_cli/display`` or ``react_cli/share``: they
show what the steps carry, and never read a protocol's text."""

from __future__ import annotations

import io
import json
import re
import shutil
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from inproc import Runner
from scripted import DictTools, ScriptedModel

from react_cli.core.conversation import Earlier
from react_cli.core.method import Method
from react_cli.core.records import ToolCall
from react_cli.core.trajectory import Action, Cue, Reply, Step
from react_cli.display.render import Renderer
from react_cli.display.terminal import make_console
from react_cli.llm.base import CallKind, ModelRequest
from react_cli.loop.limits import Limits
from react_cli.loop.prompts import PromptTemplate, prompt_set
from react_cli.loop.protocol import NO_EARLIER, Exchange, Protocol, Transcript
from react_cli.session import Session
from react_cli.settings.settings import Settings
from react_cli.tools.base import FINISH, ToolSet, ToolSpec
from react_cli.traces.recorder import trace_of

pytest_plugins = ["share_evals"]

QUESTION = "Who directed Ed Wood?"
PAGES = {"Ed Wood": "Ed Wood is a 1994 film directed by Tim Burton.", "Tim Burton": "A director."}
REPLIES = [  # two calls in one reply, then a call of a tool the run lacks, then the answer
    '{"thought": "I look both up.", "calls": [{"tool": "search", "input": "Ed Wood"}, '
    '{"tool": "lookup", "input": "1994"}]} and some chatter',
    '{"thought": "Maybe a map.", "calls": [{"tool": "map", "input": "Hollywood"}]}',
    '{"thought": "Tim Burton it is.", "calls": [{"tool": "finish", "input": "Tim Burton"}]}',
]


class JsonShown:
    """Nothing while the reply streams (the JSON is not yet whole); its thought at the end."""

    def __init__(self) -> None:
        self.text = ""

    def feed(self, text: str) -> str:
        self.text += text
        return ""

    def end(self) -> str:
        return read_reply(self.text)[0]


def read_reply(text: str) -> tuple[str, list[tuple[str, str]], str]:
    """A reply's thought, its calls (tool, input) and the text after its JSON object."""
    try:
        value, end = json.JSONDecoder().raw_decode(text.strip())
    except ValueError:
        return "", [], text
    calls = [(str(c.get("tool", "")), str(c.get("input", ""))) for c in value.get("calls", [])]
    return str(value.get("thought", "")), calls, text.strip()[end:]


class JsonTranscript(Transcript):
    """A prompt of JSON replies and ``Result:`` lines."""

    def __init__(self, prompt: str, specs: Sequence[ToolSpec]) -> None:
        self.prompt = prompt
        self.specs = {spec.name.casefold(): spec for spec in specs}

    def turn(self, step: Step, exchange: Exchange) -> None:
        request = ModelRequest(CallKind.STEP, self.prompt, step=step.index)
        completion = exchange.ask(request, step, Cue.THOUGHT, JsonShown())
        thought, calls, after = read_reply(completion.text)
        self.prompt += completion.text + "\n"
        actions = [self._action(tool, argument) for tool, argument in calls]
        reply = Reply(Cue.THOUGHT, completion.text, ignored=after.strip())
        exchange.replied(step, reply, actions or [Action(None, None, "Reply with JSON.")], thought)

    def _action(self, tool: str, argument: str) -> Action:
        written = f"{tool}({json.dumps(argument)})"  # this protocol's own way of writing it
        spec = self.specs.get(tool.casefold())
        if spec is None:
            return Action(written, None, f"There is no tool {tool}.")
        return Action(written, ToolCall(spec.name, argument))

    def observe(self, step: Step) -> None:
        for action in step.actions:
            self.prompt += f"Result: {action.observation}\n"

    def force_answer(self, step: Step, exchange: Exchange) -> None:
        request = ModelRequest(CallKind.FORCED, self.prompt + "Answer now.\n", step=step.index)
        completion = exchange.ask(request, step, Cue.ACTION)
        answer = completion.text.strip()
        exchange.replied(
            step,
            Reply(Cue.ACTION, completion.text),
            [Action(f"finish({json.dumps(answer)})", ToolCall(FINISH.name, answer))],
        )


class JsonProtocol(Protocol):
    def start(
        self,
        template: PromptTemplate,
        question: str,
        tools: ToolSet,
        earlier: Earlier = NO_EARLIER,
    ) -> JsonTranscript:
        return JsonTranscript(template.prefix(question), tools.specs)


def without_times(text: str) -> str:
    """What was shown, its times left out (a tool's few microseconds live round to 0 in the
    trace, which then shows no tool time)."""
    return re.sub(r" \d+\.\d+ s", " T s", text).replace(" · tool T s", "")


@pytest.fixture
def recorded(tmp_path: Path) -> tuple[Path, str]:
    """The third protocol's run, as ``-v`` showed it live, and its trace (written as every
    trace is, naming its protocol)."""
    settings = Settings(model="scripted", base_url="http://127.0.0.1:9/v1")
    session = Session(
        prompts=prompt_set("hotpotqa", [Method.REACT]),
        model=ScriptedModel(list(REPLIES), chunk=5),
        tools=lambda: DictTools(dict(PAGES)).tool_set(),
        limits=Limits(max_steps=4),
        hybrid_steps=7,
        protocols={Method.REACT: JsonProtocol(), Method.ACT: JsonProtocol(thoughts=False)},
        settings=settings,
    )
    live = io.StringIO()
    outcome, run = session.answer(QUESTION, Method.REACT, Renderer(make_console(live)))
    assert run.answer == "Tim Burton"
    trace = trace_of(session, outcome, run, created=datetime.now(timezone.utc))
    trace.config = replace(trace.config, protocol="json")
    path = tmp_path / "json.json"
    trace.write(path)
    return path, live.getvalue()


SHOWN = [
    "Thought 1: I look both up.",
    'Action 1.1: search("Ed Wood")',
    'Action 1.2: lookup("1994")',
    "(ignored) and some chatter",
    "Observation 1.1: Ed Wood is a 1994 film directed by Tim Burton.",
    "Observation 1.2: (Result 1 / 1) Something about 1994.",
    "Thought 2: Maybe a map.",
    'Action 2: map("Hollywood")',
    "Observation 2: There is no tool map.",
    "Thought 3: Tim Burton it is.",
    'Action 3: finish("Tim Burton")',
]


def test_the_renderer_and_replay_show_the_third_protocols_steps(
    cli: Runner, recorded: tuple[Path, str]
) -> None:
    path, live = recorded
    labels = ("Thought", "Action", "Observation", "(ignored)")
    assert [line for line in live.splitlines() if line.startswith(labels)] == SHOWN
    assert "  (model T s · 20 tokens)" in without_times(live)
    assert "  (model T s · 20 tokens · no valid action)" in without_times(live)
    assert "Answer: Tim Burton" in live
    shown = cli(["replay", str(path)])
    assert shown.code == 0, shown.stderr
    assert without_times(shown.stdout) == without_times(live)  # from the trace alone


def test_the_markdown_and_html_exports_show_the_third_protocols_steps(
    cli: Runner, recorded: tuple[Path, str]
) -> None:
    path, _ = recorded
    markdown = cli(["replay", str(path), "--format", "markdown"])
    assert markdown.code == 0, markdown.stderr
    for said in ("**Thought 1:** I look both up.", '**Action 1.2:** lookup("1994")'):
        assert said in markdown.stdout
    assert "**Observation 2:** There is no tool map." in markdown.stdout
    assert "| Protocol | json |" in markdown.stdout and "| Steps | 3 |" in markdown.stdout
    page = cli(["replay", str(path), "--format", "html"])
    assert page.code == 0, page.stderr
    soup = BeautifulSoup(page.stdout, "html.parser")
    first = soup.find_all("details", class_="step")[0]
    assert first.summary.get_text() == 'Step 1 · search("Ed Wood"); lookup("1994")'
    fields = [div.get_text() for div in first.find_all("div", recursive=False)]
    assert fields[:3] == [
        "Thought 1:I look both up.",
        'Action 1.1:search("Ed Wood")',
        "Observation 1.1:Ed Wood is a 1994 film directed by Tim Burton.",
    ]
    assert first.find("details", class_="raw").pre.get_text() == REPLIES[0]


def test_the_inspect_export_shows_the_third_protocols_steps(
    cli: Runner, recorded: tuple[Path, str], eval_a: Path, tmp_path: Path
) -> None:
    """The log as Inspect's reader reads it (``share/test_inspect_export.py`` reads every log
    with the reader itself; its import alone costs two seconds)."""
    path, _ = recorded
    folder = tmp_path / "eval"
    shutil.copytree(eval_a, folder)
    first = json.loads((folder / "results.jsonl").read_text(encoding="utf-8").splitlines()[0])
    shutil.copyfile(path, folder / first["trace"])  # the first question, in the third protocol
    result = cli(["eval", "export", str(folder), "-o", str(tmp_path / "log.json")])
    assert result.code == 0, result.stderr
    log = json.loads((tmp_path / "log.json").read_text(encoding="utf-8"))
    # rows are written as questions finish, samples in dataset order: find the one replaced
    (sample,) = [s for s in log["samples"] if s["input"] == first["question"]]
    said = sample["messages"]
    assert [message["role"] for message in said] == [
        "system",
        "user",
        "assistant",  # step 1: its thought and two calls
        "tool",
        "tool",
        "assistant",  # step 2: no call the run could make, and what the model was told
        "user",
        "assistant",  # step 3: finish
    ]
    calls = said[2]["tool_calls"]
    assert said[2]["content"] == "I look both up."
    assert [(c["function"], c["arguments"]) for c in calls] == [
        ("Search", {"entity": "Ed Wood"}),
        ("Lookup", {"keyword": "1994"}),
    ]
    assert [m["tool_call_id"] for m in said[3:5]] == [c["id"] for c in calls]
    assert said[4]["content"] == "(Result 1 / 1) Something about 1994."
    assert said[6]["content"] == "There is no tool map." and said[5]["content"] == REPLIES[1]
    assert said[7]["tool_calls"][0]["arguments"] == {"answer": "Tim Burton"}
