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
    "data_url": ("REACT_CLI_DATA_URL",),
}

DATA_MANIFEST_ENV = "REACT_CLI_DATA_MANIFEST"
"""A manifest of datasets of your own instead of the shipped one (a private mirror's files,
the tests' small ones): read by ``eval.catalog``, never needed otherwise."""

# OpenTelemetry's exporter headers (``key=value,...``, often an API key): credentials whatever
# their names say.
OTLP_HEADERS_ENV = (
    "OTEL_EXPORTER_OTLP_HEADERS",
    "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
    "OTEL_EXPORTER_OTLP_METRICS_HEADERS",
    "OTEL_EXPORTER_OTLP_LOGS_HEADERS",
)


def credential_variable(name: str, value: str) -> bool:
    """Whether an environment variable holds a credential, the one rule for all of them: one
    of ``OTLP_HEADERS_ENV``, a name that says so (``GITHUB_TOKEN``, ``AWS_SECRET_ACCESS_KEY``,
    ``DB_PASSWORD``, ``SSH_AUTH_SOCK``: ``infra.credentials.secret_name``), or a URL that carries
    one (``https://user:pass@host``, ``?token=``: ``infra.credentials.secret_url``). No MCP
    server gets such a variable unless its ``pass_env`` names it; the run's redactor masks its
    value wherever it comes back."""
    from react_cli.infra.credentials import secret_name, secret_url  # only now: --help stays light

    return name in OTLP_HEADERS_ENV or secret_name(name) or secret_url(value)


# OpenTelemetry's own variables that react-cli reads (the exporter reads the others itself).
OTLP_ENDPOINT_ENV = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
CAPTURE_CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
