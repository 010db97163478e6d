"""A line of ``results.jsonl``: one question's result, as a typed record written and read back.

An eval of several methods gives each row a ``methods`` object, one ``MethodResult`` per
method; the row's own fields are its first method's, so readers of single-method evals read
every eval. Rows are read back from files anyone may have edited (``--resume``, ``eval
show``), so :meth:`Row.from_json` checks every field and says what is wrong; numbers are
bounded so that sums over thousands of rows stay finite and short enough to be read back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from react_cli.core import fields
from react_cli.core.records import MAX_RECORDED_TOKENS, StopReason, Usage
from react_cli.eval.failures import Diagnosis
from react_cli.methods.evidence import Evidence

HARD_FAILURES = frozenset({StopReason.LLM_ERROR, StopReason.ERROR})
"""Stop reasons of questions that failed rather than were answered badly; resume retries them."""
_FRACTION, _SECONDS, _STEPS, _TOKENS = 1.0, 1e9, 10**6, MAX_RECORDED_TOKENS


class BadRow(ValueError):
    """Why a JSON value is not a row, as a phrase: ``index is not a row number``."""


@dataclass(frozen=True)
class FeverLabel:
    """The label a FEVER answer reads as (``value`` None: it names none)."""

    value: str | None


@dataclass(frozen=True)
class MethodResult:
    """One method's result for a question: answer and scores, how it ended, what it cost."""

    answer: str | None
    em: float  # FEVER: 1.0 when the label is right (F1 the same)
    f1: float
    stop_reason: StopReason
    error: str | None
    steps: int
    tokens: int
    usage: Usage | None  # None in rows written before usage was recorded
    cost: float | None  # None without configured prices
    latency_s: float
    trace: str | None  # relative to the eval folder; None when the question crashed
    label: FeverLabel | None = None  # FEVER results whose run ended
    calls: int | None = None  # model calls, where recorded (a ReAct eval's: in its traces)
    branch: str | None = None  # the block whose answer it is, where recorded
    evidence: Evidence | None = None  # against the gold evidence, where the dataset has it
    cached_tokens: int | None = None  # what calls the cache answered would have cost, if any
    refused_calls: int | None = None  # tool calls that needed consent and were refused, if any
    failure: Diagnosis | None = None  # why it is right or wrong (``eval.failures``), if recorded

    @property
    def failed(self) -> bool:
        """Whether the question failed (endpoint down, crash) rather than was answered badly."""
        return self.stop_reason in HARD_FAILURES

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"answer": self.answer}
        if self.label is not None:
            data["label"] = self.label.value
        data.update(
            em=self.em,
            f1=self.f1,
            stop_reason=self.stop_reason.value,
            error=self.error,
            steps=self.steps,
            tokens=self.tokens,
            usage=None if self.usage is None else self.usage.to_json(),
            cost=self.cost,
            latency_s=self.latency_s,
            trace=self.trace,
        )
        optional = {
            "calls": self.calls,
            "branch": self.branch,
            "cached_tokens": self.cached_tokens,
            "refused_calls": self.refused_calls,
        }
        data.update({key: value for key, value in optional.items() if value is not None})
        if self.evidence is not None:
            data["evidence"] = self.evidence.to_json()
        if self.failure is not None:
            data["failure"] = self.failure.to_json()
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> MethodResult:
        """The result ``data`` holds; BadRow says what is wrong with it."""
        try:
            return cls._read(data)
        except fields.FieldError as exc:
            raise BadRow(str(exc)) from None

    @classmethod
    def _read(cls, data: dict[str, Any]) -> MethodResult:
        stop_reason = data.get("stop_reason")
        if not isinstance(stop_reason, str):
            raise BadRow("no stop_reason text")
        try:
            reason = StopReason(stop_reason)
        except ValueError:
            raise BadRow("stop_reason is not one react-cli writes") from None
        usage = data.get("usage")
        if usage is not None and not isinstance(usage, dict):
            raise BadRow("usage is not an object")
        return cls(
            answer=fields.text(data.get("answer"), "answer"),
            em=_number(data, "em", _FRACTION),
            f1=_number(data, "f1", _FRACTION),
            stop_reason=reason,
            error=fields.text(data.get("error"), "error"),
            steps=fields.needed(fields.whole(data.get("steps"), "steps", high=_STEPS), "steps"),
            tokens=fields.needed(
                fields.whole(data.get("tokens"), "tokens", high=_TOKENS), "tokens"
            ),
            usage=None if usage is None else Usage.from_json(usage),
            cost=fields.number(data.get("cost"), "cost"),
            latency_s=_number(data, "latency_s", _SECONDS),
            trace=fields.text(data.get("trace"), "trace"),
            label=FeverLabel(fields.text(data.get("label"), "label")) if "label" in data else None,
            calls=fields.whole(data.get("calls"), "calls", high=_STEPS),
            branch=fields.text(data.get("branch"), "branch"),
            evidence=_evidence(data.get("evidence")),
            cached_tokens=fields.whole(data.get("cached_tokens"), "cached_tokens", high=_TOKENS),
            refused_calls=fields.whole(data.get("refused_calls"), "refused_calls", high=_STEPS),
            failure=Diagnosis.from_json(data.get("failure")),
        )


