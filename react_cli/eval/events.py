"""What an eval reports while it runs, and what it ended with: what the views read, apart from
the pool that runs the questions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from react_cli.core.errors import LLMConfigError
from react_cli.eval.rows import Row
from react_cli.eval.summary import EvalStatus, Summary
from react_cli.infra.limiter import Limiter
from react_cli.llm.endpoint import EndpointFacts
from react_cli.llm.replicas import ReplicaSet


@dataclass(frozen=True)
class Concurrency:
    """How many requests an eval's endpoints get at once: the model endpoint's limiter (and
    whether it still streams), and the Wikipedia host's (None: a ZIM archive)."""

    model: EndpointFacts
    wiki: Limiter | None = None
    streamed: bool = True  # as configured (--no-stream: False)
    replicas: ReplicaSet | None = None  # --base-url repeated: ``model`` is the first's

    @property
    def limiters(self) -> tuple[Limiter, ...]:
        """The model's limiters: its endpoint's, or each replica's."""
        return self.replicas.limiters if self.replicas else (self.model.limiter,)

    def text(self) -> str:
        """What the progress bar shows: ``model ×4 · wiki ×2`` (requests at once; replicas
        ``model ×4+2``)."""
        model = "model ×" + "+".join(str(limiter.level) for limiter in self.limiters)
        if self.streamed and self.model.cuts_streams:
            model += " unstreamed"
        return model if self.wiki is None else f"{model} · wiki ×{self.wiki.level}"

    def to_json(self) -> dict[str, dict[str, Any]]:
        """What the summary records of each limiter (``levels``)."""
        stats = self.replicas.stats() if self.replicas else self.model.limiter.stats()
        model = stats.to_json()
        model["streaming"] = (
            "off" if not self.streamed else "stopped" if self.model.cuts_streams else "on"
        )
        levels = {"model": model}
        if self.wiki is not None:
            levels["wiki"] = self.wiki.stats().to_json()
        return levels | (self.replicas.to_json() if self.replicas else {})


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
