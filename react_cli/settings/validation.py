"""The values a setting may take, checked once when the settings are resolved.

Ranges, upper bounds of durations and counts, a usable API key, variant and URLs, and a
contact that can go into a header: a typo fails at once with the option's name instead of
breaking a run later.
"""

from __future__ import annotations

import unicodedata
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from react_cli.core.errors import UsageError
from react_cli.core.method import Method
from react_cli.core.records import Api, ProtocolName, ServiceTier
from react_cli.core.wording import quoted
from react_cli.settings.urls import VARIANT_CODE, check_url

OPENAI_HOST = "api.openai.com"

if TYPE_CHECKING:
    from react_cli.settings.settings import Settings

MAX_DURATION_S = 7 * 24 * 3600
"""The longest time limit, backoff or wait (longer ones overflow sleep() and socket timeouts)."""
MAX_COUNTS = {
    "max_steps": 1000,
    "max_parse_errors": 1000,
    "max_repeats": 1000,
    "max_tool_errors": 1000,
    "retries": 100,
    "max_tokens": 10_000_000,
    "max_total_tokens": 1_000_000_000,
    "max_observation_chars": 1_000_000,
    "max_history_tokens": 10_000_000,
    "hybrid_max_steps": 1000,
    "samples": 1000,
    "sample_concurrency": 16,  # the HTTP session's connection pool
    "max_no_progress": 1000,
    "cache_max_mb": 1_000_000,
}
"""The largest meaningful value of each count; beyond it a value is a typo, not a setting."""
MAX_TOOL_FILES = 64
MAX_MCP_SERVERS = 32
MAX_PRICE = 1e9
"""The highest price per million tokens, in any currency (a finite cost for any usage)."""
MAX_PRICE_FACTOR = 100.0
"""The highest price factor of a tier or of the Batch API (a typo beyond it)."""
MAX_BUDGET = 1e12
"""The highest cost budget, in any currency."""
_DURATIONS = (
    "timeout_s",
    "wiki_timeout_s",
    "run_timeout_s",
    "retry_backoff_s",
    "max_retry_after_s",
    "otel_timeout_s",
    "tool_timeout_s",
    "download_timeout_s",
)
_FLAGS = {
    "max_steps": "--max-steps",
    "max_tokens": "--max-tokens",
    "max_total_tokens": "--max-total-tokens",
    "run_timeout_s": "--timeout",
    "tool_timeout_s": "--tool-timeout",
    "samples": "--samples",
    "sample_concurrency": "--sample-concurrency",
    "max_history_tokens": "--max-history-tokens",
    "max_no_progress": "--max-no-progress",
}


def validate(settings: Settings, api_source: str) -> None:
    """UsageError for the first setting no run could use; ``api_source`` names where ``api``
    came from (``--api``, ``environment variable REACT_CLI_API``...)."""
    if settings.api not in set(Api):
        shown = _shown(settings.api)
        raise UsageError(f"{api_source} must be one of {', '.join(Api)}, not {shown}")
    if settings.method not in set(Method):
        shown = _shown(settings.method)
        raise UsageError(f"--method must be one of {', '.join(Method)}, not {shown}")
    _check_protocol(settings)
    checks = [
        (settings.max_steps >= 1, "--max-steps must be at least 1"),
        (
            settings.hybrid_max_steps is None or settings.hybrid_max_steps >= 1,
            "hybrid_max_steps must be at least 1",
        ),
        (settings.samples >= 1, "--samples must be at least 1"),
        (0 <= settings.sample_temperature <= 2, "--sample-temperature must be between 0 and 2"),
        (settings.sample_concurrency >= 1, "--sample-concurrency must be at least 1"),
        (0 <= settings.temperature <= 2, "--temperature must be between 0 and 2"),
        (settings.max_tokens >= 1, "--max-tokens must be ≥ 1"),
        (settings.max_observation_chars >= 50, "max_observation_chars must be at least 50"),
        (settings.max_history_tokens >= 0, "--max-history-tokens must be ≥ 0"),
        (settings.timeout_s > 0, "timeout_s must be positive"),
        (settings.wiki_timeout_s > 0, "wiki_timeout_s must be positive"),
        (
            settings.run_timeout_s is None or settings.run_timeout_s > 0,
            "--timeout must be positive",
        ),
        (settings.retries >= 0, "retries must be ≥ 0"),
        (settings.retry_backoff_s >= 0, "retry_backoff_s must be ≥ 0"),
        (settings.max_retry_after_s >= 0, "max_retry_after_s must be ≥ 0"),
        (settings.otel_timeout_s > 0, "otel_timeout_s must be positive"),
        (settings.tool_timeout_s > 0, "--tool-timeout must be positive"),
        (
            len(settings.tools_from) <= MAX_TOOL_FILES,
            f"at most {MAX_TOOL_FILES} --tools-from files",
        ),
        (len(settings.mcp) <= MAX_MCP_SERVERS, f"at most {MAX_MCP_SERVERS} MCP servers"),
        (settings.max_parse_errors >= 1, "max_parse_errors must be at least 1"),
        (settings.max_tool_errors >= 1, "max_tool_errors must be at least 1"),
        (settings.max_repeats >= 2, "max_repeats must be at least 2"),
        (
            settings.max_total_tokens is None or settings.max_total_tokens >= 1,
            "--max-total-tokens must be ≥ 1",
        ),
        (all(p is None or p >= 0 for p in _prices(settings)), "prices must be ≥ 0"),
        (
            all(p is None or p <= MAX_PRICE for p in _prices(settings)),
            f"prices must be at most {MAX_PRICE:,.0f} per million tokens",
        ),
        (
            all(0 <= f <= MAX_PRICE_FACTOR for f in _factors(settings)),
            f"price factors must be from 0 to {MAX_PRICE_FACTOR:g}",
        ),
        (
            settings.service_tier is None or settings.service_tier in set(ServiceTier),
            f"--service-tier must be one of {', '.join(ServiceTier)}, not "
            f"{_shown(settings.service_tier or '')}",
        ),
        (
            settings.max_no_progress is None or settings.max_no_progress >= 1,
            "--max-no-progress must be at least 1",
        ),
        (settings.cache_max_mb >= 1, "cache_max_mb must be at least 1"),
        (settings.download_timeout_s > 0, "download_timeout_s must be positive"),
    ]
    for ok, message in checks:
        if not ok:
            raise UsageError(message)
    if settings.max_cost is not None:
        check_budget(settings.max_cost, "--max-cost", settings)
    from react_cli.infra.credentials import check_api_key  # only now: --help stays light

    check_api_key(settings.api_key)
    _check_contact(settings.contact)
    if settings.variant is not None and not VARIANT_CODE.fullmatch(settings.variant):
        shown = _shown(settings.variant)
        raise UsageError(f"--variant must look like zh-cn or zh-tw, not {shown}")
    if not settings.base_url.startswith(("http://", "https://")):
        raise UsageError(f"--base-url must be an http(s) URL, not {_shown(settings.base_url)}")
    _check_bounds(settings)
    check_url("--base-url", settings.base_url)
    for replica in settings.replicas:
        if not replica.startswith(("http://", "https://")):
            raise UsageError(f"--base-url must be an http(s) URL, not {_shown(replica)}")
        check_url("--base-url", replica)
    if settings.wiki.split(":", 1)[0].lower() in ("http", "https"):  # zim:PATH is a file
        check_url("--wiki", settings.wiki)
    if settings.data_url is not None:
        check_url("data_url", settings.data_url)


