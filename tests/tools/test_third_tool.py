"""The seam for tools, proven with tools defined in this module alone and no change under
``react_cli/``: a third tool (a one-method ``Toolbox``) given to the session in its registry (a
value: nothing process-wide is registered) runs end to end through the session ``ask`` opens,
its trace, ``replay --rerun`` (offline, the tool gone) and ``eval``; and a third Wikipedia tool
is one method of a subclass of ``Wikipedia``, reading the page Search loaded, listed, turned
off by ``--no-wiki`` and carried into a follow-up as Search and Lookup are."""

from __future__ import annotations

import ast
import json
import operator
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

import pytest
from eval_fakes import react_plan
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, Reply, scripted
from inproc import Runner

from react_cli.core.method import Method
from react_cli.eval.runner import claimed, evaluate, shared_limits
from react_cli.infra.deadline import Deadline
from react_cli.loop.prompts import prompt_set
from react_cli.session import OpenSession, open_session
from react_cli.settings.settings import Settings
from react_cli.tools.base import NOTHING_NEW, ToolResult, ToolSpec
from react_cli.tools.registry import BUILT_IN, ToolRegistry
from react_cli.tools.toolbox import Toolbox, tool_method
from react_cli.tools.wikipedia import PAGE, Wikipedia, page_sentences
from react_cli.traces.recorder import trace_of
from react_cli.traces.trace import now_utc

QUESTION = "What is six times seven?"
PROMPT = (
    "Solve a question answering task with interleaving Thought, Action, Observation steps. "
    "Action can be:\n{tools}\n\nQuestion: {question}\n"
)
_OPERATORS: dict[type[ast.AST], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}


def _value(node: ast.AST) -> float:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return float(node.value)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        return float(_OPERATORS[type(node.op)](_value(node.left), _value(node.right)))
    raise ValueError("not arithmetic")


class Calculator(Toolbox):
    """Arithmetic on + - * / and numbers; anything else is an observation saying so. Each
    box records its calls in ``calls`` (the fixture's subclass gives the list)."""

    calls: ClassVar[list[str]] = []

    @tool_method(ToolSpec("Calculate", "expression", "evaluates an arithmetic expression."))
    def calculate(self, argument: str, *, deadline: Deadline) -> ToolResult:
        self.calls.append(argument)
        try:
            value = _value(ast.parse(argument, mode="eval").body)
        except (SyntaxError, ValueError, ZeroDivisionError) as exc:
            return ToolResult(f"Could not calculate {argument}: {exc}", error=str(exc))
        return ToolResult(f"{value:g}", {"expression": argument})


COUNT = ToolSpec("Count", "keyword", "counts the sentences of the current page holding keyword.")


class Counting(Wikipedia):
    """Wikipedia with a third tool: one method, on the page Search and Lookup share."""

    @tool_method(COUNT)
    def count(self, keyword: str, *, deadline: Deadline) -> ToolResult:
        page = self._page
        if page is None:
            return ToolResult(
                "No page is loaded yet: use Search[entity] first.", {NOTHING_NEW: True}
            )
        hits = [s for s in self._sentences if keyword.lower() in s.text.lower()]
        said = f"{len(hits)} sentences of {page.title} hold {keyword}."
        return ToolResult(said, {"resolved_title": page.title, "total": len(hits)})


@pytest.fixture
def calls() -> Iterator[list[str]]:
    """The calculator's calls while a test runs, in order (a list of the test's own)."""
    made: list[str] = []
    Calculator.calls = made
    yield made
    Calculator.calls = []


@pytest.fixture
def prompt(tmp_path: Path) -> Path:
    path = tmp_path / "tools.txt"
    path.write_text(PROMPT, encoding="utf-8")
    return path


def settings_for(llm: FakeOpenAI, wiki: FakeMediaWiki, prompt: Path, **more: Any) -> Settings:
    return Settings(model="m", base_url=llm.url, wiki=wiki.url, prompt=str(prompt), **more)


@contextmanager
def session_of(settings: Settings, registry: ToolRegistry) -> Iterator[OpenSession]:
    """The session ``ask`` opens with ``settings``, its toolboxes ``registry``'s."""
    prompts = prompt_set(settings.prompt, [Method.REACT])
    with open_session(settings, prompts, registry=registry) as opened:
        yield opened


