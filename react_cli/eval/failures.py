"""Why an answer failed: every row's failure mode, from its result and its run's trace.

After the ReAct paper's Table 2, each result is given one :class:`FailureMode` and the rule
that gave it, in words, by :func:`diagnose`. The rules are tried in a fixed order, the first
that holds wins, so every result gets exactly one mode:

1. right answers: **right**, or **right without evidence** when no gold page was retrieved
   (gold evidence known and its page recall 0; without gold evidence, no observation held the
   answer);
2. **endpoint failure**: the question failed hard (the endpoint, a crash);
3. **ambiguous label**: EM 0 but F1 ≥ :data:`AMBIGUOUS_F1`, or the gold answer inside the
   prediction (normalised as for exact match);
4. **repetitive loop**: the run stopped on a repeated action or on observations that brought
   nothing new, or made one call :data:`LOOP_REPEATS` times or more;
5. **limit**: steps, tokens, cost or time ran out;
6. **format error**: parse errors stopped it, or no completion gave an answer;
7. **search failure**: no gold page was retrieved (or the tools kept failing);
8. **unsupported answer**: no observation contains the answer;
9. **reasoning error**: a gold page was retrieved (or the answer was shown), the answer wrong.

FEVER's labels are not spans of text: the evidence rules (1's without gold evidence, 8) and
the ambiguity rule do not apply to them. A new eval records each result's diagnosis in its
row; an older row gets it here from its row and its trace (:func:`run_facts`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from react_cli.core import fields
from react_cli.core.records import StopReason
from react_cli.core.trajectory import Step, actions_of
from react_cli.methods.evidence import Evidence
from react_cli.methods.scoring import normalize_answer
from react_cli.methods.sources import run_sources

AMBIGUOUS_F1 = 0.8
"""An answer scoring EM 0 but at least this F1 reads as the gold answer worded otherwise."""
LOOP_REPEATS = 3
"""One call made this many times in a run is a loop, whatever stopped it."""
_RULE_CHARS = 200


class FailureMode(StrEnum):
    """Why a result is what it is; the values are what rows and ``--json`` carry, in the order
    tables list them."""

    RIGHT = "right"
    RIGHT_WITHOUT_EVIDENCE = "right_without_evidence"
    SEARCH_FAILURE = "search_failure"
    REASONING_ERROR = "reasoning_error"
    UNSUPPORTED_ANSWER = "unsupported_answer"
    REPETITIVE_LOOP = "repetitive_loop"
    FORMAT_ERROR = "format_error"
    LIMIT = "limit"
    AMBIGUOUS_LABEL = "ambiguous_label"
    ENDPOINT_FAILURE = "endpoint_failure"

    @property
    def label(self) -> str:
        """The mode as people read it: ``right without evidence``."""
        return self.value.replace("_", " ")

    @property
    def right(self) -> bool:
        return self in (FailureMode.RIGHT, FailureMode.RIGHT_WITHOUT_EVIDENCE)


@dataclass(frozen=True)
class Diagnosis:
    """A result's failure mode and the rule that gave it (``eval show --wrong`` prints it)."""

    mode: FailureMode
    rule: str

    def to_json(self) -> dict[str, Any]:
        return {"mode": self.mode.value, "rule": self.rule}

    @classmethod
    def from_json(cls, value: object) -> Diagnosis | None:
        """A recorded diagnosis; None when absent or not one react-cli writes (it is derived
        again then)."""
        if not isinstance(value, dict):
            return None
        try:
            mode = FailureMode(str(value.get("mode")))
            rule = fields.text(value.get("rule"), "rule")
        except (ValueError, fields.FieldError):
            return None
        return cls(mode, (rule or "")[:_RULE_CHARS])


@dataclass(frozen=True)
class RunFacts:
    """What a run's trace tells the rules: whether an observation held the answer (None: the
    run was shown nothing, or its trace is lost) and the most times it made one call."""

    supported: bool | None = None
    repeats: int = 0


@dataclass(frozen=True)
class Scored:
    """What the rules read of a result (a row's, or one being scored)."""

    answer: str | None
    golds: Sequence[str]
    em: float
    f1: float
    stop_reason: StopReason
    evidence: Evidence | None
    fever: bool