def _prices(settings: Settings) -> tuple[float | None, ...]:
    return settings.price_input, settings.price_output, settings.price_cached_input


def _factors(settings: Settings) -> tuple[float, ...]:
    return (
        settings.price_flex_factor,
        settings.price_priority_factor,
        settings.price_batch_factor,
    )


def check_endpoint(settings: Settings, *, model: bool = True) -> None:
    """What a run needs of the endpoint's settings before anything starts: a model's name
    (``model``; ``react-cli models`` needs none), and a key for OpenAI itself (said at once,
    not after retries fail)."""
    if model and not settings.model:
        raise UsageError(
            "no model configured: pass -m/--model, set REACT_CLI_MODEL, "
            'or put model = "..." in the config file'
        )
    if not settings.api_key and urlsplit(settings.base_url).hostname == OPENAI_HOST:
        raise UsageError("no API key: set OPENAI_API_KEY, or --base-url for a local server")


def check_budget(amount: float, option: str, settings: Settings) -> None:
    """A cost budget (``--max-cost``, ``--max-total-cost``): positive, bounded, and counted
    from prices configured for the model (react-cli knows no price of its own)."""
    if not 0 < amount <= MAX_BUDGET:
        raise UsageError(f"{option} must be more than 0 and at most {MAX_BUDGET:,.0f}")
    if settings.prices() is None:
        model = quoted(settings.model or "MODEL")
        raise UsageError(
            f"{option} counts the cost from the model's prices, and none is configured for "
            f"{model}: add them to the config file under [prices], e.g. "
            f"{model} = {{ input = 0.15, output = 0.60 }} (per million tokens)"
        )


def _check_contact(contact: str | None) -> None:
    """Refuse a contact that cannot go into the User-Agent header: a control character (a
    trailing CR from a CRLF ``.env`` file) would make every Wikipedia request fail. Any other
    character is valid: ``http.user_agent`` percent-encodes what is not ASCII."""
    from react_cli.infra.credentials import check_characters

    check_characters(
        contact,
        lambda char: unicodedata.category(char) != "Cc",
        "the contact (REACT_CLI_CONTACT or contact in the config file)",
        "it goes into the User-Agent header, which holds no control characters",
    )


def _check_protocol(settings: Settings) -> None:
    """The protocol is one there is, on an API that carries it."""
    if settings.protocol not in set(ProtocolName):
        shown = _shown(settings.protocol)
        raise UsageError(f"--protocol must be one of {', '.join(ProtocolName)}, not {shown}")
    if settings.protocol == ProtocolName.TOOLS and settings.api == Api.COMPLETIONS:
        raise UsageError(
            "--protocol tools needs the chat API: /completions takes no tools "
            "(use --api chat, or --protocol text)"
        )
    if settings.protocol == ProtocolName.TOOLS and settings.constrain:
        raise UsageError(
            "--constrain applies to --protocol text (native tool calls are structured already)"
        )


def _shown(value: str) -> str:
    """A refused value, quoted for the message; one that looks like a URL without its user
    information or query (a password typed into the wrong setting is still a password)."""
    from react_cli.infra.credentials import redact_url

    return quoted(redact_url(value) if "://" in value or "@" in value else value)


def _check_bounds(settings: Settings) -> None:
    """Values that pass the type checks but would break a run later are refused now."""
    limits = [(name, float(MAX_DURATION_S)) for name in _DURATIONS]
    for name, limit in [*MAX_COUNTS.items(), *limits]:
        value = getattr(settings, name)
        if value is not None and value > limit:
            unit = f" s ({limit / 86400:g} days)" if name in _DURATIONS else ""
            raise UsageError(f"{_FLAGS.get(name, name)} must be at most {limit:,.0f}{unit}")
