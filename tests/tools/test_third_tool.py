"""The seam for tools, proven: a third tool defined in this module alone, put in every run's
tool set through ``tools.registry``, runs end to end through ``ask``, the trace, ``replay
--rerun`` (offline, with the tool gone) and ``eval``, with no change under ``react_cli/``."""

from __future__ import annotations

import ast
import json
import operator
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, Reply, scripted
from inproc import Runner, servers_env

from react_cli.infra.deadline import Deadline
from react_cli.tools.base import ToolResult, ToolSpec
from react_cli.tools.registry import register, unregister

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


class Calculate:
    """Arithmetic on + - * / and numbers; anything else is an observation saying so."""

    spec = ToolSpec("Calculate", "expression", "evaluates an arithmetic expression.")

    def __init__(self, calls: list[str]) -> None:
        self.calls = calls

    def call(self, argument: str, *, deadline: Deadline) -> ToolResult:
        self.calls.append(argument)
        try:
            value = _value(ast.parse(argument, mode="eval").body)
        except (SyntaxError, ValueError, ZeroDivisionError) as exc:
            return ToolResult(f"Could not calculate {argument}: {exc}", error=str(exc))
        return ToolResult(f"{value:g}", {"expression": argument})


@pytest.fixture
def calls() -> Iterator[list[str]]:
    """Every run of this process gets the calculator while a test runs; its calls, in order."""
    made: list[str] = []

    def provider() -> list[Calculate]:
        return [Calculate(made)]

    register(provider)
    yield made
    unregister(provider)


@pytest.fixture
def prompt(tmp_path: Path) -> Path:
    path = tmp_path / "tools.txt"
    path.write_text(PROMPT, encoding="utf-8")
    return path


CALCULATED = (" I should multiply.\nAction 1: Calculate[6 * 7]", " It is 42.\nAction 2: Finish[42]")


def test_ask_runs_the_third_tool_and_the_trace_records_it(
    cli: Runner, wiki: FakeMediaWiki, calls: list[str], prompt: Path
) -> None:
    with FakeOpenAI(scripted(*CALCULATED)) as llm:
        result = cli.ask(llm, wiki, "--prompt", str(prompt), question=QUESTION)
    assert (result.code, result.stdout) == (0, "42\n"), result.stderr
    assert calls == ["6 * 7"]
    first, second = (request.json["messages"][0]["content"] for request in llm.requests)
    assert "(3) Calculate[expression], which evaluates an arithmetic expression." in first
    assert "(4) Finish[answer], which returns the answer and finishes the task." in first
    assert second.endswith("Action 1: Calculate[6 * 7]\nObservation 1: 42\nThought 2:")
    trace = cli.trace()
    assert [tool["name"] for tool in trace["config"]["tools"]] == [
        "Search",
        "Lookup",
        "Calculate",
        "Finish",
    ]
    assert trace["steps"][0]["call"] == {"name": "Calculate", "argument": "6 * 7", "id": None}
    assert trace["steps"][0]["details"] == {"expression": "6 * 7"}


def test_a_wrong_action_is_told_the_tools_there_are(
    cli: Runner, wiki: FakeMediaWiki, calls: list[str], prompt: Path
) -> None:
    texts = (
        " Hmm.\nAction 1: Multiply[6, 7]",
        " Right.\nAction 2: calculate[6*7]",
        *CALCULATED[1:],
    )
    with FakeOpenAI(scripted(*texts)) as llm:
        result = cli.ask(llm, wiki, "--prompt", str(prompt), question=QUESTION)
    assert result.stdout == "42\n" and calls == ["6*7"]  # names match in any case
    told = llm.requests[1].json["messages"][0]["content"]
    assert told.endswith(
        "Observation 1: Invalid action. Valid actions are Search[entity], Lookup[keyword], "
        "Calculate[expression] and Finish[answer].\nThought 2:"
    )


def test_replay_reruns_the_third_tools_run_offline_without_the_tool(
    cli: Runner, wiki: FakeMediaWiki, calls: list[str], prompt: Path, tmp_path: Path
) -> None:
    trace = tmp_path / "calc.json"
    with FakeOpenAI(scripted(*CALCULATED)) as llm:
        asked = cli.ask(
            llm, wiki, "--prompt", str(prompt), "--trace", str(trace), question=QUESTION
        )
    assert asked.code == 0
    calls.clear()
    shown = cli(["replay", str(trace)])
    assert shown.code == 0 and "Action 1: Calculate[6 * 7]" in shown.stdout
    assert "Observation 1: 42" in shown.stdout
    rerun = cli(["replay", "--rerun", "--json", str(trace)])
    assert rerun.code == 0, rerun.stdout + rerun.stderr
    assert json.loads(rerun.stdout)["reproduced"] is True
    assert calls == []  # played from the recording, the tool never called


def test_eval_runs_every_question_with_its_own_third_tool(
    cli: Runner, wiki: FakeMediaWiki, calls: list[str], prompt: Path, tmp_path: Path
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
        result = cli(
            ["eval", str(dataset), "--prompt", str(prompt), "--out", str(out)],
            **servers_env(llm, wiki),
        )
    assert result.code == 0, result.stderr
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["em"] == 1.0
    assert sorted(calls) == ["2 + 2", "6 * 7"]
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    for row in rows:
        trace = json.loads((out / row["trace"]).read_text(encoding="utf-8"))
        assert trace["steps"][0]["call"]["name"] == "Calculate"
