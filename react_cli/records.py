"""The vocabulary every layer shares: stop reasons, usage, call results, the loop's protocols.

Also the cost of tokens and the retry notices. The loop gets its model and tools injected
through the protocols (and the sampling methods a ``Sampler``), so a scripted model or the
recorded model and tools of a replay take the place of the HTTP client and Wikipedia.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Protocol

from react_cli.deadline import Deadline

if sys.version_info >= (3, 11):
    from enum import StrEnum as StrEnum  # re-exported: the 3.10 fallback is defined below
else:  # pragma: no cover - exercised on 3.10 only

    class StrEnum(str, Enum):
        """``enum.StrEnum`` of Python 3.11: members are their values, as text and in JSON."""

        def __str__(self) -> str:
            return str(self.value)


class StopReason(StrEnum):
    """Why a run ended; the values are what traces, eval rows and ``--json`` carry."""

    FINISH = "finish"  # the model gave Finish[answer]
    MAX_STEPS = "max_steps"
    REPEATED_ACTION = "repeated_action"
    PARSE_ERRORS = "parse_errors"
    LLM_ERROR = "llm_error"
    TOKEN_BUDGET = "token_budget"
    TIMEOUT = "timeout"
    TOOL_ERRORS = "tool_errors"
    INTERRUPTED = "interrupted"
    NO_ANSWER = "no_answer"  # Standard, CoT or CoT-SC: no completion gave an answer
    FORKED = "forked"  # the replayed part of a fork (never a finished run's reason)
    ERROR = "error"  # eval: the question crashed before its run could end


class Api(StrEnum):
    """The OpenAI-compatible endpoint a model is called through (``--api``)."""

    CHAT = "chat"  # /chat/completions, the prompt as one user message
    COMPLETIONS = "completions"  # /completions, the prompt as raw text (base models)


CHARS_PER_TOKEN = 4
"""The package's one rule of thumb for text without a tokenizer: about 4 characters a token."""


@dataclass
class Usage:
    """Token counts as reported by the endpoint, or ``estimated`` from the text when it reports
    none (llama.cpp and others when streaming), so a run that used tokens never shows 0."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated: bool = False

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.estimated or other.estimated,
        )

    @classmethod
    def estimate(cls, prompt: str, text: str) -> Usage:
        """An estimate from the characters sent and received (:data:`CHARS_PER_TOKEN`)."""
        return cls(_tokens_in(prompt), _tokens_in(text), estimated=True)

    def to_json(self) -> dict[str, Any]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
            "estimated": self.estimated,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> Usage:
        """Recorded usage (of a call, or summed over a run); anything but a count from 0 to
        :data:`MAX_RECORDED_TOKENS` counts 0 (an edited trace still replays), and traces
        written before ``estimated`` existed hold reported counts."""
        data = data or {}
        return cls(
            _count(data.get("prompt_tokens"), MAX_RECORDED_TOKENS) or 0,
            _count(data.get("completion_tokens"), MAX_RECORDED_TOKENS) or 0,
            data.get("estimated") is True,
        )

    @classmethod
    def reported(cls, data: object) -> Usage | None:
        """The usage a server reported (its ``usage`` object), or None when it reported none
        worth keeping: nothing counted, or a count missing or not a whole number from 0 to
        :data:`MAX_TOKEN_COUNT` (``1e300``, ``-5``, ``"12"``, null). Such a count is not
        trusted for its neighbour either: the call's usage is then estimated, as for a server
        that reports none, and an odd usage field never ends a run."""
        if not isinstance(data, dict):
            return None
        prompt = _count(data.get("prompt_tokens"), MAX_TOKEN_COUNT)
        completion = _count(data.get("completion_tokens"), MAX_TOKEN_COUNT)
        if prompt is None or completion is None or not prompt + completion:
            return None
        return cls(prompt, completion)


MAX_TOKEN_COUNT = 10**10
"""The most tokens a server may report for one call (a thousand samples of ten million tokens
each): a larger count is no count. Bounded counts keep every sum react-cli writes short enough
for its readers (a reported 1e300 was stored as a 301-digit number no reader took back)."""
MAX_RECORDED_TOKENS = 10**15
"""The most tokens a recorded usage may count (a run's, an eval row's): 10^5 calls at most."""


def _tokens_in(text: str) -> int:
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def _count(value: object, limit: int) -> int | None:
    """A token count: a whole number from 0 to ``limit`` (``12.0`` too); else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if not 0 <= value <= limit or (isinstance(value, float) and not value.is_integer()):
        return None
    return int(value)


