"""What a command's spans are to the commands (on, or off and free), apart from OpenTelemetry."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol

from react_cli.loop.events import Event, Ignore, Observer

Facts = Mapping[str, str | int | float | bool | None]
"""What a command tells its spans beside the events (the method, the protocol, a dataset)."""
Warn = Callable[[str], None]


class OtlpProtocol(StrEnum):
    """How the spans travel, as OpenTelemetry's ``OTEL_EXPORTER_OTLP_PROTOCOL`` names it."""

    HTTP = "http/protobuf"
    GRPC = "grpc"


@dataclass(frozen=True)
class Scored(Event):
    """A method's answer to an eval's question, scored: told to the question's span after the
    method finished (``eval``), so the span holds the gold answers, the prediction and its
    scores (``em`` and ``f1``, or FEVER's ``accuracy``)."""

    method: str
    answer: str | None
    golds: tuple[str, ...]
    scores: Mapping[str, float]


class EvalSpans(Protocol):
    """An eval's span, started, and a span for each of its questions (from any worker
    thread)."""

    def question(self, question: str, facts: Facts) -> AbstractContextManager[Observer]: ...

    def finish(self, facts: Facts, figures: Mapping[str, Any]) -> None:
        """End the eval's span with what it ended with: ``facts`` (its status, the first
        method's scores) and ``figures``, the summary's figures of each method."""


class Spans(Protocol):
    """What a command sends: a span per run (its model and tool calls inside), or per eval."""

    def run(self, question: str, facts: Facts) -> AbstractContextManager[Observer]:
        """An observer of one run (``ask``) whose span lasts as long as the block."""
        ...

    def eval(self, facts: Facts) -> EvalSpans:
        """An eval's span, started now."""
        ...

    def close(self) -> None:
        """Send what is left, waiting at most ``otel_timeout_s``; warn once if spans were
        dropped."""


class NoEvalSpans:
    """An eval that sends no spans."""

    def question(self, question: str, facts: Facts) -> AbstractContextManager[Observer]:
        return _ignored()

    def finish(self, facts: Facts, figures: Mapping[str, Any]) -> None:
        """Nothing to record."""


class NoSpans:
    """A command that sends no spans."""

    def run(self, question: str, facts: Facts) -> AbstractContextManager[Observer]:
        return _ignored()

    def eval(self, facts: Facts) -> EvalSpans:
        return NoEvalSpans()

    def close(self) -> None:
        """Nothing was sent."""


@contextmanager
def _ignored() -> Iterator[Observer]:
    yield Ignore()
