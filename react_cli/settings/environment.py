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
    "protocol": ("REACT_CLI_PROTOCOL",),
    "prompt": ("REACT_CLI_PROMPT",),
    "method": ("REACT_CLI_METHOD",),
    "wiki": ("REACT_CLI_WIKI",),
    "variant": ("REACT_CLI_VARIANT",),
    "contact": ("REACT_CLI_CONTACT",),
    "run_timeout_s": ("REACT_CLI_TIMEOUT",),
    "max_tokens": ("REACT_CLI_MAX_TOKENS",),
    "max_history_tokens": ("REACT_CLI_MAX_HISTORY_TOKENS",),
    "otel": ("REACT_CLI_OTEL",),
    "otel_capture_content": ("REACT_CLI_OTEL_CAPTURE_CONTENT",),
    "otel_timeout_s": ("REACT_CLI_OTEL_TIMEOUT",),
    "tools_from": ("REACT_CLI_TOOLS_FROM",),  # files separated as in PATH
    "wiki_tools": ("REACT_CLI_WIKI_TOOLS",),
    "tool_timeout_s": ("REACT_CLI_TOOL_TIMEOUT",),
    "cache": ("REACT_CLI_CACHE",),
}

# Variables holding secrets react-cli knows, which no MCP server's environment gets unless
# the config file names them for it (``pass_env``).
SECRET_ENV = (
    "OPENAI_API_KEY",
    "OTEL_EXPORTER_OTLP_HEADERS",
    "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
)

# OpenTelemetry's own variables that react-cli reads (the exporter reads the others itself).
OTLP_ENDPOINT_ENV = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
CAPTURE_CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
