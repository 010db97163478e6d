"""The vocabulary every layer shares: stop reasons, the API, usage and its cost, retry notices.

Plain values only: what a model or a tool is asked and answers lives with its seam
(``llm.base``, ``tools.base``), so this module imports nothing of the package.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

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
    COST_BUDGET = "cost_budget"  # --max-cost: the run cost as much as it may
    NO_PROGRESS = "no_progress"  # --max-no-progress: observations in a row brought nothing new
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


class ProtocolName(StrEnum):
    """How a loop speaks to the model (``--protocol``): the values traces and evals carry."""

    TEXT = "text"  # the paper's Thought/Action/Observation prompt, actions read from the text
    TOOLS = "tools"  # the chat API's native function calling: tools declared, calls returned


class ServiceTier(StrEnum):
    """The processing tier a request asks for (``--service-tier``, sent as ``service_tier``):
    OpenAI's flex is Batch prices on the synchronous API, slower and at times "resource
    unavailable"; priority is faster and dearer."""

    AUTO = "auto"
    DEFAULT = "default"
    FLEX = "flex"
    PRIORITY = "priority"


CHARS_PER_TOKEN = 4
"""The package's one rule of thumb for text without a tokenizer: about 4 characters a token."""

MAX_OBSERVATION_CHARS = 2_000
"""Where every tool's observation is cut by default (``max_observation_chars``): Wikipedia's
first paragraphs and a Lookup's sentence fit whole, a tool's 10 MB never reach the prompt."""


@dataclass
class Usage:
    """Token counts as reported by the endpoint, or ``estimated`` from the text when it reports
    none (llama.cpp and others when streaming), so a run that used tokens never shows 0.

    ``cached_prompt_tokens`` are the prompt tokens the server's prompt cache answered (part of
    ``prompt_tokens``, billed at the cached price): None when no call reported a count, which
    is not 0 (nothing reported shows nothing)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated: bool = False
    cached_prompt_tokens: int | None = None

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.estimated or other.estimated,
            _added(self.cached_prompt_tokens, other.cached_prompt_tokens),
        )

    @property
    def cached_share(self) -> float | None:
        """The share of the prompt tokens the server's cache answered, where one reported it."""
        cached = self.cached_prompt_tokens
        if cached is None or not self.prompt_tokens:
            return None
        return round(min(1.0, cached / self.prompt_tokens), 4)

    @classmethod
    def estimate(cls, prompt: str, text: str) -> Usage:
        """An estimate from the characters sent and received (:data:`CHARS_PER_TOKEN`)."""
        return cls(_tokens_in(prompt), _tokens_in(text), estimated=True)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
            "estimated": self.estimated,
        }
        if self.cached_prompt_tokens is not None:
            data["cached_prompt_tokens"] = self.cached_prompt_tokens
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> Usage:
        """Recorded usage (of a call, or summed over a run); anything but a count from 0 to
        :data:`MAX_RECORDED_TOKENS` counts 0 (an edited trace still replays), and traces
        written before ``estimated`` existed hold reported counts."""
        data = data or {}
        prompt = _count(data.get("prompt_tokens"), MAX_RECORDED_TOKENS) or 0
        cached = _count(data.get("cached_prompt_tokens"), MAX_RECORDED_TOKENS)
        return cls(
            prompt,
            _count(data.get("completion_tokens"), MAX_RECORDED_TOKENS) or 0,
            data.get("estimated") is True,
            None if cached is None else min(cached, prompt),
        )

    @classmethod
    def reported(cls, data: object, cached: int | None = None) -> Usage | None:
        """The usage a server reported (its ``usage`` object), or None when it reported none
        worth keeping: nothing counted, or a count missing or not a whole number from 0 to
        :data:`MAX_TOKEN_COUNT` (``1e300``, ``-5``, ``"12"``, null). Such a count is not
        trusted for its neighbour either: the call's usage is then estimated, as for a server
        that reports none, and an odd usage field never ends a run.

        Its cached prompt tokens are OpenAI's ``prompt_tokens_details.cached_tokens`` (vLLM's
        and llama.cpp's too), else ``cached``: a count the server reported beside its usage
        (llama.cpp's ``timings.cache_n``); a count above the prompt's is no count."""
        if not isinstance(data, dict):
            return None
        prompt = _count(data.get("prompt_tokens"), MAX_TOKEN_COUNT)
        completion = _count(data.get("completion_tokens"), MAX_TOKEN_COUNT)
        if prompt is None or completion is None or not prompt + completion:
            return None
        details = data.get("prompt_tokens_details")
        if isinstance(details, dict) and details.get("cached_tokens") is not None:
            cached = _count(details.get("cached_tokens"), MAX_TOKEN_COUNT)
        if cached is not None and cached > prompt:
            cached = None
        return cls(prompt, completion, cached_prompt_tokens=cached)


