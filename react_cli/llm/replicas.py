"""Replicas of one model (``--base-url`` given more than once): several servers, one model.

Each question goes to the replica with the fewest requests in flight (on the wire or waiting
for a permit; then the fewest questions on it, then the first given) and **stays on it** for
all its calls, so its prompt's prefix stays in that server's cache. Each replica has its own
limiter (``EndpointFacts``: its own adaptive level, what it refused, whether it cuts
streams). A replica whose call fails (it cannot be reached, keeps failing with 5xx, answers
what is no completion) is taken out for :data:`OUT_S`, and the question's call is asked of the
next replica at once, the question staying there; no new question goes to a replica while it
is out, unless every one is, and a question on it moves at its next call.

What a question is, the eval says: :func:`question` marks one on the thread it runs on (an
``ask`` outside one routes once, for the command). Calls are identified by the first
replica's client (the cache's key), whichever replica answers them.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from react_cli.core.errors import LLMConnectionError, LLMResponseError
from react_cli.infra.credentials import redact_url
from react_cli.infra.deadline import Deadline
from react_cli.infra.limiter import LevelStats, Limiter
from react_cli.llm.base import Completion, LanguageModel, ModelRequest, Sampled, TextSink
from react_cli.llm.endpoint import EndpointFacts

T = TypeVar("T")
OUT_S = 30.0
"""How long a replica whose call failed gets no request."""
FAILING = (LLMConnectionError, LLMResponseError)
"""What a replica's failure is (a refused key or model, or a malformed request, is the run's)."""


@dataclass
class Replica:
    """One server of the model: where it is, what its clients share, what it did."""

    number: int  # from 1, in the order given
    url: str
    facts: EndpointFacts
    questions: int = 0  # questions that ended on it
    active: int = 0  # questions on it now
    failures: int = 0  # times it was taken out
    out_until: float = -math.inf

    @property
    def load(self) -> tuple[int, int, int]:
        """What routing compares: requests in flight or waiting, questions on it, its place."""
        limiter = self.facts.limiter
        return limiter.inflight + limiter.waiting, self.active, self.number

    def to_json(self) -> dict[str, Any]:
        """What the summary records of it (its ``levels``' ``replica N``)."""
        return {
            "url": redact_url(self.url),
            "questions": self.questions,
            "failures": self.failures,
            **self.facts.limiter.stats().to_json(),
        }


class ReplicaSet:
    """The replicas of a command's model, shared by every client of it."""

    def __init__(
        self,
        urls: Sequence[str],
        facts: Callable[[], EndpointFacts],
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.replicas = tuple(Replica(n, url, facts()) for n, url in enumerate(urls, 1))
        self._clock = clock
        self._lock = threading.Lock()

    @property
    def limiters(self) -> tuple[Limiter, ...]:
        return tuple(replica.facts.limiter for replica in self.replicas)

    def route(self, avoid: frozenset[int] = frozenset()) -> Replica | None:
        """The replica a question goes on (and is counted on): the least loaded one in, else
        the one back the soonest; None when every one is in ``avoid`` (by number)."""
        with self._lock:
            now = self._clock()
            allowed = [r for r in self.replicas if r.number not in avoid]
            if not allowed:
                return None
            inside = [r for r in allowed if r.out_until <= now]
            chosen = (
                min(inside, key=lambda r: r.load)
                if inside
                else min(allowed, key=lambda r: r.out_until)
            )
            chosen.active += 1
            return chosen

    def leave(self, replica: Replica, served: bool) -> None:
        """A question leaves ``replica``: it ended there (``served``), or moved elsewhere."""
        with self._lock:
            replica.active -= 1
            replica.questions += served

    def move(self, replica: Replica) -> Replica:
        """Where a question on ``replica`` goes on: there, unless it was taken out and another
        is in (the question is counted there then)."""
        with self._lock:
            now = self._clock()
            inside = [r for r in self.replicas if r.out_until <= now]
            if replica.out_until <= now or not inside:
                return replica
            chosen = min(inside, key=lambda r: r.load)
            replica.active -= 1
            chosen.active += 1
            return chosen

    def take_out(self, replica: Replica) -> None:
        """``replica`` failed: no request for it for :data:`OUT_S`."""
        with self._lock:
            replica.failures += 1
            replica.out_until = self._clock() + OUT_S

    def stats(self) -> LevelStats:
        """The replicas' limiters as one: their levels added up."""
        each = [limiter.stats() for limiter in self.limiters]
        return LevelStats(
            any(s.adaptive for s in each),
            sum(s.level for s in each),
            sum(s.lowest for s in each),
            sum(s.highest for s in each),
            sum(s.mean for s in each),
        )

    def to_json(self) -> dict[str, dict[str, Any]]:
        return {f"replica {r.number}": r.to_json() for r in self.replicas}


class _Scope:
    """One question: the replica it is on for each model of the thread's session."""

    def __init__(self) -> None:
        self.pins: dict[int, tuple[ReplicaSet, Replica]] = {}

    def close(self) -> None:
        for replicas, replica in self.pins.values():
            replicas.leave(replica, served=True)
        self.pins.clear()


_local = threading.local()


@contextmanager
def question() -> Iterator[None]:
    """One question on this thread: the replica its calls go to is chosen by its first call
    and kept until the block ends (a model of one server ignores it)."""
    scope = _Scope()
    _local.scope = scope
    try:
        yield
    finally:
        _local.scope = None
        scope.close()


class Identified(LanguageModel, Protocol):
    """A replica's client: it answers, samples and says what identifies a call."""

    @property
    def temperature(self) -> float: ...

    def request_identity(
        self, request: ModelRequest, *, temperature: float | None = None, n: int = 0
    ) -> dict[str, Any]: ...


@dataclass
class ReplicaModel:
    """A ``LanguageModel`` over every replica of the model: a client of each (one worker's),
    each call sent to the replica its question is on."""

    replicas: ReplicaSet
    clients: tuple[Identified, ...]  # in the replicas' order
    _own: _Scope = field(default_factory=_Scope)  # the calls made outside a question

    @property
    def temperature(self) -> float:
        return self.clients[0].temperature

    def request_identity(
        self, request: ModelRequest, *, temperature: float | None = None, n: int = 0
    ) -> dict[str, Any]:
        """The first replica's: a call is the same call whichever replica answers it."""
        return self.clients[0].request_identity(request, temperature=temperature, n=n)

    def complete(
        self, request: ModelRequest, *, deadline: Deadline, on_text: TextSink | None = None
    ) -> Completion:
        return self._on_replica(
            lambda client: client.complete(request, deadline=deadline, on_text=on_text),
            deadline,
        )

    def sample(
        self, request: ModelRequest, *, n: int, temperature: float, deadline: Deadline
    ) -> Sampled:
        return self._on_replica(
            lambda client: client.sample(request, n=n, temperature=temperature, deadline=deadline),
            deadline,
        )

    def _on_replica(self, call: Callable[[Identified], T], deadline: Deadline) -> T:
        """``call`` on the question's replica; when that one fails with time left, it is
        taken out and the question moves to the next one, asked again at once."""
        scope: _Scope = getattr(_local, "scope", None) or self._own
        pinned = scope.pins.get(id(self))
        if pinned is None:
            first = self.replicas.route()
            assert first is not None  # nothing avoided: a replica is always found
            pinned = scope.pins[id(self)] = (self.replicas, first)
        replica = self.replicas.move(pinned[1])  # another one took it out meanwhile
        scope.pins[id(self)] = (self.replicas, replica)
        tried: set[int] = set()
        while True:
            try:
                return call(self.clients[replica.number - 1])
            except FAILING:
                left = deadline.left()
                tried.add(replica.number)
                if left is not None and left <= 0:
                    raise
                self.replicas.take_out(replica)
                moved = self.replicas.route(frozenset(tried))
                if moved is None:
                    raise
                self.replicas.leave(replica, served=False)
                scope.pins[id(self)] = (self.replicas, moved)
                replica = moved
