"""How a command's spans leave: OTLP's exporter over HTTP (protobuf) or gRPC, tried until its
first failure, then every batch dropped and counted, with the reason the first one failed.

OpenTelemetry's exporters log a failure and return only ``FAILURE``; react-cli says it once, at
the end, in its own words: the HTTP exporter's requests go through a session that notes the
network's failure or the collector's status (``HTTP 401 Unauthorized``, never the server's
text), the gRPC exporter's logged status code is noted by a handler (``UNAVAILABLE``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from http import HTTPStatus
from typing import Any

import requests
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from react_cli.infra.http import failure_reason
from react_cli.telemetry.base import OtlpProtocol

GRPC_LOGGER = "opentelemetry.exporter.otlp.proto.grpc"


class Exporter(SpanExporter):
    """OTLP's exporter, tried until its first failure; then every batch is dropped at once
    (and counted), so a dead collector costs one attempt, bounded by the exporter's timeout.
    ``why`` says why an export failed (the exporter returns no reason, only FAILURE)."""

    def __init__(self, inner: SpanExporter, why: Callable[[], str | None]) -> None:
        self._inner, self._why = inner, why
        self.failed = False
        self.reason: str | None = None
        self.dropped = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if not self.failed:
            reason = None
            try:
                result = self._inner.export(spans)
            except Exception as exc:  # a bug of the exporter's is a failed export, never a crash
                result, reason = SpanExportResult.FAILURE, type(exc).__name__
            if result is SpanExportResult.SUCCESS:
                return result
            self.failed = True
            self.reason = self._why() or reason
        self.dropped += len(spans)
        return SpanExportResult.FAILURE


class _WatchedSession(requests.Session):
    """The HTTP exporter's session, noting why its first request failed in a few plain words
    (the exporter only logs it): the network's failure, or the collector's HTTP status."""

    reason: str | None = None

    def request(self, *args: Any, **kwargs: Any) -> requests.Response:
        try:
            response = super().request(*args, **kwargs)
        except requests.RequestException as exc:
            self.reason = self.reason or failure_reason(exc) or type(exc).__name__
            raise
        if response.status_code >= 400 and self.reason is None:
            self.reason = _status_text(response.status_code)
        return response


def _status_text(code: int) -> str:
    """``HTTP 401 Unauthorized``: the status's standard phrase, never the server's words."""
    try:
        return f"HTTP {code} {HTTPStatus(code).phrase}"
    except ValueError:
        return f"HTTP {code}"


class GrpcStatus(logging.Handler):
    """Why the gRPC exporter's export failed: the call's status code in what it logs (it
    returns only FAILURE), ``UNAVAILABLE`` for a collector that is down."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.reason: str | None = None

    def emit(self, record: logging.LogRecord) -> None:
        args = record.args if isinstance(record.args, tuple) else ()
        codes = [arg for arg in args if type(arg).__name__ == "StatusCode"]
        if codes and self.reason is None:
            self.reason = f"gRPC status {getattr(codes[0], 'name', codes[0])}"


def exporter(
    protocol: OtlpProtocol, endpoint: str, timeout_s: float
) -> tuple[SpanExporter, Callable[[], str | None]]:
    """The OTLP exporter of ``protocol``, and what says why its export failed."""
    if protocol is OtlpProtocol.GRPC:
        from opentelemetry.exporter.otlp.proto.grpc import trace_exporter as grpc

        status = GrpcStatus()
        logging.getLogger(GRPC_LOGGER).addHandler(status)  # until close()
        return grpc.OTLPSpanExporter(endpoint=endpoint, timeout=timeout_s), lambda: status.reason
    session = _WatchedSession()
    exporter = OTLPSpanExporter(endpoint=endpoint, timeout=timeout_s, session=session)
    return exporter, lambda: session.reason

    def shutdown(self) -> None:
        self._inner.shutdown()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return True


def quiet() -> None:
    """OpenTelemetry logs each failed batch (to stderr, with no logging configured): react-cli
    says it once instead."""
    log = logging.getLogger("opentelemetry")
    if not log.handlers:
        log.addHandler(logging.NullHandler())
    log.propagate = False


def forget_grpc_status() -> None:
    """Take the gRPC exporter's handlers off its logger (the command's spans are closed)."""
    log = logging.getLogger(GRPC_LOGGER)
    for handler in [h for h in log.handlers if isinstance(h, GrpcStatus)]:
        log.removeHandler(handler)
