"""The loop's stop rules: built once from the settings, recorded in the trace, read back by
replay, so a re-run stops where the recording did."""

from __future__ import annotations

from dataclasses import dataclass

from react_cli.core.records import Prices, StopReason, Usage


@dataclass(frozen=True)
class Limits:
    """The loop's stop rules. ``max_cost`` counts from ``prices`` (the model's, configured);
    ``max_no_progress`` (None: off, as in the paper) counts observations in a row that
    brought nothing new."""

    max_steps: int = 8
    max_parse_errors: int = 3
    max_repeats: int = 3
    max_total_tokens: int | None = None
    timeout_s: float | None = None
    max_tool_errors: int = 2
    force_answer: bool = False
    max_cost: float | None = None
    max_no_progress: int | None = None
    prices: Prices | None = None

    def spent(self, usage: Usage) -> StopReason | None:
        """The budget ``usage`` used up, if any: tokens, then cost. One rule for the loop
        (before each step) and for a method's next block (a hybrid's back-off)."""
        if self.max_total_tokens is not None and usage.total_tokens >= self.max_total_tokens:
            return StopReason.TOKEN_BUDGET
        prices, budget = self.prices, self.max_cost
        if budget is not None and prices is not None and prices.cost(usage).amount >= budget:
            return StopReason.COST_BUDGET
        return None