def asked(opened: OpenSession, question: str, trace: Path) -> Any:
    """``question`` answered as ``ask`` answers it, its trace written to ``trace``."""
    session = opened.session
    outcome, run = session.answer(question, Method.REACT)
    trace_of(session, outcome, run, created=now_utc()).write(trace)
    return run


CALCULATING = ToolRegistry((*BUILT_IN.toolboxes, Calculator))
CALCULATED = (" I should multiply.\nAction 1: Calculate[6 * 7]", " It is 42.\nAction 2: Finish[42]")


def test_a_third_tool_runs_and_the_trace_records_it(
    wiki: FakeMediaWiki, calls: list[str], prompt: Path, tmp_path: Path
) -> None:
    trace = tmp_path / "calc.json"
    with (
        FakeOpenAI(scripted(*CALCULATED)) as llm,
        session_of(settings_for(llm, wiki, prompt), CALCULATING) as opened,
    ):
        run = asked(opened, QUESTION, trace)
    assert run.answer == "42" and calls == ["6 * 7"]
    first, second = (request.json["messages"][0]["content"] for request in llm.requests)
    assert "(3) Calculate[expression], which evaluates an arithmetic expression." in first
    assert "(4) Finish[answer], which returns the answer and finishes the task." in first
    assert second.endswith("Action 1: Calculate[6 * 7]\nObservation 1: 42\nThought 2:")
    recorded = json.loads(trace.read_text(encoding="utf-8"))
    names = [tool["name"] for tool in recorded["config"]["tools"]]
    assert names == ["Search", "Lookup", "Calculate", "Finish"]
    (action,) = recorded["steps"][0]["actions"]
    assert action["call"] == {"name": "Calculate", "argument": "6 * 7", "id": None}
    assert action["details"] == {"expression": "6 * 7"}


def test_the_registry_is_a_value_a_session_is_given(wiki: FakeMediaWiki, prompt: Path) -> None:
    """Another session, given the built-in registry, has no calculator: nothing leaked."""
    with FakeOpenAI(scripted(*CALCULATED)) as llm:
        settings = settings_for(llm, wiki, prompt)
        with session_of(settings, CALCULATING) as opened:
            assert [s.name for s in opened.tool_specs()][-2:] == ["Calculate", "Finish"]
        with session_of(settings, BUILT_IN) as opened:
            assert [s.name for s in opened.tool_specs()] == ["Search", "Lookup", "Finish"]


def test_a_wrong_action_is_told_the_tools_there_are(
    wiki: FakeMediaWiki, calls: list[str], prompt: Path, tmp_path: Path
) -> None:
    texts = (
        " Hmm.\nAction 1: Multiply[6, 7]",
        " Right.\nAction 2: calculate[6*7]",
        *CALCULATED[1:],
    )
    with (
        FakeOpenAI(scripted(*texts)) as llm,
        session_of(settings_for(llm, wiki, prompt), CALCULATING) as opened,
    ):
        run = asked(opened, QUESTION, tmp_path / "t.json")
    assert run.answer == "42" and calls == ["6*7"]  # names match in any case
    told = llm.requests[1].json["messages"][0]["content"]
    assert told.endswith(
        "Observation 1: Invalid action. Valid actions are Search[entity], Lookup[keyword], "
        "Calculate[expression] and Finish[answer].\nThought 2:"
    )


def test_replay_reruns_the_third_tools_run_offline_without_the_tool(
    cli: Runner, wiki: FakeMediaWiki, calls: list[str], prompt: Path, tmp_path: Path
) -> None:
    trace = tmp_path / "calc.json"
    with (
        FakeOpenAI(scripted(*CALCULATED)) as llm,
        session_of(settings_for(llm, wiki, prompt), CALCULATING) as opened,
    ):
        asked(opened, QUESTION, trace)
    calls.clear()
    shown = cli(["replay", str(trace)])
    assert shown.code == 0 and "Action 1: Calculate[6 * 7]" in shown.stdout
    assert "Observation 1: 42" in shown.stdout
    rerun = cli(["replay", "--rerun", "--json", str(trace)])
    assert rerun.code == 0, rerun.stdout + rerun.stderr
    assert json.loads(rerun.stdout)["reproduced"] is True
    assert calls == []  # played from the recording, the tool never called


