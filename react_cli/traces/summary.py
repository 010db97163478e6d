"""What ``ask --json`` prints: a run's summary, typed, from its trace."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from react_cli.traces.trace import Trace


@dataclass(frozen=True)
class RunSummary:
    """A run as ``ask --json`` reports it: the question, where it was asked (the endpoint
    without credentials or query string), the answer and how it came, where its trace is, and
    the pages it was shown (``sources``: None for a method that reads no Wikipedia), the tool
    calls refused for want of consent (each step says who refused), and the conversation it
    is a turn of (``{id, turn}``, for ``--conversation ID``)."""

    trace: Trace
    path: Path | None

    def to_json(self) -> dict[str, Any]:
        run, record, config = self.trace.run, self.trace.record, self.trace.config
        method = record.to_json()
        sources, conversation = self.trace.sources, self.trace.conversation
        return {
            "question": run.question,
            "model": config.model,
            "endpoint": config.base_url,
            "method": method["method"],
            "protocol": str(self.trace.protocol),
            "answer": run.answer,
            "branch": method["branch"],
            "stop_reason": str(run.stop_reason),
            "forced": run.forced,
            "error": run.error,
            "steps": [step.to_json() for step in run.steps],
            "refused_calls": run.refused_calls,
            "samples": method.get("samples"),
            "votes": method.get("votes"),
            "calls": method["calls"],
            "usage": run.usage.to_json(),
            "cost": self.trace.extra.get("cost"),
            "duration_s": round(run.duration_s, 4),
            "trace": None if self.path is None else str(self.path),
            "sources": None if sources is None else [source.to_json() for source in sources],
            "conversation": None if conversation is None else conversation.turn_json(),
        }