MAX_TOKEN_COUNT = 10**10
"""The most tokens a server may report for one call (a thousand samples of ten million tokens
each): a larger count is no count. Bounded counts keep every sum react-cli writes short enough
for its readers (a reported 1e300 was stored as a 301-digit number no reader took back)."""
MAX_RECORDED_TOKENS = 10**15
"""The most tokens a recorded usage may count (a run's, an eval row's): 10^5 calls at most."""


def cached_count(data: object) -> int | None:
    """The prompt tokens a llama.cpp server says it took from its cache, beside the usage of
    an answer (``timings.cache_n``, or its native API's ``tokens_cached``); None: none said."""
    if not isinstance(data, dict):
        return None
    timings = data.get("timings")
    if isinstance(timings, dict) and "cache_n" in timings:
        return _count(timings.get("cache_n"), MAX_TOKEN_COUNT)
    if "tokens_cached" in data:
        return _count(data.get("tokens_cached"), MAX_TOKEN_COUNT)
    return None


def _added(one: int | None, other: int | None) -> int | None:
    """Two counts that may be unreported (None) added: None only when both are."""
    return None if one is None and other is None else (one or 0) + (other or 0)


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
    """What a run cost in the user's currency; ``estimated`` when its tokens were;
    ``cached_unpriced`` when the server reported cached prompt tokens but no cached price is
    configured (they were counted at the input price)."""

    amount: float
    estimated: bool = False
    cached_unpriced: bool = False

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"amount": round(self.amount, 6), "estimated": self.estimated}
        if self.cached_unpriced:
            data["cached_at_input_price"] = True
        return data


@dataclass(frozen=True)
class Prices:
    """A model's prices per million tokens, as configured (react-cli ships no price list):
    ``cached_input`` for prompt tokens the server's cache answered (None: none configured, so
    they cost the input price), and ``factor``, what the run's way of calling multiplies them
    by (the service tier's, the Batch API's)."""

    input: float = 0.0
    output: float = 0.0
    cached_input: float | None = None
    factor: float = 1.0

    def cost(self, usage: Usage) -> Cost:
        cached = min(usage.cached_prompt_tokens or 0, usage.prompt_tokens)
        cached_price = self.input if self.cached_input is None else self.cached_input
        amount = (
            (usage.prompt_tokens - cached) * self.input
            + cached * cached_price
            + usage.completion_tokens * self.output
        )
        unpriced = bool(cached) and self.cached_input is None
        return Cost(amount * self.factor / 1_000_000, usage.estimated, unpriced)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"input": self.input, "output": self.output}
        if self.cached_input is not None:
            data["cached_input"] = self.cached_input
        if self.factor != 1.0:
            data["factor"] = self.factor
        return data


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


@dataclass(frozen=True)
class ToolCall:
    """An action as the loop runs it: the tool's name (as the run's tool set spells it), its
    argument, and the call's id when the endpoint gave one. ``str`` is the paper's spelling.

    A native tool call also keeps the ``arguments`` object the model sent (the argument is read
    from it). In a model's reply (``llm.base.Completion``) a call is as the endpoint sent it:
    ``name`` the function's name and ``argument`` its arguments' JSON text, unread."""

    name: str
    argument: str
    id: str | None = None
    arguments: dict[str, Any] | None = field(default=None, compare=False)

    def __str__(self) -> str:
        return f"{self.name}[{self.argument}]"

    @property
    def key(self) -> tuple[str, str]:
        """What makes two calls the same call: the tool, in any case, and the argument it
        runs with, which both protocols' readers give as its canonical form (the text of a
        one-argument tool; a JSON object's canonical text, keys sorted, for one of several),
        however the model wrote it."""
        return self.name.casefold(), self.argument

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"name": self.name, "argument": self.argument, "id": self.id}
        if self.arguments is not None:
            data["arguments"] = self.arguments
        return data
