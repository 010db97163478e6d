"""The loop against a scripted model and in-memory tools: stop rules, prompt growth, records."""

from __future__ import annotations

import pytest
from scripted import DictTools, Loop, ScriptedModel

from react_cli.core.errors import LLMConnectionError
from react_cli.core.trajectory import PARSE_FAILURE, Cue, ErrorKind
from react_cli.infra.deadline import Deadline
from react_cli.llm.base import Completion, ModelRequest, TextSink
from react_cli.loop.events import Event, ModelText, ReplyStarted, StepFinished
from react_cli.loop.limits import Limits
from react_cli.loop.text.parser import kept_in_prompt
from react_cli.loop.text.protocol import STOP_SEQUENCES
from react_cli.tools.base import ToolResult

PREFIX = "Question: Who wrote Ed Wood?\n"
TOOLS = {"Ed Wood": "Ed Wood is a 1994 film directed by Tim Burton."}


def run(outputs: list[str], limits: Limits | None = None, **kw: object):
    model = ScriptedModel(list(outputs))
    agent = Loop(model, DictTools(dict(TOOLS)), limits=limits, **kw)
    return agent, model, agent.run(PREFIX, "Who wrote Ed Wood?")


def prompts(model: ScriptedModel) -> list[str]:
    """Every prompt the loop sent, in order."""
    return [prompt for prompt, _ in model.calls]


def test_search_then_finish_records_every_step() -> None:
    _, model, result = run(
        [
            " I need to search Ed Wood.\nAction 1: Search[Ed Wood]",
            " It was directed by Tim Burton.\nAction 2: Finish[Tim Burton]",
        ]
    )
    assert result.answer == "Tim Burton"
    assert result.stop_reason == "finish"
    assert [a.written for s in result.steps for a in s.actions] == [
        "Search[Ed Wood]",
        "Finish[Tim Burton]",
    ]
    (searched,) = result.steps[0].actions
    assert searched.observation == TOOLS["Ed Wood"]
    assert searched.details == {"resolved_title": "Ed Wood"}
    assert result.steps[0].thought == "I need to search Ed Wood."
    assert result.usage.total_tokens == 40
    assert model.calls[0] == (PREFIX + "Thought 1:", list(STOP_SEQUENCES))


def test_prompt_only_grows_by_appending_the_kept_model_text() -> None:
    outputs = [
        " I need to search Ed Wood.\nAction 1: Search[Ed Wood]\nThought 2: extra invented step",
        " Let me look up director.\nAction 2: Lookup[director]",
        " Done.\nAction 3: Finish[Tim Burton]",
    ]
    _, model, _ = run(outputs)
    sent = prompts(model)
    assert len(sent) == 3
    for k in range(2):
        kept = kept_in_prompt(outputs[k])
        assert sent[k + 1].startswith(sent[k] + kept + f"\nObservation {k + 1}: ")
        assert sent[k + 1].endswith(f"\nThought {k + 2}:")
    assert "extra invented step" not in sent[1]


def test_invented_observation_never_reaches_the_prompt() -> None:
    _, model, result = run(
        [
            " Search it.\nAction 1: Search[Ed Wood]\nObservation 1: Ed Wood was a plumber.",
            " Found.\nAction 2: Finish[Tim Burton]",
        ]
    )
    assert "plumber" not in prompts(model)[1]
    assert "plumber" not in result.steps[0].replies[0].text


def test_missing_action_asks_for_it_like_the_paper() -> None:
    _, model, result = run(
        [
            " I should search for Ed Wood first.\nThen think more.",
            " Search[Ed Wood]",
            " ok\nAction 2: Finish[x]",
        ]
    )
    step = result.steps[0]
    assert [action.written for action in step.actions] == ["Search[Ed Wood]"]
    assert [(reply.cue, reply.text) for reply in step.replies] == [
        (Cue.THOUGHT, " I should search for Ed Wood first.\nThen think more."),
        (Cue.ACTION, " Search[Ed Wood]"),
    ]
    assert step.replies[0].ignored == "\nThen think more."
    assert model.calls[1][0].endswith("Thought 1: I should search for Ed Wood first.\nAction 1:")
    assert model.calls[1][1] == ["\n"]
    assert prompts(model)[2].startswith(prompts(model)[1] + " Search[Ed Wood]\nObservation 1: ")
    assert result.answer == "x"


