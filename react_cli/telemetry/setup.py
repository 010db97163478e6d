"""Whether a command sends spans, and where: decided without importing OpenTelemetry.

Spans are off by default and cost nothing then (no OpenTelemetry module is imported). They are
on with ``--otel`` (``REACT_CLI_OTEL``, ``otel = true``), or when one of OpenTelemetry's
endpoint variables is set and react-cli was not told ``--no-otel``. A run that asked for spans
explicitly fails at once (exit 2) when they cannot be sent at all (the ``otel`` extra missing,
an endpoint that is no http(s) URL); a run that only inherited an endpoint variable says so in
one warning and runs without spans.

The spans go to ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` as given, else to
``OTEL_EXPORTER_OTLP_ENDPOINT`` + ``/v1/traces``, else to ``http://localhost:4318/v1/traces``
(OTLP over HTTP, as OpenTelemetry's exporter resolves them; react-cli passes the URL it printed
to the exporter). The exporter reads its headers (``OTEL_EXPORTER_OTLP_[TRACES_]HEADERS``, which
often carry an API key) itself; every value there is a secret the spans never hold.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Mapping
from urllib.parse import unquote

from react_cli.core.errors import UsageError
from react_cli.core.method import Method
from react_cli.infra.redaction import header_secrets, redact_url, url_secrets
from react_cli.loop.protocol import Protocol
from react_cli.settings.environment import CAPTURE_CONTENT_ENV, OTLP_ENDPOINT_ENV
from react_cli.settings.settings import Settings
from react_cli.telemetry.base import NoSpans, Spans, Warn

DEFAULT_ENDPOINT = "http://localhost:4318/v1/traces"
HEADERS_ENV = ("OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS")
EXTRA_MODULES = ("opentelemetry.sdk.trace", "opentelemetry.exporter.otlp.proto.http")
"""What the ``otel`` extra installs (``opentelemetry`` alone is no sign: the MCP SDK brings
its API)."""
_CAPTURING = frozenset({"1", "true", "yes", "on", "span_only", "span_and_event"})


def open_spans(settings: Settings, warn: Warn, env: Mapping[str, str] = os.environ) -> Spans:
    """The spans ``settings`` and ``env`` ask for (see the module docstring); UsageError when
    they were asked for explicitly and cannot be sent."""
    inherited = next((name for name in OTLP_ENDPOINT_ENV if env.get(name)), None)
    if settings.otel is False or (settings.otel is None and inherited is None):
        return NoSpans()
    problem = _problem(env)
    if problem is not None:
        if settings.otel:
            raise UsageError(f"--otel: {problem}")
        warn(f"{inherited} is set, but {problem}: no spans are sent")
        return NoSpans()
    from react_cli.telemetry.spans import OtelSpans

    endpoint = traces_endpoint(env)
    secrets = [settings.api_key, *url_secrets(settings.base_url), *url_secrets(settings.wiki)]
    secrets += [*url_secrets(endpoint), *exporter_secrets(env)]
    return OtelSpans(
        settings,
        endpoint,
        capture=capture_content(settings, env),
        secrets=secrets,
        warn=warn,
    )


def _problem(env: Mapping[str, str]) -> str | None:
    """Why no span could be sent, or None."""
    if not all(_installed(name) for name in EXTRA_MODULES):
        return "spans need the 'otel' extra (pip install 'react-cli[otel]')"
    endpoint = traces_endpoint(env)
    if not endpoint.lower().startswith(("http://", "https://")):
        return f"the OTLP endpoint must be an http(s) URL, not {redact_url(endpoint)!r}"
    return None


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a package above it is missing
        return False


def traces_endpoint(env: Mapping[str, str]) -> str:
    """Where the spans go (see the module docstring)."""
    traces, base = (env.get(name, "").strip() for name in OTLP_ENDPOINT_ENV)
    if traces:
        return traces
    return base.rstrip("/") + "/v1/traces" if base else DEFAULT_ENDPOINT


def capture_content(settings: Settings, env: Mapping[str, str]) -> bool:
    """Whether the model spans carry the prompts and replies: ``otel_capture_content``, else
    the OpenTelemetry GenAI variable (``true``, or ``SPAN_ONLY`` as newer instrumentations
    spell it; anything else is no)."""
    if settings.otel_capture_content is not None:
        return settings.otel_capture_content
    return env.get(CAPTURE_CONTENT_ENV, "").strip().lower() in _CAPTURING


def exporter_secrets(env: Mapping[str, str]) -> list[str]:
    """Every value of the exporter's header variables (``key=value,...``, values
    percent-encoded), and what an ``Authorization`` among them encodes."""
    headers: dict[str, str] = {}
    for name in HEADERS_ENV:
        for pair in env.get(name, "").split(","):
            key, equals, value = pair.partition("=")
            if equals and value.strip():
                headers[unquote(key).strip()] = unquote(value).strip()
    return [*headers.values(), *header_secrets(headers)]


def protocol_name(protocols: Mapping[Method, Protocol], method: Method) -> str | None:
    """How ``method``'s loop speaks to the model (``text``: the paper's prompt), from its
    protocol's class; None for a method without a loop."""
    loops = [protocols[part] for part in method.parts if part.loop and part in protocols]
    if not loops:
        return None
    return type(loops[0]).__name__.removesuffix("Protocol").lower() or None
