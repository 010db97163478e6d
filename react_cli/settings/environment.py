"""The environment variables react-cli reads; kept apart so ``--help`` lists them cheaply."""

from __future__ import annotations

HOME_ENV = "REACT_CLI_HOME"
DEBUG_ENV = "REACT_CLI_DEBUG"

# Environment variables read for each setting (first one set wins).
ENV_VARS: dict[str, tuple[str, ...]] = {
    "model": ("REACT_CLI_MODEL",),
    "base_url": ("OPENAI_BASE_URL", "OPENAI_API_BASE"),
    "api_key": ("OPENAI_API_KEY",),
    "api": ("REACT_CLI_API",),
    "prompt": ("REACT_CLI_PROMPT",),
    "method": ("REACT_CLI_METHOD",),
    "wiki": ("REACT_CLI_WIKI",),
    "variant": ("REACT_CLI_VARIANT",),
    "contact": ("REACT_CLI_CONTACT",),
    "run_timeout_s": ("REACT_CLI_TIMEOUT",),
    "max_tokens": ("REACT_CLI_MAX_TOKENS",),
    "cache": ("REACT_CLI_CACHE",),
}