def test_consecutive_parse_failures_stop_the_run() -> None:
    _, _, result = run(["no action here", "still nothing"] * 3, Limits(max_parse_errors=3))
    assert result.stop_reason == "parse_errors"
    assert len(result.steps) == 3
    assert all(s.error == PARSE_FAILURE for s in result.steps)
    assert "Search[entity]" in result.steps[0].actions[0].observation


def test_a_parse_failure_is_recorded_and_the_loop_continues() -> None:
    _, _, result = run(["hmm", "nothing", " ok\nAction 2: Finish[done]"])
    assert result.steps[0].error == PARSE_FAILURE and result.steps[0].error_text == "parse_error"
    assert result.answer == "done"


def test_repeated_action_stops() -> None:
    _, _, result = run([" again\nAction: Search[Ed Wood]"] * 5, Limits(max_repeats=3))
    assert result.stop_reason == "repeated_action"
    assert len(result.steps) == 3


def test_step_limit() -> None:
    outputs = [f" t\nAction: Search[Page {i}]" for i in range(4)]
    _, _, result = run(outputs, Limits(max_steps=4))
    assert result.stop_reason == "max_steps"
    assert result.answer is None
    assert len(result.steps) == 4


def test_token_budget_stops_before_the_next_call() -> None:
    outputs = [f" t\nAction: Search[Page {i}]" for i in range(4)]
    _, model, result = run(outputs, Limits(max_total_tokens=35))
    assert result.stop_reason == "token_budget"
    assert len(model.calls) == 2  # 20 tokens per call: the budget is hit after the second


class FailingModel:
    def __init__(self, fail_on_call: int) -> None:
        self.calls = 0
        self.fail_on_call = fail_on_call

    def complete(
        self, request: ModelRequest, *, deadline: Deadline, on_text: TextSink | None = None
    ) -> Completion:
        self.calls += 1
        if self.calls == self.fail_on_call:
            raise LLMConnectionError("cannot reach http://x: connection refused")
        if self.calls == self.fail_on_call + 100:
            raise KeyboardInterrupt
        return Completion(" t\nAction: Search[Ed Wood]")


def test_endpoint_failure_ends_the_run_with_llm_error() -> None:
    result = Loop(FailingModel(2), DictTools(TOOLS)).run(PREFIX, "q")
    assert result.stop_reason == "llm_error"
    assert "connection refused" in (result.error or "")
    assert len(result.steps) == 2 and result.steps[1].failed(ErrorKind.MODEL)
    assert result.steps[1].error_text == result.error


class InterruptingTools(DictTools):
    def search(self, entity: str, *, deadline: Deadline) -> ToolResult:
        raise KeyboardInterrupt


def test_ctrl_c_ends_the_run_as_interrupted_with_steps_kept() -> None:
    result = Loop(ScriptedModel([" t\nAction: Search[Ed Wood]"]), InterruptingTools({})).run(
        PREFIX, "q"
    )
    assert result.stop_reason == "interrupted"
    assert len(result.steps) == 1


class Recorder:
    def __init__(self) -> None:
        self.events: list[str] = []

    def notify(self, event: Event) -> None:
        if isinstance(event, ReplyStarted):
            self.events.append(f"start {event.index}")
        elif isinstance(event, ModelText):
            self.events.append("text")
        elif isinstance(event, StepFinished):
            self.events.append(f"end {event.step.index}")


