"""``summary.json``: an eval's figures over its rows, and what it ran on and with, typed.

The store rewrites it after every row; ``--resume`` and ``eval show|report|compare`` read it
back with :meth:`Summary.from_json`, which checks every field it keeps and names the first
that is wrong (``BadSummary("em")``). Its JSON keys keep the order they have always had.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, TypeVar

from react_cli.core import fields
from react_cli.core.errors import UsageError
from react_cli.core.records import StopReason, StrEnum
from react_cli.eval.config import EvalConfig
from react_cli.eval.datasets import Format, Selection
from react_cli.eval.shard import Shard

SUMMARY_VERSION = 1
E = TypeVar("E", bound=StrEnum)


class BadSummary(ValueError):
    """The first field of a summary that is missing or wrong (``em``, ``dataset``, ...)."""


class EvalStatus(StrEnum):
    """Where an eval stands; the value is the summary's ``status``."""

    RUNNING = "running"
    FINISHED = "finished"
    INTERRUPTED = "interrupted"  # Ctrl-C
    STOPPED = "stopped"  # failures in a row, or the endpoint refused the configuration
    FAILED = "failed"  # the store could not be written
    BUDGET = "budget"  # --max-total-cost was spent before every question ran
    PARTIAL = "partial"  # merged from some of its shards (eval merge --partial)


class ScoreKind(StrEnum):
    """How an eval scores answers: HotpotQA-style EM and F1, or FEVER label accuracy."""

    EM_F1 = "em_f1"
    ACCURACY = "accuracy"

    @property
    def metrics(self) -> tuple[str, ...]:
        """The summary's score fields, in the order they are shown."""
        return ("em", "f1") if self is ScoreKind.EM_F1 else ("accuracy",)


@dataclass(frozen=True)
class EvidenceFigures:
    """Mean evidence scores over the ``n`` results that have them (``sentence_recall`` over
    those of them whose sentences could be matched; None if none could)."""

    n: int
    page_recall: float
    page_precision: float
    sentence_recall: float | None

    def to_json(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "page_recall": self.page_recall,
            "page_precision": self.page_precision,
            "sentence_recall": self.sentence_recall,
        }

    @classmethod
    def from_json(cls, data: object) -> EvidenceFigures | None:
        if data is None:
            return None
        if not isinstance(data, dict):
            raise BadSummary("evidence")
        scores = {
            name: _figure(data, name, 1.0)
            for name in ("page_recall", "page_precision", "sentence_recall")
        }
        recall, precision = scores["page_recall"], scores["page_precision"]
        if recall is None or precision is None:
            raise BadSummary("evidence")
        return cls(_whole(data.get("n"), "evidence"), recall, precision, scores["sentence_recall"])