@dataclass(frozen=True)
class Row:
    """One finished question of an eval; its JSON keys keep this order. ``result`` is its
    own fields: its method's (the first, in an eval of several)."""

    index: int  # in the dataset file, from 0
    id: str | int | None  # the dataset's own id of the question, if it has one
    question: str
    golds: tuple[str, ...]  # accepted answers (FEVER: the label)
    result: MethodResult
    method: str | None = None  # the method of ``result``, unless the eval is ReAct's alone
    methods: dict[str, MethodResult] | None = None  # every method's, in an eval of several
    calls_made: int | None = None  # model calls the eval made for the question (shared once)

    @property
    def key(self) -> tuple[int, str]:
        """What identifies a question across evals: its dataset index and its text."""
        return self.index, self.question

    @property
    def failed(self) -> bool:
        """Whether the question failed (endpoint down, crash) for any of its methods."""
        return any(result.failed for result in self.results().values())

    def results(self) -> dict[str, MethodResult]:
        """Each method's result: the ``methods`` object, or the row's own."""
        if self.methods is not None:
            return dict(self.methods)
        return {self.method or "react": self.result}

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "index": self.index,
            "id": self.id,
            "question": self.question,
            "gold": self.golds[0] if len(self.golds) == 1 else list(self.golds),
            **self.result.to_json(),
        }
        if self.method is not None:
            data["method"] = self.method
        if self.methods is not None:
            data["methods"] = {name: result.to_json() for name, result in self.methods.items()}
            data["calls_made"] = self.calls_made
        return data

    @classmethod
    def from_json(cls, data: object) -> Row:
        """The row ``data`` holds; BadRow says what is wrong with it."""
        try:
            return cls._read(data)
        except fields.FieldError as exc:
            raise BadRow(str(exc)) from None

    @classmethod
    def _read(cls, data: object) -> Row:
        if not isinstance(data, dict):
            raise BadRow("not a JSON object")
        question = data.get("question")
        if not isinstance(question, str):
            raise BadRow("no question text")
        index = data.get("index")
        if type(index) is not int or index < 0:
            raise BadRow("index is not a row number")
        return cls(
            index=index,
            id=_id(data.get("id")),
            question=question,
            golds=_golds(data.get("gold")),
            result=MethodResult.from_json(data),
            method=fields.text(data.get("method"), "method"),
            methods=_methods(data.get("methods")),
            calls_made=fields.whole(data.get("calls_made"), "calls_made", high=_STEPS),
        )


def _evidence(value: object) -> Evidence | None:
    """A result's evidence scores (absent or null: the dataset had no gold evidence)."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise BadRow("evidence is not an object")
    sentences = value.get("sentence_recall")
    return Evidence(
        page_recall=_number(value, "page_recall", _FRACTION),
        page_precision=_number(value, "page_precision", _FRACTION),
        sentence_recall=fields.number(sentences, "sentence_recall", high=_FRACTION),
    )


def _methods(value: object) -> dict[str, MethodResult] | None:
    if value is None:
        return None
    if not isinstance(value, dict) or not value:
        raise BadRow("methods is not an object of results")
    if not all(isinstance(result, dict) for result in value.values()):
        raise BadRow("a method's result is not an object")
    return {str(name): MethodResult.from_json(result) for name, result in value.items()}


def _number(data: dict[str, Any], name: str, limit: float) -> float:
    """A number the row must hold, from 0 to ``limit``."""
    return fields.needed(fields.number(data.get(name), name, high=limit), name)


def _id(value: object) -> str | int | None:
    if isinstance(value, bool) or not isinstance(value, (str, int, type(None))):
        raise BadRow("id is not text or a whole number")
    return value


def _golds(value: object) -> tuple[str, ...]:
    """The accepted answers: text, a number (printed as text), or a list of them."""
    golds = value if isinstance(value, list) else [value]
    if not golds or not all(
        isinstance(g, str) or (isinstance(g, (int, float)) and not isinstance(g, bool))
        for g in golds
    ):
        raise BadRow("gold is not text, a number or a list of them")
    return tuple(str(g) for g in golds)
