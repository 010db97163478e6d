"""The settings type alone: everything a run needs to know, once resolved (``resolve``) and
checked (``validation``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from react_cli.core.records import MAX_OBSERVATION_CHARS

if TYPE_CHECKING:
    from react_cli.core.records import Prices
    from react_cli.settings.mcp import McpServer


@dataclass(frozen=True)
class Settings:
    """Everything a run needs to know; built only by :func:`resolve`."""

    model: str | None = None
    base_url: str = "https://api.openai.com/v1"
    replicas: tuple[str, ...] = ()  # more base URLs of the same model (--base-url repeated)
    api_key: str | None = None
    api: str = "chat"
    protocol: str = "text"  # a records.ProtocolName value: text (the paper's) or tools
    prompt: str = "hotpotqa"
    method: str = "react"  # a methods.Method value, checked by validation
    max_steps: int = 8
    hybrid_max_steps: int | None = None  # the hybrids' ReAct limit; None: the task's (7 or 5)
    samples: int = 21  # CoT-SC
    sample_temperature: float = 0.7
    sample_concurrency: int = 4  # single sampling requests at once, for endpoints without n
    temperature: float = 0.0
    max_tokens: int = 256  # per call: local servers default to as few as 16, cutting thoughts
    wiki: str = "https://en.wikipedia.org"
    variant: str | None = None
    contact: str | None = None
    max_observation_chars: int = MAX_OBSERVATION_CHARS  # every tool's observation is cut here
    max_history_tokens: int = 1000  # a follow-up's earlier turns: the newest within this
    max_parse_errors: int = 3
    max_repeats: int = 3
    max_total_tokens: int | None = None
    max_tool_errors: int = 2
    run_timeout_s: float | None = None  # --timeout: the whole run
    force_answer: bool = False
    constrain: bool = False  # text protocol: each reply follows a grammar (llama.cpp, vLLM)
    stream: bool = True
    timeout_s: float = 120.0  # one model request
    wiki_timeout_s: float = 20.0  # one Wikipedia request
    retries: int = 4
    retry_backoff_s: float = 0.5  # backoff base, doubled per retry (jitter up to half of it)
    max_retry_after_s: float = 30.0  # the longest Retry-After we honour
    price_input: float | None = None  # per million prompt tokens (no built-in price list)
    price_output: float | None = None  # per million completion tokens
    price_cached_input: float | None = None  # per million prompt tokens the server's cache
    # answered (None: they cost price_input)
    service_tier: str | None = None  # --service-tier: a records.ServiceTier value; None: not sent
    price_flex_factor: float = 0.5  # what the flex tier multiplies the prices by (Batch prices)
    price_priority_factor: float = 1.0  # the priority tier's multiplier (configure yours)
    price_batch_factor: float = 0.5  # eval --batch: the Batch API's multiplier
    otel: bool | None = None  # spans over OTLP; None: on when an OTLP endpoint variable is set
    otel_capture_content: bool | None = None  # prompts, replies, tool calls in spans; None: as
    # OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT says
    otel_timeout_s: float = 0.5  # the longest an export may take (the last one ends the
    # command): under 0.8 s, OTLP's exporter never waits to retry a refused connection
    tools_from: tuple[str, ...] = ()  # Python files of @react_cli.tool functions
    wiki_tools: bool = True  # Search and Lookup (--no-wiki: off)
    tool_timeout_s: float = 30.0  # one call of a tool that is not Wikipedia's; an MCP
    # server's initialize too
    mcp: tuple[McpServer, ...] = ()  # --mcp and the config file's [mcp] table
    tool_allow: tuple[str, ...] = ()  # --allow-tool and [tools] allow: consent given ahead
    tool_deny: tuple[str, ...] = ()  # --deny-tool and [tools] deny: tools no run has
    max_cost: float | None = None  # --max-cost: a run stops once it cost this (from the prices)
    max_no_progress: int | None = None  # stop after N steps in a row that brought nothing new
    cache: bool = False  # --cache: answers at temperature 0 and Wikipedia's kept in <home>/cache
    cache_max_mb: int = 512  # the cache's size; the least recently used entries go first
    data_url: str | None = None  # a mirror every download comes from (data get, wiki get):
    # each file under its host and path, as `wget -x URL` lays it out
    download_timeout_s: float = 30.0  # one read of a download (data get, wiki get)

    def prices(self, *, batch: bool = False) -> Prices | None:
        """The configured prices, None when there are none (a missing one counts 0), times
        the service tier's factor, or the Batch API's for an eval's ``batch`` calls."""
        from react_cli.core.records import Prices

        if self.price_input is None and self.price_output is None:
            return None
        factor = {"flex": self.price_flex_factor, "priority": self.price_priority_factor}.get(
            self.service_tier or "", 1.0
        )
        if batch:  # a batch line asks for no tier: the Batch API's price alone
            factor = self.price_batch_factor
        return Prices(
            self.price_input or 0.0, self.price_output or 0.0, self.price_cached_input, factor
        )
