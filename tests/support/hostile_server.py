"""A loopback HTTP server that answers every request with scripted raw bytes, as slowly as asked.

The fakes in ``fake_openai.py`` and ``fake_mediawiki.py`` speak well-formed HTTP; this one sends
whatever a hostile or broken server might: a status line and headers a byte at a time, a body
that never ends (keep-alives forever, one byte per interval), a gzip bomb. It records every
request, so a test can check what the client sent::

    answer = Answer(head=sse_head(), body=forever(b": ping\\n\\n"), interval_s=0.05)
    with HostileServer(answer) as server:
        ...  # point the client at server.url
"""

from __future__ import annotations

import itertools
import socket
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

POLL_S = 0.005  # the accept loop's timeout: how long leaving the server may wait for it


@dataclass
class Answer:
    """What to send: ``head`` (status line and headers) then ``body``, one piece per write,
    ``interval_s`` apart; ``trickle_head`` sends the head a byte at a time too."""

    head: bytes
    body: Iterable[bytes] = ()
    interval_s: float = 0.0
    trickle_head: bool = False


@dataclass
class Received:
    """One request as received: its head (request line and headers) and body."""

    head: bytes
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


def echo_line(method: str, path: str, headers: Iterable[tuple[str, str]]) -> str:
    """A request as a server echoing it writes it, on one line: its credentials first (so
    that a message cut short still holds them), then its line and its other headers."""
    lines = [f"{name}: {value}" for name, value in headers]
    lines.sort(key=lambda line: not line.lower().startswith("authorization:"))
    return " | ".join([*lines[:1], f"{method} {path}", *lines[1:]])


def head(status: str = "200 OK", **headers: str) -> bytes:
    """A response head; header names are given with ``_`` for ``-`` (``Content_Type=...``)."""
    lines = [f"HTTP/1.1 {status}", *(f"{k.replace('_', '-')}: {v}" for k, v in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def chunked(pieces: Iterable[bytes]) -> Iterator[bytes]:
    """``pieces`` framed as HTTP/1.1 chunks (an infinite iterable never sends the last one)."""
    for piece in pieces:
        if piece:
            yield b"%X\r\n%s\r\n" % (len(piece), piece)
    yield b"0\r\n\r\n"


def forever(piece: bytes) -> Iterator[bytes]:
    return itertools.repeat(piece)


def bytewise(data: bytes) -> Iterator[bytes]:
    """``data`` one byte per piece."""
    return (data[i : i + 1] for i in range(len(data)))


NOTHING = Answer(b"")  # what a server that only ``respond``s is given as its answers


class HostileServer:
    """A threaded server on 127.0.0.1; ``answers`` is one Answer for every request, or a
    function from the number of the request (0, 1, ...) to its Answer; ``respond``, if given,
    makes each Answer from the request itself (a server echoing what it was sent)."""

    def __init__(
        self,
        answers: Answer | Callable[[int], Answer] = NOTHING,
        *,
        respond: Callable[[Received], Answer] | None = None,
    ) -> None:
        self._answers = answers
        self._respond = respond
        self.requests: list[Received] = []
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(POLL_S)
        self.port = self._listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self) -> HostileServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self._listener.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            received = _read_request(conn)
            if received is None:
                return
            with self._lock:
                number = len(self.requests)
                self.requests.append(received)
            if self._respond is not None:
                answer = self._respond(received)
            elif callable(self._answers):
                answer = self._answers(number)
            else:
                answer = self._answers
            pieces = bytewise(answer.head) if answer.trickle_head else [answer.head]
            try:
                for piece in itertools.chain(pieces, answer.body):
                    if self._stop.wait(answer.interval_s):
                        return
                    conn.sendall(piece)
            except OSError:
                return  # the client hung up (what a time limit does)


def _read_request(conn: socket.socket) -> Received | None:
    """The request's head and its Content-Length body (None if the client hung up)."""
    conn.settimeout(5)
    data = b""
    try:
        while b"\r\n\r\n" not in data:
            more = conn.recv(65536)
            if not more:
                return None
            data += more
        head_bytes, _, body = data.partition(b"\r\n\r\n")
        headers = {}
        for line in head_bytes.decode("latin-1").split("\r\n")[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0"))
        while len(body) < length:
            more = conn.recv(65536)
            if not more:
                break
            body += more
    except OSError:
        return None
    return Received(head_bytes, body, headers)
