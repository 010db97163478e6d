"""Whether a command sends spans, and where: decided without importing OpenTelemetry.

Spans are off by default and cost nothing then (no OpenTelemetry module is imported). They are
on with ``--otel`` (``REACT_CLI_OTEL``, ``otel = true``), or when one of OpenTelemetry's
endpoint variables is set and react-cli was not told ``--no-otel``. A run that asked for spans
explicitly fails at once (exit 2) when they cannot be sent at all (the ``otel`` extra missing,
an endpoint that is no http(s) URL); a run that only inherited an endpoint variable says so in
one warning and runs without spans.

The spans go to ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` as given, else to
``OTEL_EXPORTER_OTLP_ENDPOINT`` with ``/v1/traces`` joined to its path (a query stays the
query), else to ``http://localhost:4318/v1/traces`` (OTLP over HTTP, as OpenTelemetry's
exporter resolves them; react-cli passes the URL it resolved to the exporter, and shows it
without user information or query). ``OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL=grpc`` sends them
over gRPC instead (the ``otel-grpc`` extra), to the endpoint as given (``http://localhost:4317``
by default); ``http/json``, which OpenTelemetry's Python exporters do not speak, is refused
like a bad endpoint. The exporter reads its headers
(``OTEL_EXPORTER_OTLP_[TRACES_]HEADERS``, which often carry an API key) itself; every value
there, like every secret the run knows (``settings.secrets``), is one the spans never hold.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Mapping
from urllib.parse import urlsplit, urlunsplit

from react_cli.core.errors import UsageError
from react_cli.core.method import Method
from react_cli.core.wording import quoted
from react_cli.infra.credentials import redact_url, url_secrets
from react_cli.loop.protocol import Protocol
from react_cli.settings.environment import CAPTURE_CONTENT_ENV, OTLP_ENDPOINT_ENV
from react_cli.settings.secrets import known_secrets
from react_cli.settings.settings import Settings
from react_cli.telemetry.base import NoSpans, OtlpProtocol, Spans, Warn

TRACES_PATH = "/v1/traces"
DEFAULT_ENDPOINT = "http://localhost:4318" + TRACES_PATH
DEFAULT_GRPC_ENDPOINT = "http://localhost:4317"
EXTRA_MODULES = ("opentelemetry.sdk.trace", "opentelemetry.exporter.otlp.proto.http")
"""What the ``otel`` extra installs (``opentelemetry`` alone is no sign: the MCP SDK brings
its API)."""
GRPC_MODULE = "opentelemetry.exporter.otlp.proto.grpc"
"""What the ``otel-grpc`` extra adds."""
PROTOCOL_ENV = ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")


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
    secrets = [*known_secrets(settings, env), *url_secrets(endpoint)]
    return OtelSpans(
        settings,
        endpoint,
        protocol=OtlpProtocol(otlp_protocol(env)),
        capture=capture_content(settings, env),
        secrets=secrets,
        warn=warn,
    )


def _problem(env: Mapping[str, str]) -> str | None:
    """Why no span could be sent, or None."""
    if not all(_installed(name) for name in EXTRA_MODULES):
        return "spans need the 'otel' extra (pip install 'react-cli[otel]')"
    protocol = otlp_protocol(env)
    if protocol not in tuple(OtlpProtocol):
        name = next(name for name in PROTOCOL_ENV if env.get(name, "").strip())
        return (
            f"{name}={quoted(protocol)} is not supported: "
            f"spans go over {OtlpProtocol.HTTP} or {OtlpProtocol.GRPC}"
        )
    if protocol == OtlpProtocol.GRPC and not _installed(GRPC_MODULE):
        return "spans over gRPC need the 'otel-grpc' extra (pip install 'react-cli[otel-grpc]')"
    endpoint = traces_endpoint(env)
    if not endpoint.lower().startswith(("http://", "https://")):
        return f"the OTLP endpoint must be an http(s) URL, not {redact_url(endpoint)!r}"
    return None


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a package above it is missing
        return False


def otlp_protocol(env: Mapping[str, str]) -> str:
    """The protocol OpenTelemetry's variables name (the traces' own first), in lower case:
    an ``OtlpProtocol`` value, or one react-cli cannot send (``_problem`` says so)."""
    given = (env.get(name, "").strip().lower() for name in PROTOCOL_ENV)
    return next((value for value in given if value), str(OtlpProtocol.HTTP))


def traces_endpoint(env: Mapping[str, str]) -> str:
    """Where the spans go (see the module docstring): ``/v1/traces`` joined to the base URL's
    path, its query (which may hold a token) kept where it is; over gRPC, the URL as given."""
    traces, base = (env.get(name, "").strip() for name in OTLP_ENDPOINT_ENV)
    if traces:
        return traces
    if otlp_protocol(env) == OtlpProtocol.GRPC:
        return base or DEFAULT_GRPC_ENDPOINT
    if not base:
        return DEFAULT_ENDPOINT
    try:
        parts = urlsplit(base)
    except ValueError:  # refused as no http(s) URL by the caller, or by the exporter
        return base.rstrip("/") + TRACES_PATH
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + TRACES_PATH))


def capture_content(settings: Settings, env: Mapping[str, str]) -> bool:
    """Whether the model spans carry the prompts and replies: ``otel_capture_content``, else
    the OpenTelemetry GenAI variable (``true``, or ``SPAN_ONLY`` as newer instrumentations
    spell it; anything else is no)."""
    if settings.otel_capture_content is not None:
        return settings.otel_capture_content
    return env.get(CAPTURE_CONTENT_ENV, "").strip().lower() in _CAPTURING


def protocol_name(protocols: Mapping[Method, Protocol], method: Method) -> str | None:
    """How ``method``'s loop speaks to the model (``text``: the paper's prompt), from its
    protocol's class; None for a method without a loop."""
    loops = [protocols[part] for part in method.parts if part.loop and part in protocols]
    if not loops:
        return None
    return type(loops[0]).__name__.removesuffix("Protocol").lower() or None