@dataclass(frozen=True)
class Figures:
    """Scores as fractions from 0 to 1, averages per question and counts per stop reason;
    scores and averages are None (not 0) before any question has finished."""

    kind: ScoreKind
    n: int
    em: float | None  # FEVER: the accuracy
    f1: float | None  # FEVER: None (not recorded)
    failed: int
    avg_steps: float | None
    avg_tokens: float | None
    avg_latency_s: float | None
    total_tokens: int
    tokens_estimated: bool  # some row's tokens are estimates (the endpoint reported none)
    total_cost: float | None  # None until a row has one (prices are configured)
    stop_reasons: dict[StopReason, int]
    evidence: EvidenceFigures | None = None  # None until a result has evidence scores
    cached_tokens: int = 0  # what the calls the cache answered would have cost (not counted)
    refused_calls: int = 0  # tool calls that needed consent and were refused
    cached_prompt_tokens: int | None = None  # the server's prompt cache, where it reported it
    cached_share: float | None = None  # of the prompt tokens of the rows that reported it

    def score(self, metric: str) -> float | None:
        """A score by its field name: ``em``, ``f1`` or ``accuracy``."""
        return self.f1 if metric == "f1" else self.em

    def to_json(self) -> dict[str, Any]:
        return {
            "n": self.n,
            **{metric: self.score(metric) for metric in self.kind.metrics},
            "failed": self.failed,
            "avg_steps": self.avg_steps,
            "avg_tokens": self.avg_tokens,
            "avg_latency_s": self.avg_latency_s,
            "total_tokens": self.total_tokens,
            "tokens_estimated": self.tokens_estimated,
            "total_cost": self.total_cost,
            "stop_reasons": {reason.value: count for reason, count in self.stop_reasons.items()},
            **({} if self.evidence is None else {"evidence": self.evidence.to_json()}),
            **({"cached_tokens": self.cached_tokens} if self.cached_tokens else {}),
            **({"refused_calls": self.refused_calls} if self.refused_calls else {}),
            **_reported("cached_prompt_tokens", self.cached_prompt_tokens),
            **_reported("cached_share", self.cached_share),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Figures:
        kind = ScoreKind.ACCURACY if "accuracy" in data else ScoreKind.EM_F1
        scores = {metric: _figure(data, metric, 1.0) for metric in kind.metrics}
        stops = data.get("stop_reasons")
        if not isinstance(stops, dict):
            raise BadSummary("stop_reasons")
        return cls(
            kind=kind,
            n=_whole(data.get("n"), "n"),
            em=scores.get("em", scores.get("accuracy")),
            f1=scores.get("f1"),
            failed=_whole(data.get("failed"), "failed"),
            avg_steps=_figure(data, "avg_steps"),
            avg_tokens=_figure(data, "avg_tokens"),
            avg_latency_s=_figure(data, "avg_latency_s"),
            total_tokens=_whole(data.get("total_tokens"), "total_tokens"),
            tokens_estimated=data.get("tokens_estimated") is True,
            total_cost=_figure(data, "total_cost"),
            stop_reasons={
                _enum(StopReason, reason, "stop_reasons"): _whole(count, "stop_reasons")
                for reason, count in stops.items()
            },
            evidence=EvidenceFigures.from_json(data.get("evidence")),
            cached_tokens=fields.whole(data.get("cached_tokens"), "cached_tokens") or 0,
            refused_calls=fields.whole(data.get("refused_calls"), "refused_calls") or 0,
            cached_prompt_tokens=fields.whole(
                data.get("cached_prompt_tokens"), "cached_prompt_tokens"
            ),
            cached_share=_figure(data, "cached_share", 1.0),
        )


@dataclass(frozen=True)
class DatasetRef:
    """The dataset file an eval ran on, and which of its rows (its summary's ``dataset``)."""

    path: str  # resolved when the eval started
    format: Format
    rows: int  # in the whole file
    selection: Selection

    def to_json(self) -> dict[str, Any]:
        selection = self.selection
        return {
            "path": self.path,
            "format": self.format.value,
            "rows": self.rows,
            "offset": selection.offset,
            "limit": selection.limit,
            "shuffle_seed": selection.shuffle_seed,
            "paper_subset": selection.paper_subset,
            **({} if selection.shard is None else {"shard": str(selection.shard)}),
        }

    @classmethod
    def from_json(cls, data: object) -> DatasetRef:
        if not isinstance(data, dict) or not isinstance(data.get("path"), str):
            raise BadSummary("dataset")
        limit, seed = data.get("limit"), data.get("shuffle_seed")
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
            raise BadSummary("dataset")
        selection = Selection(
            offset=_whole(data.get("offset", 0), "dataset"),
            limit=None if limit is None else _whole(limit, "dataset"),
            shuffle_seed=seed,
            paper_subset=data.get("paper_subset") is True,
            shard=_shard(data.get("shard")),
        )
        form = _enum(Format, data.get("format"), "dataset")
        return cls(data["path"], form, _whole(data.get("rows"), "dataset"), selection)


Methods = tuple[tuple[str, tuple[tuple[str, float | str], ...]], ...]
"""Per-method figures of an eval that ran several methods: (method, ((field, value), ...));
also the form of its ``levels``: (endpoint, ((field, value), ...))."""


@dataclass(frozen=True)
class Summary:
    """What ``summary.json`` holds."""

    status: EvalStatus
    dataset: DatasetRef
    figures: Figures
    created: str
    updated: str
    wall_s: float
    config: EvalConfig
    methods: Methods = ()
    calls_made: int | None = None  # model calls made, each shared block once (several methods)
    levels: Methods = ()  # requests at once per endpoint ("model", "wiki"), where recorded

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "version": SUMMARY_VERSION,
            "status": self.status.value,
            "dataset": self.dataset.to_json(),
            **self.figures.to_json(),
            "created": self.created,
            "updated": self.updated,
            "wall_s": self.wall_s,
            "config": self.config.to_json(),
        }
        if self.calls_made is not None:
            data["calls_made"] = self.calls_made
        if self.methods:
            data["methods"] = {name: dict(cells) for name, cells in self.methods}
        if self.levels:
            data["levels"] = {name: dict(cells) for name, cells in self.levels}
        return data

    @classmethod
    def from_json(cls, data: object) -> Summary:
        """The summary ``data`` holds; BadSummary names the first field that is wrong."""
        try:
            return cls._read(data)
        except fields.FieldError as exc:
            raise BadSummary(exc.name) from None

    @classmethod
    def _read(cls, data: object) -> Summary:
        if not isinstance(data, dict):
            raise BadSummary("not an object")
        dataset = DatasetRef.from_json(data.get("dataset"))
        config = EvalConfig.from_json(data.get("config"))
        if config is None:
            raise BadSummary("config")
        status = _enum(EvalStatus, data.get("status"), "status")
        figures = Figures.from_json(data)
        created, updated, calls = data.get("created"), data.get("updated"), data.get("calls_made")
        if not isinstance(created, str) or not isinstance(updated, str):
            raise BadSummary("created" if not isinstance(created, str) else "updated")
        return cls(
            status=status,
            dataset=dataset,
            figures=figures,
            created=created,
            updated=updated,
            wall_s=_number(data.get("wall_s"), "wall_s"),
            config=config,
            methods=_methods(data.get("methods")),
            calls_made=None if calls is None else _whole(calls, "calls_made"),
            levels=_methods(data.get("levels")),
        )


