"""What an eval reports while it runs, and what it ended with: what the views read, apart from
the pool that runs the questions."""

from __future__ import annotations

from dataclasses import dataclass

from react_cli.core.errors import LLMConfigError
from react_cli.eval.rows import Row
from react_cli.eval.summary import EvalStatus, Summary


class EvalObserver:
    """Progress of an eval, called from the main thread only; the default does nothing."""

    def started(self, total: int, done: int, summary: Summary) -> None: ...

    def result(self, row: Row, summary: Summary) -> None: ...

    def finished(self, summary: Summary) -> None: ...


@dataclass(frozen=True)
class EvalResult:
    """What an eval ended with."""

    summary: Summary
    status: EvalStatus
    last_error: str | None = None  # the store's error, or the last question's that failed
    max_tokens_reached: int = 0  # questions with a reply stopped at max_tokens before its action
    config_error: LLMConfigError | None = None  # the endpoint refused the key or the model
