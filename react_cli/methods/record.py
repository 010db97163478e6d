"""What a trace records about its method, beside the loop's steps: samples, votes, branch, calls.

One ``to_json``/``from_json`` pair each, the only writer and reader of these trace fields. A
recorded method or branch this version does not know (a newer writer's) is kept as text, so
the trace can still be shown.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from react_cli.core import fields
from react_cli.core.fields import optional_text
from react_cli.core.method import Method
from react_cli.core.records import Usage
from react_cli.core.trajectory import Run


@dataclass(frozen=True)
class Sample:
    """One completion read for its answer: Standard's or CoT's one call, or a CoT-SC sample."""

    raw: str
    answer: str | None
    usage: Usage
    latency_s: float = 0.0  # of the request it came from (one request may give every sample)
    retries: int = 0  # requests of it made again
    cached_usage: Usage | None = None  # the cache answered: what it would have cost

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "raw": self.raw,
            "answer": self.answer,
            "usage": self.usage.to_json(),
            "latency_s": round(self.latency_s, 4),
            "retries": self.retries,
        }
        if self.cached_usage is not None:
            data["cached_usage"] = self.cached_usage.to_json()
        return data

    @classmethod
    def from_json(cls, data: Any) -> Sample:
        """A recorded sample; TypeError/ValueError naming what is wrong."""
        if not isinstance(data, dict):
            raise TypeError(f"a sample is {type(data).__name__}, not an object")
        usage, cached = data.get("usage"), data.get("cached_usage")
        return cls(
            raw=fields.needed(fields.text(data.get("raw"), "a sample's raw"), "a sample's raw"),
            answer=fields.text(data.get("answer"), "a sample's answer"),
            usage=Usage.from_json(usage if isinstance(usage, dict) else None),
            latency_s=fields.seconds(data.get("latency_s"), "a sample's latency_s"),
            retries=fields.whole(data.get("retries"), "a sample's retries") or 0,
            cached_usage=Usage.from_json(cached) if isinstance(cached, dict) else None,
        )


def loop_calls(run: Run) -> int:
    """Model calls of a loop's run: each step's (its replies, and the call that failed)."""
    return sum(step.calls for step in run.steps)


@dataclass(frozen=True)
class MethodRecord:
    """A trace's method and how it answered: ``branch`` is the block whose answer it is (None
    without an answer), ``samples`` what Standard, CoT or CoT-SC read, ``votes`` CoT-SC's
    count per answer (in first-appearance order), ``calls`` the model calls the method made."""

    method: Method | str
    branch: Method | str | None
    calls: int
    samples: tuple[Sample, ...] = ()
    votes: dict[str, int] | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "method": str(self.method),
            "branch": None if self.branch is None else str(self.branch),
            "calls": self.calls,
        }
        if self.samples:
            data["samples"] = [sample.to_json() for sample in self.samples]
        if self.votes is not None:
            data["votes"] = dict(self.votes)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any], run: Run) -> MethodRecord:
        """The record in a trace document around ``run``; what is missing takes the value a
        ReAct trace has (the method of every trace before version 2). TypeError/ValueError
        naming the first malformed part."""
        samples = data.get("samples")
        if samples is not None and not isinstance(samples, list):
            raise TypeError(f"samples is {type(samples).__name__}, not a list")
        method = _name(data, "method") or Method.REACT
        default = Method.REACT if run.answer is not None and method == Method.REACT else None
        branch = _name(data, "branch") if "branch" in data else default
        calls = fields.whole(data.get("calls"), "calls")
        if calls is None:
            calls = loop_calls(run) + len(samples or [])
        return cls(
            method=method,
            branch=branch,
            calls=calls,
            samples=tuple(Sample.from_json(item) for item in samples or []),
            votes=_votes(data.get("votes")),
        )


def _name(data: dict[str, Any], key: str) -> Method | str | None:
    """A recorded method name: a ``Method``, or text this version does not know."""
    value = optional_text(data, key)
    if value is None:
        return None
    try:
        return Method(value)
    except ValueError:
        return value


def _votes(value: Any) -> dict[str, int] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise TypeError(f"votes are {type(value).__name__}, not an object")
    return {
        str(answer): fields.needed(fields.whole(count, "a vote count"), "a vote count")
        for answer, count in value.items()
    }
