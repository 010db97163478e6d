"""The loop's stop rules: built once from the settings (:func:`run_limits`, and the hybrids'
step limit :func:`hybrid_steps`), recorded in the trace, read back by replay, so a re-run stops
where the recording did. Here, below the session, so what records a run's configuration needs
nothing that runs one."""

from __future__ import annotations

from dataclasses import dataclass, fields

from react_cli.core.method import Task
from react_cli.core.records import Prices, StopReason, Usage
from react_cli.settings.settings import Settings


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


def run_limits(settings: Settings) -> Limits:
    """The loop's stop rules: each the setting of its name, but --timeout (the run's) and the
    prices --max-cost counts from."""
    own = ("timeout_s", "prices")
    same = {f.name: getattr(settings, f.name) for f in fields(Limits) if f.name not in own}
    return Limits(timeout_s=settings.run_timeout_s, prices=settings.prices(), **same)


def hybrid_steps(settings: Settings, task: Task) -> int:
    """The hybrids' ReAct step limit: --max-steps or ``hybrid_max_steps`` if given, else the
    paper's for the task (7 HotpotQA, 5 FEVER)."""
    return settings.hybrid_max_steps or task.hybrid_steps
