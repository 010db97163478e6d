"""Running totals over an eval's rows, for the summary: the rows' own figures and each method's.

A question's row can be replaced (a resumed eval adds methods to it), so a result can be taken
back out as exactly as it went in.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace

from react_cli.core.records import StopReason
from react_cli.eval.rows import MethodResult
from react_cli.eval.summary import EvidenceFigures, Figures, ScoreKind


@dataclass
class Tally:
    """Running totals over results (``calls`` over those that record their calls: a ReAct
    eval's rows do not, their traces do)."""

    n: int = 0
    em: float = 0.0
    f1: float = 0.0
    steps: int = 0
    tokens: int = 0
    calls: int = 0
    counted_calls: int = 0  # results that record their calls
    latency_s: float = 0.0
    failed: int = 0
    estimated: int = 0  # results whose tokens are estimates
    costed: int = 0  # results with a cost
    cost: float = 0.0
    cached_tokens: int = 0
    cache_reported: int = 0  # results whose server reported its prompt cache
    cached_prompt_tokens: int = 0  # what the server's prompt cache answered, where reported
    reported_prompt_tokens: int = 0  # the prompt tokens of those results
    refused_calls: int = 0
    stop_reasons: Counter[StopReason] = field(default_factory=Counter)
    evidenced: int = 0  # results with evidence scores
    page_recall: float = 0.0
    page_precision: float = 0.0
    sentences_matched: int = 0  # results of them with a sentence recall
    sentence_recall: float = 0.0

    def add(self, result: MethodResult, sign: int = 1, *, failed: bool | None = None) -> None:
        """Count ``result`` in (``sign`` -1: take it back out); ``failed``: whether its
        question failed, when that is more than its own failure (a row's, for any method)."""
        self.n += sign
        self.em += sign * result.em
        self.f1 += sign * result.f1
        self.steps += sign * result.steps
        self.tokens += sign * result.tokens
        if result.calls is not None:
            self.counted_calls += sign
            self.calls += sign * result.calls
        self.latency_s += sign * result.latency_s
        self.failed += sign * (result.failed if failed is None else failed)
        self.estimated += sign * (result.usage is not None and result.usage.estimated)
        if result.cost is not None:
            self.costed += sign
            self.cost += sign * result.cost
        self.cached_tokens += sign * (result.cached_tokens or 0)
        if result.usage is not None and result.usage.cached_prompt_tokens is not None:
            self.cache_reported += sign
            self.cached_prompt_tokens += sign * result.usage.cached_prompt_tokens
            self.reported_prompt_tokens += sign * result.usage.prompt_tokens
        self.refused_calls += sign * (result.refused_calls or 0)
        self.stop_reasons[result.stop_reason] += sign
        if not self.stop_reasons[result.stop_reason]:
            del self.stop_reasons[result.stop_reason]
        evidence = result.evidence
        if evidence is not None:
            self.evidenced += sign
            self.page_recall += sign * evidence.page_recall
            self.page_precision += sign * evidence.page_precision
            if evidence.sentence_recall is not None:
                self.sentences_matched += sign
                self.sentence_recall += sign * evidence.sentence_recall

    def copy(self) -> Tally:
        return replace(self, stop_reasons=Counter(self.stop_reasons))

    def figures(self, kind: ScoreKind) -> Figures:
        def mean(total: float, digits: int) -> float | None:
            return round(total / self.n, digits) if self.n else None

        return Figures(
            kind=kind,
            n=self.n,
            em=mean(self.em, 6),
            f1=None if kind is ScoreKind.ACCURACY else mean(self.f1, 6),
            failed=self.failed,
            avg_steps=mean(self.steps, 4),
            avg_tokens=mean(self.tokens, 2),
            avg_latency_s=mean(self.latency_s, 4),
            total_tokens=self.tokens,
            tokens_estimated=self.estimated > 0,
            total_cost=round(self.cost, 6) if self.costed else None,
            stop_reasons=dict(sorted(self.stop_reasons.items())),
            cached_tokens=self.cached_tokens,
            cached_prompt_tokens=self.cached_prompt_tokens if self.cache_reported else None,
            cached_share=self.cached_share(),
            refused_calls=self.refused_calls,
            evidence=self.evidence(),
        )

    def cached_share(self) -> float | None:
        """The share of the prompt tokens the server's cache answered, over the results
        whose server reported it (None: none did)."""
        if not self.cache_reported or not self.reported_prompt_tokens:
            return None
        return round(self.cached_prompt_tokens / self.reported_prompt_tokens, 4)

    def evidence(self) -> EvidenceFigures | None:
        """The mean evidence scores, once a result has some."""
        if not self.evidenced:
            return None
        matched = self.sentences_matched
        return EvidenceFigures(
            n=self.evidenced,
            page_recall=round(self.page_recall / self.evidenced, 6),
            page_precision=round(self.page_precision / self.evidenced, 6),
            sentence_recall=round(self.sentence_recall / matched, 6) if matched else None,
        )

    def cells(self, kind: ScoreKind) -> tuple[tuple[str, float | str], ...]:
        """A method's row of the summary's ``methods`` table: its questions, scores, failures,
        calls and tokens (totals and per question), seconds per question, and its mean
        evidence scores where it has some."""
        figures = self.figures(kind)
        evidence = figures.evidence
        cells: dict[str, float | str | None] = {
            "n": self.n,
            **{metric: figures.score(metric) for metric in kind.metrics},
            "failed": self.failed,
            "calls": self.calls if self.counted_calls else None,
            "tokens": self.tokens,
            "avg_calls": round(self.calls / self.n, 4) if self.counted_calls else None,
            "avg_tokens": figures.avg_tokens,
            "avg_latency_s": figures.avg_latency_s,
            "refused_calls": self.refused_calls or None,
            "cached_share": self.cached_share(),
        }
        if evidence is not None:
            cells.update(
                page_recall=evidence.page_recall,
                page_precision=evidence.page_precision,
                sentence_recall=evidence.sentence_recall,
            )
        return tuple((name, value) for name, value in cells.items() if value is not None)