def run_facts(steps: Iterable[Step], answer: str | None) -> RunFacts:
    """The facts of a run from its steps (a live run's, or a trace's)."""
    steps = list(steps)
    sources = run_sources(steps, answer)
    calls = Counter(action.call.key for action in actions_of(steps) if action.call is not None)
    supported = any(source.supports for source in sources) if sources else None
    return RunFacts(supported, max(calls.values(), default=0))


_LIMITS = {
    StopReason.MAX_STEPS: "the run used all its steps",
    StopReason.TOKEN_BUDGET: "the run spent its token budget",
    StopReason.COST_BUDGET: "the run spent its cost budget",
    StopReason.TIMEOUT: "the run ran out of time",
    StopReason.INTERRUPTED: "the run was interrupted",
}
_LOOPS = {
    StopReason.REPEATED_ACTION: "the run stopped repeating one action",
    StopReason.NO_PROGRESS: "the run stopped: its observations brought nothing new",
}
_FORMATS = {
    StopReason.PARSE_ERRORS: "the run stopped on replies without a valid action",
    StopReason.NO_ANSWER: "no completion gave an answer",
}
_ENDPOINT = frozenset({StopReason.LLM_ERROR, StopReason.ERROR, StopReason.FORKED})


def diagnose(result: Scored, facts: RunFacts) -> Diagnosis:
    """The result's failure mode and its rule (see the module docstring for the order)."""
    if result.em >= 1.0:
        return _right(result, facts)
    reason = result.stop_reason
    if reason in _ENDPOINT:
        return Diagnosis(FailureMode.ENDPOINT_FAILURE, f"the question failed ({reason.value})")
    ambiguous = None if result.fever or result.answer is None else _ambiguous(result)
    if ambiguous is not None:
        return Diagnosis(FailureMode.AMBIGUOUS_LABEL, ambiguous)
    if reason in _LOOPS:
        return Diagnosis(FailureMode.REPETITIVE_LOOP, _LOOPS[reason])
    if facts.repeats >= LOOP_REPEATS:
        return Diagnosis(FailureMode.REPETITIVE_LOOP, f"one call made {facts.repeats} times")
    if reason in _LIMITS:
        return Diagnosis(FailureMode.LIMIT, _LIMITS[reason])
    if reason in _FORMATS:
        return Diagnosis(FailureMode.FORMAT_ERROR, _FORMATS[reason])
    if result.answer is None:
        return Diagnosis(FailureMode.FORMAT_ERROR, "the run gave no answer")
    if reason is StopReason.TOOL_ERRORS:
        return Diagnosis(FailureMode.SEARCH_FAILURE, "the run's tool calls kept failing")
    if result.evidence is not None and result.evidence.page_recall == 0:
        return Diagnosis(FailureMode.SEARCH_FAILURE, "no gold page retrieved")
    if not result.fever and not facts.supported:
        return Diagnosis(FailureMode.UNSUPPORTED_ANSWER, "no observation contains the answer")
    if result.evidence is not None:
        return Diagnosis(FailureMode.REASONING_ERROR, "a gold page retrieved, the answer wrong")
    return Diagnosis(FailureMode.REASONING_ERROR, "the answer shown, and wrong")


def _right(result: Scored, facts: RunFacts) -> Diagnosis:
    evidence = result.evidence
    if evidence is not None:
        if evidence.page_recall == 0:
            return Diagnosis(FailureMode.RIGHT_WITHOUT_EVIDENCE, "right, no gold page retrieved")
        return Diagnosis(FailureMode.RIGHT, "right, a gold page retrieved")
    if not result.fever and not facts.supported:
        return Diagnosis(
            FailureMode.RIGHT_WITHOUT_EVIDENCE, "right, no observation contains the answer"
        )
    return Diagnosis(FailureMode.RIGHT, "right")


def _ambiguous(result: Scored) -> str | None:
    """Why a wrong answer reads as the gold one worded otherwise, if it does."""
    if result.f1 >= AMBIGUOUS_F1:
        return f"EM 0 but F1 {result.f1:.2f} ≥ {AMBIGUOUS_F1}"
    predicted = f" {normalize_answer(result.answer or '')} "
    for gold in result.golds:
        wanted = normalize_answer(gold)
        if wanted and f" {wanted} " in predicted:
            return "the gold answer is inside the prediction"
    return None


def mode_counts(modes: Iterable[FailureMode]) -> dict[FailureMode, int]:
    """How many results of each mode, in the enum's order, modes of none left out."""
    counts = Counter(modes)
    return {mode: counts[mode] for mode in FailureMode if counts[mode]}
