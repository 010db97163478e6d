"""Typed records passed between the loop, the model client, the tools and the trace.

The loop (``agent.py``) depends only on these records and on the two protocols below, so a
model or a tool set can be swapped for a scripted one in tests and in replay.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass
class Usage:
    """Token counts as reported by the endpoint (zero when it reports none)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
        )

    def to_dict(self) -> dict[str, int]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> Usage:
        data = data or {}
        return cls(_count(data.get("prompt_tokens")), _count(data.get("completion_tokens")))


@dataclass
class Completion:
    """One model call's result.

    ``text`` is the model's output exactly as received, already cut client-side before the
    first invented ``Observation`` line; ``<think>`` blocks are still in it.
    """

    text: str
    usage: Usage = field(default_factory=Usage)
    latency_s: float = 0.0
    retries: int = 0
    finish_reason: str | None = None


TextSink = Callable[[str], None]
"""Receives model text as it streams in (only text that survives the Observation cut)."""


class Model(Protocol):
    """Anything that continues a prompt: the HTTP client, or a scripted model in tests/replay."""

    def complete(self, prompt: str, stop: list[str], on_text: TextSink | None = None) -> Completion:
        """Continue ``prompt``; ``stop`` are stop sequences (the client also cuts itself)."""
        ...


@dataclass
class ToolResult:
    """What a tool call returns: the observation shown to the model plus metadata for traces.

    ``details`` carries backend facts worth recording (e.g. ``resolved_title``).
    """

    observation: str
    details: dict[str, Any] = field(default_factory=dict)


class Tools(Protocol):
    """The two stateful Wikipedia tools of the paper (Finish is handled by the loop)."""

    def search(self, entity: str) -> ToolResult: ...

    def lookup(self, keyword: str) -> ToolResult: ...


def _count(value: Any) -> int:
    """A token count as servers and traces report it; anything but a finite number ≥ 0 is 0
    (a server's odd usage field must never end a run)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    return int(value) if math.isfinite(value) and value >= 0 else 0
