"""The loop's stop rules: built once from the settings, recorded in the trace, read back by
replay, so a re-run stops where the recording did."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """The loop's stop rules."""

    max_steps: int = 8
    max_parse_errors: int = 3
    max_repeats: int = 3
    max_total_tokens: int | None = None
    timeout_s: float | None = None
    max_tool_errors: int = 2
    force_answer: bool = False
