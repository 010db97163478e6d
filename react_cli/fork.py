"""``ask --from-trace T --from-step K``: a saved ReAct or Act run continued live from step K.

Steps 1..K-1 are played from the trace (its model outputs and observations, no network), then
the configured endpoint and wiki take over; the new trace says where it came from.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from react_cli.errors import UsageError
from react_cli.methods.method import Method
from react_cli.records import Model, StopReason, Tools, Usage
from react_cli.replay import RecordedModel, RecordedTools
from react_cli.trace import Trace
from react_cli.trajectory import Run


@dataclass
class Fork:
    """``ask --from-trace T --from-step K``: steps 1..K-1 from T, then the live endpoint."""

    trace: Trace
    step: int

    @classmethod
    def open(cls, path: Path | None, step: int | None) -> Fork:
        if path is None or step is None:
            raise UsageError("a fork needs both --from-trace TRACE and --from-step K")
        trace = Trace.read(path)
        if trace.record.method not in (Method.REACT, Method.ACT):
            raise UsageError(f"{path} is a {trace.record.method} run: only ReAct and Act fork")
        last = len(trace.run.steps) + 1
        if not 1 <= step <= last:
            raise UsageError(f"--from-step must be between 1 and {last} for {path}")
        return cls(trace, step)

    def _replayed(self) -> Run:
        run = self.trace.run
        return Run(
            question=run.question,
            answer=None,
            stop_reason=StopReason.FORKED,
            steps=run.steps[: self.step - 1],
            usage=Usage(),
            duration_s=0.0,
        )

    @property
    def method(self) -> Method:
        """The forked run's method: ReAct or Act."""
        return Method.ACT if self.trace.record.method == Method.ACT else Method.REACT

    def model(self, live: Model) -> Model:
        return RecordedModel(self._replayed(), live, thoughts=self.method is Method.REACT)

    def tools(self, live: Tools) -> Tools:
        return RecordedTools(self._replayed().steps, live)

    def trace_extra(self) -> dict[str, Any]:
        """What the new trace records about its origin."""
        return {
            "forked_from": {"trace": str(self.trace.path), "id": self.trace.id, "step": self.step}
        }