def test_observer_sees_each_step() -> None:
    recorder = Recorder()
    run([" a\nAction: Search[Ed Wood]", " b\nAction: Finish[y]"], observer=recorder)
    assert recorder.events == ["start 1", "text", "end 1", "start 2", "text", "end 2"]


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        (" a\nAction 1: Search[X]\nThought 2: more", " a\nAction 1: Search[X]"),
        ("<think>hmm</think> a\nAction 1: Search[X]", " a\nAction 1: Search[X]"),
        (" no action\n\n", " no action"),
        # the line-start action wins, so the kept text runs to its line, not the inline one's
        (
            " So. Action: Finish[a sentence].\nAction: Finish[b]\nThought 2: x",
            " So. Action: Finish[a sentence].\nAction: Finish[b]",
        ),
    ],
)
def test_kept_in_prompt(text: str, kept: str) -> None:
    assert kept_in_prompt(text) == kept


def test_token_budget_counts_an_estimate_when_the_server_reports_no_usage() -> None:
    outputs = [f" t\nAction: Search[Page {i}]" for i in range(6)]
    model = ScriptedModel(list(outputs), tokens_per_call=0)
    agent = Loop(model, DictTools(dict(TOOLS)), limits=Limits(max_total_tokens=30))
    result = agent.run(PREFIX, "q")
    assert result.stop_reason == "token_budget"
    assert result.usage.estimated and all(step.usage.estimated for step in result.steps)
    assert 30 <= result.usage.total_tokens < 60
    assert len(model.calls) == 2  # ~14 and ~24 estimated tokens: stopped after the second


class DeadlineSeer(ScriptedModel):
    """Records the deadline of each call."""

    def __init__(self, outputs: list[str]) -> None:
        super().__init__(outputs)
        self.deadlines: list[Deadline] = []

    def complete(
        self, request: ModelRequest, *, deadline: Deadline, on_text: TextSink | None = None
    ) -> Completion:
        self.deadlines.append(deadline)
        return super().complete(request, deadline=deadline, on_text=on_text)


class FailingTools(DictTools):
    """Every Search fails after two retries; records the deadline it was given."""

    def search(self, entity: str, *, deadline: Deadline) -> ToolResult:
        self.deadline = deadline
        return ToolResult("Wikipedia is unavailable right now (x).", error="x", retries=2)


@pytest.mark.parametrize("timeout_s", [None, 5.0])
def test_every_call_gets_the_runs_deadline(timeout_s: float | None) -> None:
    model, tools = (
        DeadlineSeer([" t\nAction 1: Search[A]", " u\nAction 2: Finish[x]"]),
        FailingTools({}),
    )
    Loop(model, tools, Limits(timeout_s=timeout_s)).run(PREFIX, "q")
    first, second = model.deadlines
    assert first is second is tools.deadline
    left = first.left()
    assert (left is None) if timeout_s is None else (left is not None and 4 < left <= timeout_s)


def test_a_failed_tool_call_is_a_typed_error_with_its_retries() -> None:
    model = ScriptedModel([" t\nAction 1: Search[A]", " u\nAction 2: Finish[x]"])
    step = Loop(model, FailingTools({})).run(PREFIX, "q").steps[0]
    (action,) = step.actions
    assert action.error == "x" and step.error is None and step.error_text is None
    assert action.retries == step.tool_retries == 2
    assert step.to_json()["actions"][0]["error"] == "x" and step.to_json()["error"] is None


def test_a_runs_state_belongs_to_the_run() -> None:
    """The token budget of one run does not carry over to the next run of the same agent."""
    outputs = [f" t\nAction: Search[Page {i}]" for i in range(4)]
    model = ScriptedModel(outputs * 2)
    agent = Loop(model, DictTools(dict(TOOLS)), limits=Limits(max_total_tokens=35))
    first, second = agent.run(PREFIX, "q"), agent.run(PREFIX, "q")
    assert first.stop_reason == second.stop_reason == "token_budget"
    assert len(first.steps) == len(second.steps) == 2 and len(model.calls) == 4
    assert first.steps is not second.steps
