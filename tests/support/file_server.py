"""A loopback file server for downloads, with the faults real ones have: a file cut short, one
with other bytes, a slow one, 404, a redirect, a connection dropped mid-file, Range ignored.

It serves ``files`` (path -> bytes) with HTTP Range (206 and ``Content-Range``, 416 past the
end); ``faults`` changes how a path is served, for the first ``times`` requests of it (then it
is served well), and every request is recorded (path and headers)::

    with FileServer({"/d/a.json": data}) as server:
        server.faults["/d/a.json"] = Fault(drop_after=1000)  # the first request breaks off
        ...  # download server.url + "/d/a.json"
"""

from __future__ import annotations

import re
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

_RANGE = re.compile(r"bytes=(\d+)-")


@dataclass
class Fault:
    """How one path is served while ``times`` lasts: ``status`` instead of the file (with
    ``location``: a redirect), ``body`` instead of its bytes, ``ignore_range`` (always the
    whole file, 200), the connection closed after ``drop_after`` bytes of the body (its
    ``Content-Length`` the whole), ``delay_s`` before each ``chunk`` of the body."""

    status: int = 200
    location: str | None = None
    body: bytes | None = None
    ignore_range: bool = False
    drop_after: int | None = None
    delay_s: float = 0.0
    chunk: int = 1 << 16
    times: int = 1_000_000


@dataclass
class Request:
    path: str
    headers: dict[str, str]


@dataclass
class FileServer:
    """The server on 127.0.0.1, a context manager; ``url`` is its root."""

    files: dict[str, bytes]
    faults: dict[str, Fault] = field(default_factory=dict)
    requests: list[Request] = field(default_factory=list)

    def __post_init__(self) -> None:
        state = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # http.server's name
                state._answer(self)

            def log_message(self, *args: object) -> None:  # quiet
                pass

        class Server(ThreadingHTTPServer):
            def handle_error(self, request: object, client_address: object) -> None:
                pass  # a client that went away mid-answer (a download refused): quiet

        self._server = Server(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._lock = threading.Lock()

    def __enter__(self) -> FileServer:
        threading.Thread(target=self._server.serve_forever, args=(0.01,), daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def paths(self) -> list[str]:
        return [request.path for request in self.requests]

    def _fault(self, path: str) -> Fault:
        with self._lock:
            fault = self.faults.get(path)
            if fault is None or fault.times <= 0:
                return Fault()
            fault.times -= 1
            return fault

    def _answer(self, handler: BaseHTTPRequestHandler) -> None:
        path = handler.path.split("?", 1)[0]
        headers = {name.lower(): value for name, value in handler.headers.items()}
        with self._lock:
            self.requests.append(Request(handler.path, headers))
        fault = self._fault(path)
        if fault.location is not None or fault.status != 200 or path not in self.files:
            status = fault.status if fault.status != 200 else 404
            if fault.location is not None:
                status = fault.status if fault.status != 200 else 302
            handler.send_response(status)
            if fault.location is not None:
                handler.send_header("Location", fault.location)
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return
        data = fault.body if fault.body is not None else self.files[path]
        found = _RANGE.fullmatch(headers.get("range", ""))
        start = int(found.group(1)) if found and not fault.ignore_range else 0
        if start and start >= len(data):
            handler.send_response(416)
            handler.send_header("Content-Range", f"bytes */{len(data)}")
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return
        handler.send_response(206 if start else 200)
        if start:
            handler.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        handler.send_header("Content-Length", str(len(data) - start))
        handler.send_header("Accept-Ranges", "bytes")
        handler.end_headers()
        body = data[start:]
        if fault.drop_after is not None:
            body = body[: fault.drop_after]
        try:
            for at in range(0, len(body), fault.chunk):
                if fault.delay_s:
                    time.sleep(fault.delay_s)
                handler.wfile.write(body[at : at + fault.chunk])
                handler.wfile.flush()
        except OSError:  # the client went away
            return
        if fault.drop_after is not None:  # the connection dropped mid-file
            handler.close_connection = True
            handler.connection.shutdown(socket.SHUT_RDWR)