@dataclass(frozen=True)
class Cost:
    """What a run cost in the user's currency; ``estimated`` when its tokens were."""

    amount: float
    estimated: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"amount": round(self.amount, 6), "estimated": self.estimated}


@dataclass(frozen=True)
class Prices:
    """A model's prices per million tokens, as configured (react-cli ships no price list)."""

    input: float = 0.0
    output: float = 0.0

    def cost(self, usage: Usage) -> Cost:
        amount = usage.prompt_tokens * self.input + usage.completion_tokens * self.output
        return Cost(amount / 1_000_000, usage.estimated)


@dataclass
class Completion:
    """One model call's result.

    ``text`` is the model's output exactly as received, already cut client-side before the
    first invented ``Observation`` line; ``<think>`` blocks are still in it. ``finish_reason``
    is the endpoint's (``"length"``: it stopped at ``max_tokens``); ``retries`` the requests
    the call had to make again.
    """

    text: str
    usage: Usage | None = None  # None: the endpoint reported none (the loop then estimates)
    latency_s: float = 0.0
    retries: int = 0
    finish_reason: str | None = None


@dataclass
class ToolResult:
    """One tool call's result: the observation shown to the model, backend facts worth
    recording (``details``, e.g. ``resolved_title``), and why the call failed, if it did (the
    observation then says so to the model)."""

    observation: str
    details: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    retries: int = 0  # Wikipedia requests made again


@dataclass(frozen=True)
class RetryWait:
    """A wait before a retry, announced as it starts so a slow run never looks hung."""

    seconds: float
    reason: str  # what failed: "HTTP 429", "connection refused", "Wikipedia maxlag", ...
    attempt: int  # this retry's number, from 1
    attempts: int  # the most retries allowed

    def __str__(self) -> str:
        return f"retrying in {self.seconds:.1f} s: {self.reason} ({self.attempt}/{self.attempts})"


RetryObserver = Callable[[RetryWait], None]
"""Told of each retry wait as it starts; passed explicitly to every client that retries."""

TextSink = Callable[[str], None]
"""Receives model text as it streams in (only text that survives the Observation cut)."""


class Model(Protocol):
    """Anything that continues a prompt: the HTTP client, or a scripted model in tests/replay."""

    def complete(
        self, prompt: str, stop: list[str], *, deadline: Deadline, on_text: TextSink | None = None
    ) -> Completion:
        """Continue ``prompt`` before ``deadline``; ``stop`` are stop sequences (the client also
        cuts itself); ``on_text`` sees the text as it streams in."""
        ...


@dataclass
class Sampled:
    """What a sampling call returned: its completions in order, and the requests it took
    (one for all of them when the endpoint answers ``n``)."""

    completions: list[Completion]
    requests: int


class Sampler(Protocol):
    """Anything that draws ``n`` completions of a prompt at a temperature (CoT's greedy call
    is one at temperature 0, CoT-SC's samples many): the HTTP client, or a recorded trace."""

    def sample(
        self, prompt: str, stop: list[str], *, n: int, temperature: float, deadline: Deadline
    ) -> Sampled:
        """``n`` completions of ``prompt`` before ``deadline``, in a stable order."""
        ...


class LanguageModel(Model, Sampler, Protocol):
    """A model endpoint's client: it continues a prompt and it samples."""


class Tools(Protocol):
    """The two stateful Wikipedia tools of the paper (Finish is handled by the loop); a call
    that fails returns a result with ``error`` set rather than raising."""

    def search(self, entity: str, *, deadline: Deadline) -> ToolResult: ...

    def lookup(self, keyword: str, *, deadline: Deadline) -> ToolResult: ...
