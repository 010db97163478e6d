"""A model endpoint's facts (``EndpointFacts``), which every client of a run shares.

Apart from the client and the sampler that consult them, so what shows them (an eval's
progress bar and summary: the limiter's level, whether the endpoint still streams) loads
neither.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from react_cli.infra.limiter import Limiter

UNLIMITED = 1 << 20
"""The level of a client's limiter when no run gave it one (a command that calls once)."""


@dataclass
class EndpointFacts:
    """What a run knows and learnt about its endpoint; shared by every client of the run (an
    eval's workers, CoT-SC's samplers): whether it answers ``n``, whether it cuts a stream
    when another request arrives (llama-cpp-python's server does: ``cuts_streams``, learnt
    once, after which nothing is streamed to it), the limiter every request to it holds a
    permit of, and what it would not take and is no longer sent (``refused``: ``grammar``,
    a forced ``tool_choice`` (``required``, ``function``), streamed tool requests)."""

    n_supported: bool | None = None  # None: not tried yet
    refused: set[str] = field(default_factory=set)
    limiter: Limiter = field(default_factory=lambda: Limiter(UNLIMITED))
    cuts_streams: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def refuse(self, what: str) -> bool:
        """Remember that the endpoint refuses ``what``; True for the client that learnt it
        first (which says so, once for all of them)."""
        with self._lock:
            new = what not in self.refused
            self.refused.add(what)
        return new

    def learn_cuts_streams(self) -> bool:
        """Remember that the endpoint cuts streams; True the first time only."""
        with self._lock:
            first, self.cuts_streams = not self.cuts_streams, True
        return first