def _shard(value: object) -> Shard | None:
    """A recorded ``--shard`` (absent: the whole selection)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise BadSummary("dataset")
    try:
        return Shard.parse(value)
    except UsageError:
        raise BadSummary("dataset") from None


def _reported(name: str, value: float | None) -> dict[str, Any]:
    """A figure written only where a server reported it (nothing shows nothing, not 0)."""
    return {} if value is None else {name: value}


def _number(value: object, name: str, limit: float = math.inf) -> float:
    """A number the summary must hold, from 0 to ``limit``."""
    return fields.needed(fields.number(value, name, high=limit), name)


def _figure(data: dict[str, Any], name: str, limit: float = math.inf) -> float | None:
    """A number, or None where the eval has none yet."""
    return fields.number(data.get(name), name, high=limit)


def _whole(value: object, name: str) -> int:
    return fields.needed(fields.whole(value, name), name)


def _enum(kind: type[E], value: object, name: str) -> E:
    """The member of ``kind`` whose value ``value`` is; else BadSummary."""
    try:
        return kind(value if isinstance(value, str) else "")
    except ValueError:
        raise BadSummary(name) from None


def _methods(value: object) -> Methods:
    """A ``methods`` table, ``{name: {field: value}}`` or ``[{"method": name, …}]``; only its
    numbers and texts are kept, anything else is left out; BadSummary if a name is not text."""
    if isinstance(value, list):
        items = [item for item in value if isinstance(item, dict)]
        names = [item.get("method", item.get("name")) for item in items]
        if not all(isinstance(name, str) for name in names):
            raise BadSummary("methods")
        value = dict(zip(names, items, strict=True))
    if not isinstance(value, dict):
        return ()
    return tuple(
        (
            str(name),
            tuple(
                (str(key), item)
                for key, item in fields.items()
                if key not in ("method", "name") and _scalar(item)
            ),
        )
        for name, fields in value.items()
        if isinstance(fields, dict)
    )


def _scalar(value: object) -> bool:
    if isinstance(value, str):
        return True
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