def test_eval_runs_every_question_with_its_own_third_tool(
    wiki: FakeMediaWiki, calls: list[str], prompt: Path, tmp_path: Path
) -> None:
    questions = {"What is six times seven?": "6 * 7", "What is two plus two?": "2 + 2"}
    dataset = tmp_path / "sums.jsonl"
    answers = {"6 * 7": "42", "2 + 2": "4"}
    lines = [json.dumps({"question": q, "answer": answers[e]}) for q, e in questions.items()]
    dataset.write_text("\n".join(lines) + "\n", encoding="utf-8")

    def reply(body: dict[str, Any]) -> Reply:
        prompt_text = body["messages"][0]["content"]
        question = prompt_text.rsplit("Question: ", 1)[1].split("\n", 1)[0]
        expression = questions[question]
        if "Observation 1:" in prompt_text:
            return Reply(text=f" Done.\nAction 2: Finish[{answers[expression]}]")
        return Reply(text=f" Compute.\nAction 1: Calculate[{expression}]")

    out = tmp_path / "run"
    with FakeOpenAI(reply) as llm:
        settings = settings_for(llm, wiki, prompt)
        plan = react_plan(settings, dataset, out, concurrency=2)
        shared, used = shared_limits(plan)
        session = open_session(settings, plan.prompts, shared=shared, registry=CALCULATING)
        with claimed(plan) as folder, session as opened:
            result = evaluate(plan, folder, opened, concurrency=used)
    assert result.summary.figures.em == 1.0
    assert sorted(calls) == ["2 + 2", "6 * 7"]
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    for row in rows:
        trace = json.loads((out / row["trace"]).read_text(encoding="utf-8"))
        assert trace["steps"][0]["actions"][0]["call"]["name"] == "Calculate"


COUNTING = ToolRegistry((Counting,))
COUNTED = (
    " I need the page.\nAction 1: Search[Chess]",
    " Count it.\nAction 2: Count[piece]",
    " Done.\nAction 3: Finish[many]",
)


def test_a_third_wikipedia_tool_is_one_method_on_the_page_search_loaded(
    wiki: FakeMediaWiki, prompt: Path, tmp_path: Path
) -> None:
    trace = tmp_path / "count.json"
    with (
        FakeOpenAI(scripted(*COUNTED)) as llm,
        session_of(settings_for(llm, wiki, prompt), COUNTING) as opened,
    ):
        run = asked(opened, "How often does the chess page say piece?", trace)
        carried = opened.session.tools().carried(run.steps)
    page = json.loads((Path(__file__).parents[1] / "fixtures/wiki/pages.json").read_text())
    expected = sum("piece" in s.lower() for s in page_sentences(page["Chess"]))
    assert expected > 1
    first = llm.requests[0].json["messages"][0]["content"]
    assert "(3) Count[keyword], which counts the sentences of the current page" in first
    assert run.steps[1].actions[0].observation == f"{expected} sentences of Chess hold piece."
    recorded = json.loads(trace.read_text(encoding="utf-8"))
    assert [tool["name"] for tool in recorded["config"]["tools"]] == [
        "Search",
        "Lookup",
        "Count",
        "Finish",
    ]
    assert carried == {PAGE: "Chess"}  # the box's page, carried into a follow-up


def test_the_third_wikipedia_tool_goes_with_no_wiki_and_reads_no_page_before_search(
    wiki: FakeMediaWiki, prompt: Path, tmp_path: Path
) -> None:
    with FakeOpenAI(scripted(" Hm.\nAction 1: Finish[x]")) as llm:
        settings = settings_for(llm, wiki, prompt)
        with session_of(replace(settings, wiki_tools=False), COUNTING) as opened:
            assert [spec.name for spec in opened.tool_specs()] == ["Finish"]
        with session_of(settings, COUNTING) as opened:
            count = opened.session.tools().get("count")
            assert count is not None
            early = count.call("board", deadline=Deadline())
    assert early.nothing_new and early.observation.startswith("No page is loaded yet")
