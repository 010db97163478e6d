"""An OTLP/HTTP trace receiver on loopback: what a collector (Phoenix, Langfuse, the OpenTelemetry
Collector) is sent, decoded with ``opentelemetry-proto``.

``OtlpReceiver`` answers ``POST …/v1/traces`` (any path before it, any query) with an empty
``ExportTraceServiceResponse`` and keeps every span it decoded (name, ids, parent,
attributes), every resource's attributes and every request's headers and path. ``hold`` makes
it keep each request unanswered until ``release`` (a collector that hangs, then recovers),
noting how many requests the fake model had received when it got the first one
(``FakeOpenAI.requests``: which of them came while an export hung); ``status`` is the HTTP
status it answers with (401: a collector refusing the key). ``GrpcReceiver`` is the same
collector over OTLP/gRPC (``grpcio``'s server, the service ``opentelemetry-proto`` defines).
"""

from __future__ import annotations

import functools
import gzip
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from fake_openai import POLL_S
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


@dataclass(frozen=True)
class ReceivedSpan:
    name: str
    span_id: str
    parent: str | None
    trace_id: str
    attributes: dict[str, Any]
    status: int  # 0 unset, 1 ok, 2 error
    message: str  # the status's description
    start_ns: int
    end_ns: int

    @property
    def kind(self) -> str:
        return str(self.attributes.get("openinference.span.kind"))


def any_value(value: Any) -> Any:
    which = value.WhichOneof("value")
    if which == "array_value":
        return [any_value(item) for item in value.array_value.values]
    if which == "kvlist_value":
        return {kv.key: any_value(kv.value) for kv in value.kvlist_value.values}
    return getattr(value, which) if which else None


@dataclass
class OtlpReceiver:
    """A collector on ``127.0.0.1``, for a ``with`` block (a module's tests share one)."""

    spans: list[ReceivedSpan] = field(default_factory=list)
    resources: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)  # each request's, with its query
    requests: int = 0
    held: threading.Event | None = None  # set: every request waits until it is set
    first_request: threading.Event = field(default_factory=threading.Event)
    model_requests_then: int | None = None
    model_requests: Callable[[], int] = lambda: 0
    status: int = 200
    _server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_port}"

    def clear(self) -> None:
        self.spans.clear()
        self.resources.clear()
        self.headers.clear()
        self.paths.clear()
        self.requests = 0
        self.status = 200
        self.held = None
        self.first_request = threading.Event()
        self.model_requests_then = None

    def hold(self, model_requests: Callable[[], int]) -> None:
        """Answer no request until :meth:`release`."""
        self.held = threading.Event()
        self.model_requests = model_requests

    def release(self) -> None:
        if self.held is not None:
            self.held.set()

    def __enter__(self) -> OtlpReceiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                receiver._received(self.path, dict(self.headers.items()), body)
                held = receiver.held
                if held is not None and not held.wait(timeout=30):
                    return  # never released: the exporter gave up long ago
                out = ExportTraceServiceResponse().SerializeToString()
                self.send_response(receiver.status)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        serve = functools.partial(self._server.serve_forever, poll_interval=POLL_S)
        threading.Thread(target=serve, daemon=True).start()  # stop() waits a poll at most
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()

    def _received(self, path: str, headers: dict[str, str], body: bytes) -> None:
        self.paths.append(path)
        assert urlsplit(path).path.endswith("/v1/traces"), path
        if headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        self.decoded(ExportTraceServiceRequest.FromString(body), headers)

    def decoded(self, request: ExportTraceServiceRequest, headers: dict[str, str]) -> None:
        """Keep what one export request carried."""
        self.requests += 1
        self.headers.append(headers)
        if not self.first_request.is_set():
            self.model_requests_then = self.model_requests()
            self.first_request.set()
        for resource_spans in request.resource_spans:
            self.resources.append(
                {kv.key: any_value(kv.value) for kv in resource_spans.resource.attributes}
            )
            for scope in resource_spans.scope_spans:
                self.spans += [_span(span) for span in scope.spans]

    def texts(self) -> Iterator[str]:
        """Every text the collector was sent: names, attribute keys and values, resources."""
        for span in self.spans:
            yield span.name
            yield span.message
            for key, value in span.attributes.items():
                yield key
                yield str(value)
        for resource in self.resources:
            yield from (f"{key}={value}" for key, value in resource.items())


def _span(span: Any) -> ReceivedSpan:
    return ReceivedSpan(
        name=span.name,
        span_id=span.span_id.hex(),
        parent=span.parent_span_id.hex() or None,
        trace_id=span.trace_id.hex(),
        attributes={kv.key: any_value(kv.value) for kv in span.attributes},
        status=span.status.code,
        message=span.status.message,
        start_ns=span.start_time_unix_nano,
        end_ns=span.end_time_unix_nano,
    )


class GrpcReceiver(OtlpReceiver):
    """The collector over OTLP/gRPC on ``127.0.0.1`` (``url``: ``http://127.0.0.1:PORT``, as
    OpenTelemetry's gRPC exporter takes an insecure endpoint)."""

    _grpc: Any = None
    _port: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._port}"

    def __enter__(self) -> GrpcReceiver:
        from concurrent.futures import ThreadPoolExecutor

        import grpc
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc as service

        receiver = self

        class Servicer(service.TraceServiceServicer):  # type: ignore[misc]
            def Export(self, request: Any, context: Any) -> ExportTraceServiceResponse:
                metadata = {key: str(value) for key, value in context.invocation_metadata()}
                receiver.decoded(request, metadata)
                return ExportTraceServiceResponse()

        self._grpc = grpc.server(ThreadPoolExecutor(max_workers=2))
        service.add_TraceServiceServicer_to_server(Servicer(), self._grpc)
        self._port = self._grpc.add_insecure_port("127.0.0.1:0")
        self._grpc.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._grpc.stop(grace=None)
