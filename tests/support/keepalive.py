"""The loopback HTTP server the fakes share: HTTP/1.1 connections kept alive, as real servers
keep them, so a run's requests reuse its client's connections instead of paying a TCP
connection and a handler thread for each one (what a test run of thousands of requests spent
most of its HTTP time on).

A connection's handler thread lives as long as the client keeps the connection; ``server_close``
shuts every connection still open, so no handler outlives its fake (and ``stop`` never waits
for a client that keeps its pool open).
"""

from __future__ import annotations

import contextlib
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class KeepAliveServer(ThreadingHTTPServer):
    """A threaded server whose open connections are shut when it closes."""

    daemon_threads = True
    block_on_close = False

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(address, handler)
        self._open_lock = threading.Lock()
        self._open: set[socket.socket] = set()

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._open_lock:
            self._open.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._open_lock:
            self._open.discard(request)
        super().shutdown_request(request)

    def server_close(self) -> None:
        super().server_close()
        with self._open_lock:
            still_open, self._open = list(self._open), set()
        for sock in still_open:  # a handler waiting for the next request reads EOF and ends
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


class KeepAliveHandler(BaseHTTPRequestHandler):
    """HTTP/1.1 (every answer carries its length or is chunked), each write sent at once
    (no Nagle delay between an answer's headers and its body on a kept connection)."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def handle(self) -> None:
        with contextlib.suppress(ConnectionResetError, BrokenPipeError):
            super().handle()  # a client may hang up at any point, between requests too

    def log_message(self, format: str, *args: Any) -> None:
        """Keep test output clean."""
