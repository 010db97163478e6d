"""A sample's ``events`` as Inspect AI's own logs have them, for the viewer's Transcript tab.

Inspect's viewer opens a sample on its transcript: the events its run recorded. react-cli's
export writes them from the trajectory (``share.inspect_messages``): the sample's start
(``sample_init``), the method as a solver's span holding a ``model`` event per model call
(its input the messages before its reply, by reference into the sample's message pool as
Inspect 0.3 condenses them: ``input_refs`` into ``events_data``; its output, usage, time,
retries and error) and a ``tool`` event per tool call (its arguments as the tool's schema
names them, the observation as its result, a refused or failed call's error), then the
scorers' span holding a ``score`` event per score. Times run from the trace's start by each
call's latency; ids are derived from the sample's, so an export gives the same bytes twice.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta
from typing import Any

from react_cli.share.inspect_messages import Called, Trajectory, Turn, model_usage
from react_cli.share.text import one_line, shown
from react_cli.tools.base import ToolSpec

Json = dict[str, Any]
_JSON_TYPES = frozenset({"string", "integer", "number", "boolean", "array", "object", "null"})


class _Clock:
    """The events' times: from the run's start, on by each call's latency."""

    def __init__(self, started: datetime) -> None:
        self.started, self.seconds = started, 0.0

    def now(self) -> Json:
        moment = self.started + timedelta(seconds=self.seconds)
        return {"timestamp": moment.isoformat(), "working_start": round(self.seconds, 6)}

    def spend(self, seconds: float) -> str:
        """Let ``seconds`` pass; the time then, as an event's ``completed``."""
        self.seconds += max(0.0, seconds) if seconds == seconds else 0.0  # NaN: no time
        return (self.started + timedelta(seconds=self.seconds)).isoformat()


class SampleEvents:
    """The events of one sample (see the module docstring)."""

    def __init__(self, seed: str, started: datetime, model: str, config: Json) -> None:
        self.seed, self.model, self.config = seed, model, config
        self.clock = _Clock(started)
        self.events: list[Json] = []

    def _event(self, kind: str, span: str | None, **fields: Any) -> Json:
        number = len(self.events)
        digest = hashlib.sha256(f"{self.seed}\0{number}".encode("utf-8", "replace"))
        event: Json = {"uuid": digest.hexdigest()[:22], **self.clock.now(), "event": kind}
        if span is not None:
            event["span_id"] = span
        event.update(fields)
        self.events.append(event)
        return event

    def _span(self, name: str, kind: str, parent: str | None = None) -> str:
        span = f"{self.seed[:12]}-{kind}-{len(self.events)}"
        fields = {"id": span, "type": kind, "name": one_line(name, 100)}
        self._event("span_begin", span, **fields, **({"parent_id": parent} if parent else {}))
        return span

    def _end(self, span: str) -> None:
        self._event("span_end", span, id=span)

    def run(self, sample: Json, method: str, trajectory: Trajectory, scores: Json) -> list[Json]:
        """The events of the sample ``sample`` (its input, target and id): the method's calls
        from ``trajectory``, then ``scores``."""
        init = self._span("init", "init")
        fields = {key: sample[key] for key in ("input", "target", "id")}
        self._event("sample_init", init, sample=fields)
        self._end(init)
        solvers = self._span("solvers", "solvers")
        solver = self._span(method, "solver", solvers)
        tools = [_tool_info(spec) for spec in trajectory.tools]
        for turn in trajectory.turns:
            self._model(solver, turn, tools)
            for called in turn.calls:
                if called.answer is not None:
                    self._tool(solver, called)
        self._end(solver)
        self._end(solvers)
        scorers = self._span("scorers", "scorers")
        for name, score in scores.items():
            scorer = self._span(name, "scorer", scorers)
            target = sample["target"]
            self._event(
                "score", scorer, score=score, target=target, intermediate=False, scorer=name
            )
            self._event("span_end", scorer, id=scorer)
        self._end(scorers)
        return self.events

    def _model(self, span: str, turn: Turn, tools: list[Json]) -> None:
        event = self._event(
            "model",
            span,
            model=self.model,
            input=[],
            input_refs=[[0, turn.given]],
            tools=tools,
            tool_choice="auto",
            config=self.config,
            output={
                "model": self.model,
                "choices": [{"message": turn.output, "stop_reason": _stop_reason(turn)}],
                "completion": turn.output.get("content", ""),
                "usage": model_usage(turn.usage),
                "time": turn.latency_s,
            },
            retries=turn.retries,
        )
        if turn.error is not None:
            event["error"] = turn.error
        event["completed"] = self.clock.spend(turn.latency_s)
        event["working_time"] = turn.latency_s

    def _tool(self, span: str, called: Called) -> None:
        call, answer = called.call, called.answer
        assert answer is not None
        event = self._event(
            "tool",
            span,
            type="function",
            id=call["id"],
            function=call["function"],
            arguments=call["arguments"],
            result=answer["content"],
            events=[],
        )
        if "error" in answer:
            event["error"] = answer["error"]
        event["completed"] = self.clock.spend(called.latency_s)
        event["working_time"] = called.latency_s


def _stop_reason(turn: Turn) -> str:
    if turn.calls:
        return "tool_calls"
    return "max_tokens" if turn.max_tokens_reached else "stop"


def _tool_info(spec: ToolSpec) -> Json:
    """A tool as a model event lists it (Inspect's ``ToolInfo``): its parameters' names,
    JSON types and descriptions only, so no schema a server made up fails Inspect's reader."""
    schema = spec.schema
    raw = schema.get("properties")
    properties = raw if isinstance(raw, dict) else {}
    params: Json = {}
    for name, prop in list(properties.items())[:100]:
        param: Json = {}
        if isinstance(prop, dict):
            kind = prop.get("type")
            if isinstance(kind, str) and kind in _JSON_TYPES:
                param["type"] = kind
            if isinstance(prop.get("description"), str):
                param["description"] = shown(prop["description"])
        params[one_line(str(name), 100)] = param
    required = schema.get("required")
    needed = (
        [one_line(n, 100) for n in required if isinstance(n, str)]
        if isinstance(required, list)
        else []
    )
    return {
        "name": one_line(spec.name, 100),
        "description": shown(spec.description),
        "parameters": {
            "type": "object",
            "properties": params,
            "required": [name for name in needed if name in params],
        },
    }
