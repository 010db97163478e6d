"""The methods' rules, in-process: answers read from a completion, the majority vote (its
normalisation and tie-break), a loop's run shared by step limits, and the two back-off rules at
their exact thresholds."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from eval_fakes import finish, search
from scripted import DictTools, ScriptedModel

from react_cli.core.errors import LLMConnectionError
from react_cli.core.method import Method, Task, parse_methods
from react_cli.core.records import StopReason, Usage
from react_cli.infra.deadline import Deadline
from react_cli.llm.base import Completion, ModelRequest, Sampled, TextSink
from react_cli.loop.limits import Limits
from react_cli.loop.prompts import prompt_set
from react_cli.methods.answers import read_answer
from react_cli.methods.memo import Memo, Sampling, derive
from react_cli.methods.outcome import answer
from react_cli.methods.results import path
from react_cli.methods.vote import Group, vote
from react_cli.session import text_protocols

QUESTION = "Were Scott Derrickson and Ed Wood of the same nationality?"


@dataclass
class ListSampler:
    """Completions from a list: ``n`` of them per call, in order; one request per call."""

    texts: list[str]
    asked: list[tuple[int, float]] = field(default_factory=list)

    def sample(
        self, request: ModelRequest, *, n: int, temperature: float, deadline: Deadline
    ) -> Sampled:
        self.asked.append((n, temperature))
        return Sampled([Completion(text, Usage(100, 10)) for text in self.texts[:n]], 1)


def answered(*groups: tuple[str | None, int]) -> list[str]:
    return [
        f" Thinking.\nAnswer: {a}" if a is not None else " Thinking."
        for a, n in groups
        for _ in range(n)
    ]


def memo(react: list[str], texts: list[str], *, hybrid_steps: int = 7, samples: int = 21) -> Memo:
    return Memo(
        QUESTION,
        prompts=prompt_set("hotpotqa", list(Method)).templates,
        model=ScriptedModel(list(react)),
        protocols=text_protocols(),
        tools=lambda: DictTools({}).tool_set(),
        limits=Limits(max_steps=8),
        hybrid_steps=hybrid_steps,
        sampler=ListSampler(texts),
        sampling=Sampling(samples=samples),
    )


# --- answers --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "text", "expected"),
    [
        (Method.STANDARD, " Paris\nQuestion: next", "Paris"),
        (Method.STANDARD, "\n\n  Answer: **Paris**  ", "Paris"),
        (Method.STANDARD, "   ", None),
        (Method.COT, " It is in France.\nAnswer: Paris.", "Paris."),
        (Method.COT, " so the answer is Paris.", None),  # no Answer line: no answer
        (Method.COT, " <think>Answer: Lyon</think> X.\n**Answer:** Paris", "Paris"),
        (Method.COT, " X.\nAnswer:REFUTES", "REFUTES"),  # the FEVER examples' own spacing
        (Method.COT, " X.\nAnswer:   \nAnswer: late", None),  # the first Answer line decides
    ],
)
def test_the_answer_is_read_from_its_line(kind: Method, text: str, expected: str | None) -> None:
    assert read_answer(kind, text) == expected


# --- the vote ---------------------------------------------------------------------------------


def test_answers_that_normalise_alike_are_one_vote_shown_as_first_written() -> None:
    counted = vote(["The Animorphs.", "animorphs", "Remnants", "ANIMORPHS!", None], Task.HOTPOTQA)
    assert counted.groups == (Group("The Animorphs.", 3), Group("Remnants", 1))
    assert (counted.voters, counted.samples) == (4, 5)


def test_ties_go_to_the_answer_that_appeared_first() -> None:
    assert vote(["no", "yes", "yes", "no"], Task.HOTPOTQA).winner == Group("no", 2)
    assert vote(["yes", "no", "no", "yes"], Task.HOTPOTQA).winner == Group("yes", 2)


def test_samples_without_an_answer_do_not_vote() -> None:
    counted = vote([None, None, "the", "Paris"], Task.HOTPOTQA)  # "the" normalises to nothing
    assert counted.groups == (Group("Paris", 1),) and counted.winner == Group("Paris", 1)
    assert vote([None, None], Task.HOTPOTQA).winner is None


def test_fever_votes_by_label() -> None:
    counted = vote(["Supported.", "SUPPORTS", "refuted", "NEI", "maybe"], Task.FEVER)
    assert counted.groups == (Group("Supported.", 2), Group("refuted", 1), Group("NEI", 1))


@pytest.mark.parametrize(("votes", "weak"), [(10, True), (11, False), (0, True), (21, False)])
def test_a_majority_is_weak_under_half_of_the_samples(votes: int, weak: bool) -> None:
    answers = ["X"] * votes + [f"other {k}" for k in range(21 - votes)]
    assert vote(answers, Task.HOTPOTQA).weak is weak


def test_half_of_an_even_number_is_not_weak() -> None:
    assert not vote(["X"] * 10 + ["Y"] * 10, Task.HOTPOTQA).weak  # 10 is not fewer than 20/2


# --- the two back-off rules -------------------------------------------------------------------


@pytest.mark.parametrize(("votes", "backs_off"), [(10, True), (11, False)])
def test_cot_sc_react_backs_off_under_half_of_the_votes(votes: int, backs_off: bool) -> None:
    texts = answered(("yes", votes), ("no", 21 - 2 * votes), (None, votes))
    shared = memo([finish("no")], texts)
    outcome = answer(Method.COT_SC_REACT, shared, Task.HOTPOTQA)
    assert outcome.backed_off is backs_off
    assert (outcome.answer, outcome.branch) == (
        ("no", Method.REACT) if backs_off else ("yes", Method.COT_SC)
    )
    said = path(outcome)
    assert said is not None and said.startswith(f'CoT-SC: {votes}/21 votes for "yes"')
    assert said.endswith("→ ReAct answered in 1 step") is backs_off


@pytest.mark.parametrize(("answered_at", "backs_off"), [(7, False), (8, True)])
def test_react_cot_sc_backs_off_without_an_answer_within_its_steps(
    answered_at: int, backs_off: bool
) -> None:
    steps = [search(f"Page {k}", k) for k in range(1, answered_at)]
    shared = memo([*steps, finish("no", answered_at)], answered(("yes", 21)))
    shared.plan([Method.REACT, Method.REACT_COT_SC])
    react = answer(Method.REACT, shared, Task.HOTPOTQA)
    hybrid = answer(Method.REACT_COT_SC, shared, Task.HOTPOTQA)
    assert react.answer == "no" and len(react.run.steps if react.run else []) == answered_at
    assert hybrid.backed_off is backs_off
    assert hybrid.answer == ("yes" if backs_off else "no")
    if backs_off:  # the run of 8 steps seen as the 7-step run the hybrid makes
        assert hybrid.run is not None and len(hybrid.run.steps) == 7
        assert path(hybrid) == 'ReAct gave no answer in 7 steps → CoT-SC: 21/21 votes for "yes"'
    assert shared.calls_made == answered_at + (1 if backs_off else 0)  # one run, shared


class Down:
    """A model endpoint that fails every call."""

    def complete(
        self, request: ModelRequest, *, deadline: Deadline, on_text: TextSink | None = None
    ) -> Completion:
        raise LLMConnectionError("cannot reach the endpoint: connection refused")


def test_a_stop_rule_backs_off_to_cot_sc_but_a_failed_endpoint_does_not() -> None:
    repeated = memo([search("A"), search("A"), search("A")], answered(("yes", 21)))
    outcome = answer(Method.REACT_COT_SC, repeated, Task.HOTPOTQA)
    assert outcome.run is not None and outcome.run.stop_reason == StopReason.REPEATED_ACTION
    assert outcome.backed_off and (outcome.answer, outcome.branch) == ("yes", Method.COT_SC)
    failing = memo([], answered(("yes", 21)))
    failing.model = Down()
    outcome = answer(Method.REACT_COT_SC, failing, Task.HOTPOTQA)
    assert (outcome.stop_reason, outcome.answer, outcome.backed_off) == (
        StopReason.LLM_ERROR,
        None,
        False,
    )
    assert isinstance(outcome.failure, LLMConnectionError)


def test_each_block_runs_once_whatever_asks_for_it() -> None:
    sampler = ListSampler(answered(("yes", 21)))
    shared = memo([" Finish[no]", finish("no")], [])  # Act's step, then ReAct's
    shared.sampler = sampler
    shared.plan(list(Method))
    outcomes = [answer(method, shared, Task.HOTPOTQA) for method in Method]
    assert [(n, t) for n, t in sampler.asked] == [(1, 0.0), (1, 0.0), (21, 0.7)]  # std, cot, sc
    assert shared.calls_made == 3 + 1 + 1  # the three above, Act's one step, ReAct's one
    calls = {o.method: o.calls for o in outcomes}
    assert calls[Method.COT_SC_REACT] == 1 and calls[Method.REACT_COT_SC] == 1


# --- a run made once answers shorter limits -------------------------------------------------


def test_a_run_past_a_limit_is_cut_there_and_a_forced_answer_needs_its_own_run() -> None:
    steps = [search(f"Page {k}", k) for k in range(1, 9)]
    run = memo(steps, []).loop(Method.REACT, (8, False))
    assert run.stop_reason == StopReason.MAX_STEPS and len(run.steps) == 8
    cut = derive(run, (8, False), (7, False))
    assert cut is not None and len(cut.steps) == 7 and cut.answer is None
    assert cut.usage.total_tokens == sum(step.usage.total_tokens for step in run.steps[:7])
    assert derive(run, (8, False), (7, True)) is None  # a forced answer at step 7: not made
    assert derive(run, (8, False), (9, False)) is None  # step 9: not made
    assert derive(run, (8, False), (8, False)) is run


def test_parse_methods() -> None:
    assert parse_methods("all") == tuple(Method)
    assert parse_methods(" cot , react+cot-sc") == (Method.COT, Method.REACT_COT_SC)
    for bad, said in [("cot,cot", "twice"), ("tot", "must be one of"), (",", "needs method")]:
        with pytest.raises(Exception, match=said):
            parse_methods(bad)


class Interrupted:
    """A sampler whose request Ctrl-C interrupts."""

    def sample(
        self, request: ModelRequest, *, n: int, temperature: float, deadline: Deadline
    ) -> Sampled:
        raise KeyboardInterrupt


def test_ctrl_c_while_sampling_ends_the_method_without_a_back_off() -> None:
    shared = memo([finish("no")], [])
    shared.sampler = Interrupted()
    outcome = answer(Method.COT_SC_REACT, shared, Task.HOTPOTQA)
    assert (outcome.stop_reason, outcome.answer, outcome.backed_off) == (
        StopReason.INTERRUPTED,
        None,
        False,
    )
    assert outcome.error == "interrupted by the user" and shared.calls_made == 0
