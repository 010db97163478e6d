"""``ask --from-trace T --from-step K``: a saved ReAct or Act run continued live from step K.

Steps 1..K-1 are played from the trace (its model outputs and observations, no network), then
the configured endpoint and wiki take over; the new trace says where it came from. A turn of a
conversation is forked with the earlier turns it was given: the fork is another take on that
turn (its trace names the same conversation and turn; the conversation itself is unchanged).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from react_cli.core.conversation import Earlier
from react_cli.core.errors import UsageError
from react_cli.core.method import Method
from react_cli.core.records import Api, ProtocolName, StopReason, Usage
from react_cli.core.trajectory import Run
from react_cli.session import Session
from react_cli.settings.settings import Settings
from react_cli.tools.base import ToolSet
from react_cli.traces.recorded import RecordedModel, recorded_tools
from react_cli.traces.replay import recorded_earlier
from react_cli.traces.trace import Trace


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

    def settings(self, settings: Settings, protocol_given: str | None) -> Settings:
        """``settings`` for the live part: the trace's method and protocol (UsageError when an
        option asks for another protocol, or the endpoint's API cannot carry the trace's)."""
        protocol = self.trace.protocol
        if protocol_given is not None and protocol_given != protocol:
            raise UsageError(f"a fork continues the trace's protocol, {protocol}")
        if protocol is ProtocolName.TOOLS and settings.api != Api.CHAT:
            raise UsageError("the trace's run made native tool calls: fork it with --api chat")
        constrain = settings.constrain and protocol is ProtocolName.TEXT
        return replace(
            settings, method=str(self.method), protocol=str(protocol), constrain=constrain
        )

    @property
    def earlier(self) -> Earlier:
        """The earlier turns of its conversation the forked run was given."""
        return recorded_earlier(self.trace)

    def session(self, live: Session) -> Session:
        """``live`` (the configured endpoint and wiki) after the replayed steps."""
        replayed, specs = self._replayed(), self.trace.tool_specs
        carried = self.earlier.carried

        def tools() -> ToolSet:
            live_tools = live.tools()
            live_tools.resume(carried)
            return recorded_tools(replayed.steps, specs, live_tools)

        return replace(live, model=RecordedModel(replayed, live.model), tools=tools)

    def trace_extra(self) -> dict[str, Any]:
        """What the new trace records about its origin (and its conversation, if any)."""
        origin = {"trace": str(self.trace.path), "id": self.trace.id, "step": self.step}
        conversation = self.trace.conversation
        if conversation is None:
            return {"forked_from": origin}
        return {"forked_from": origin, "conversation": conversation.to_json()}
