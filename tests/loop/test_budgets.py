"""Budgets and loop guards at the loop, with scripted models: the time limit, the forced answer,
the token budget, repeated actions and the consecutive-error caps; and the run's deadline.
``cli/test_budgets_cli.py`` has the same budgets through ``react-cli ask``."""

from __future__ import annotations

import time
from typing import Any

import pytest
from scripted import DictTools, Loop, ScriptedModel

from react_cli.core.errors import LLMConnectionError
from react_cli.core.trajectory import Cue, Run
from react_cli.infra.deadline import Deadline
from react_cli.llm.base import Completion, ModelRequest, TextSink
from react_cli.loop.limits import Limits
from react_cli.tools.base import ToolResult

PREFIX = "Question: Who directed Ed Wood?\n"
TOOLS = {"Ed Wood": "Ed Wood is a 1994 film directed by Tim Burton."}
SEARCH = " I need to search Ed Wood.\nAction {k}: Search[Ed Wood]"


def run(
    outputs: list[str], limits: Limits, tools: DictTools | None = None, **kw: Any
) -> tuple[Loop, ScriptedModel, Run]:
    model = ScriptedModel(list(outputs))
    agent = Loop(model, tools or DictTools(dict(TOOLS)), limits=limits, **kw)
    return agent, model, agent.run(PREFIX, "Who directed Ed Wood?")


def searches(n: int) -> list[str]:
    return [f" Try {k}.\nAction {k}: Search[Page {k}]" for k in range(1, n + 1)]


# --- time limit -----------------------------------------------------------------------------


class Clock:
    """A fake clock; ``SlowModel`` moves it on 10 s per call."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class SlowModel(ScriptedModel):
    clock: Clock | None = None

    def complete(
        self, request: ModelRequest, *, deadline: Deadline, on_text: TextSink | None = None
    ) -> Completion:
        assert self.clock is not None
        self.clock.now += 10
        return super().complete(request, deadline=deadline, on_text=on_text)


def test_time_limit_stops_before_the_next_step() -> None:
    clock = Clock()
    model = SlowModel(searches(5))
    model.clock = clock
    result = Loop(model, DictTools({}), Limits(timeout_s=25), clock=clock).run(PREFIX, "q")
    assert result.stop_reason == "timeout"
    assert len(result.steps) == 3 and len(model.calls) == 3  # started at 0, 10 and 20 s
    assert result.error == "the time limit (25 s) was reached"


class DeadlineModel:
    """Waits until the run's deadline, then fails the way a timed-out request does."""

    def __init__(self) -> None:
        self.seen_left: list[float | None] = []

    def complete(
        self, request: ModelRequest, *, deadline: Deadline, on_text: TextSink | None = None
    ) -> Completion:
        left = deadline.left()
        self.seen_left.append(left)
        time.sleep(max(0.0, left or 0.0))
        raise LLMConnectionError("cannot reach http://x: timed out waiting for the answer")


def test_a_request_cut_by_the_deadline_is_a_timeout_not_an_endpoint_failure() -> None:
    model = DeadlineModel()
    result = Loop(model, DictTools({}), Limits(timeout_s=0.2)).run(PREFIX, "q")
    assert result.stop_reason == "timeout"
    assert result.error == "the time limit (0.2 s) was reached"
    assert result.steps[0].error_text == "cannot reach http://x: timed out waiting for the answer"
    assert model.seen_left[0] is not None and 0 < model.seen_left[0] <= 0.2


def test_without_a_time_limit_requests_see_no_deadline() -> None:
    model = DeadlineModel()
    result = Loop(model, DictTools({}), Limits()).run(PREFIX, "q")
    assert result.stop_reason == "llm_error"
    assert model.seen_left == [None]


# --- forced answer --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "forced_output",
    [" Tim Burton]", " Tim Burton", "Tim Burton] and more", "Action 3: Finish[Tim Burton]"],
)
def test_force_answer_asks_once_for_finish_at_the_step_limit(forced_output: str) -> None:
    _, model, result = run([*searches(2), forced_output], Limits(max_steps=2, force_answer=True))
    assert result.answer == "Tim Burton"
    assert result.stop_reason == "finish" and result.forced
    forced = result.steps[-1]
    (action,) = forced.actions
    assert (forced.index, action.written, forced.forced, action.details) == (
        3,
        "Finish[Tim Burton]",
        True,
        {},
    )
    assert [reply.cue for reply in forced.replies] == [Cue.ACTION]
    prompt, stop = model.calls[-1]
    assert prompt.endswith("\nAction 3: Finish[") and stop == ["\n"]
    assert prompt.startswith(model.calls[1][0])  # still append-only


def test_forced_call_without_an_answer_keeps_max_steps() -> None:
    _, _, result = run([*searches(2), "]"], Limits(max_steps=2, force_answer=True))
    assert result.answer is None and result.stop_reason == "max_steps"
    assert result.steps[-1].error_text == "parse_error" and result.forced


def test_no_forced_call_without_the_option_or_when_the_model_finished() -> None:
    _, model, result = run(searches(2), Limits(max_steps=2))
    assert result.stop_reason == "max_steps" and not result.forced and len(model.calls) == 2
    _, model, result = run([" Done.\nAction 1: Finish[x]"], Limits(max_steps=2, force_answer=True))
    assert result.stop_reason == "finish" and not result.forced and len(model.calls) == 1


def test_no_forced_call_once_the_token_budget_is_spent() -> None:
    limits = Limits(max_steps=2, force_answer=True, max_total_tokens=40)
    _, model, result = run([*searches(2), "x]"], limits)
    assert result.stop_reason == "max_steps" and len(model.calls) == 2


# --- repeated actions and consecutive errors --------------------------------------------------


def test_alternating_actions_are_not_repeats() -> None:
    outputs = [f" t\nAction {k}: Search[{'A' if k % 2 else 'B'}]" for k in range(1, 5)]
    _, _, result = run(outputs, Limits(max_steps=4, max_repeats=2))
    assert result.stop_reason == "max_steps"


def test_a_valid_step_resets_the_parse_error_count() -> None:
    junk = " I am not sure."
    outputs = [junk, junk, SEARCH.format(k=2), junk, junk, junk, junk]  # junk: 2 calls a step
    _, _, result = run(outputs, Limits(max_parse_errors=2))
    assert [s.error_text for s in result.steps] == [
        "parse_error",
        None,
        "parse_error",
        "parse_error",
    ]
    assert result.stop_reason == "parse_errors"


class BrokenTools(DictTools):
    """Every Search fails the way Wikipedia reports a backend failure."""

    def search(self, entity: str, *, deadline: Deadline) -> ToolResult:
        self.searches.append(entity)
        return ToolResult("Wikipedia is unavailable right now (HTTP 503).", error="HTTP 503")


def test_consecutive_tool_errors_stop_the_run() -> None:
    tools = BrokenTools({})
    _, _, result = run(searches(5), Limits(max_tool_errors=3), tools)
    assert result.stop_reason == "tool_errors"
    assert len(tools.searches) == 3
    assert result.error == "HTTP 503 (3 failed tool calls in a row)"


def test_a_lookup_between_failures_resets_the_tool_error_count() -> None:
    outputs = [
        " a\nAction 1: Search[A]",
        " b\nAction 2: Lookup[x]",
        " c\nAction 3: Search[B]",
        " d\nAction 4: Finish[y]",
    ]
    _, _, result = run(outputs, Limits(max_tool_errors=2), BrokenTools({}))
    assert result.stop_reason == "finish"
