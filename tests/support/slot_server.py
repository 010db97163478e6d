"""An OpenAI-compatible server that serves K requests at once and queues the rest, as local
servers do (llama.cpp ``--parallel K``, Ollama, vLLM at its batch size), for the concurrency
bench and tests.

Each request waits its turn (first come, first served) for one of ``slots``, then takes
``prompt_s`` to read its prompt and ``token_s`` per output token (4 characters), streamed in
chunks of ``chunk_tokens`` tokens or sent whole. With ``cut`` it behaves as llama-cpp-python's
server (``interrupt_requests``, its default): a request that arrives while a stream runs ends
that stream at once with ``data: [DONE]`` and no finish reason, and the chunked body is broken
off without its terminating chunk; a whole (unstreamed) answer is never cut, the newcomer waits
for it. ``hold_s`` makes a cutting server hold every stream after its first chunk until another
request arrives (or ``hold_s`` passes): a cut that happens whatever the machine's speed.

The text of each answer comes from ``reply(body)`` (e.g. ``eval_fakes.PerQuestion``).
"""

from __future__ import annotations

import contextlib
import functools
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from fake_openai import Reply

POLL_S = 0.005


class SlotServer:
    """The server; a context manager. ``cuts`` counts the streams it cut, ``most`` the most
    requests it served at once, ``requests`` the bodies it received."""

    def __init__(
        self,
        reply: Callable[[dict[str, Any]], Reply],
        *,
        slots: int = 1,
        cut: bool = False,
        prompt_s: float = 0.0,
        token_s: float = 0.0,
        chunk_tokens: int = 4,
        hold_s: float = 0.0,
    ) -> None:
        self.reply, self.slots, self.cut = reply, slots, cut
        self.prompt_s, self.token_s, self.chunk_tokens, self.hold_s = (
            prompt_s,
            token_s,
            chunk_tokens,
            hold_s,
        )
        self.cuts = self.most = 0
        self.requests: list[dict[str, Any]] = []
        self.url = ""
        self._cond = threading.Condition()
        self._waiting: deque[int] = deque()
        self._busy = 0
        self._arrived = 0  # requests ever received: a stream is cut by one after it
        self._server: ThreadingHTTPServer | None = None

    def __enter__(self) -> SlotServer:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        server.daemon_threads = True
        server.request_queue_size = 256
        server.fake = self  # type: ignore[attr-defined]
        self._server = server
        self.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        serve = functools.partial(server.serve_forever, poll_interval=POLL_S)
        threading.Thread(target=serve, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def arrive(self, body: dict[str, Any]) -> int:
        """A request came: its number; it waits for a slot."""
        with self._cond:
            self.requests.append(body)
            self._arrived += 1
            number = self._arrived
            self._waiting.append(number)
            self._cond.notify_all()  # a held stream is cut by it
            while self._waiting[0] != number or self._busy >= self.slots:
                self._cond.wait()
            self._waiting.popleft()
            self._busy += 1
            self.most = max(self.most, self._busy)
            self._cond.notify_all()
            return number

    def leave(self) -> None:
        with self._cond:
            self._busy -= 1
            self._cond.notify_all()

    def cut_now(self, streamed: bool) -> bool:
        """Whether a running answer is cut now: a stream, on a cutting server, with another
        request waiting."""
        if not (self.cut and streamed):
            return False
        with self._cond:
            return bool(self._waiting)

    def hold(self) -> None:
        """Hold a stream until another request waits (or ``hold_s`` passed)."""
        deadline = time.monotonic() + self.hold_s
        with self._cond:
            while not self._waiting and time.monotonic() < deadline:
                self._cond.wait(deadline - time.monotonic())

    def count_cut(self) -> None:
        with self._cond:
            self.cuts += 1


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""

    def do_GET(self) -> None:
        data = json.dumps({"object": "list", "data": [{"id": "slot-model"}]}).encode()
        self._headers(200, "application/json", len(data))
        self.wfile.write(data)

    def do_POST(self) -> None:
        fake: SlotServer = self.server.fake  # type: ignore[attr-defined]
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = json.loads(raw)
        self.close_connection = True
        fake.arrive(body)
        try:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self._answer(fake, body)
        finally:
            fake.leave()

    def _answer(self, fake: SlotServer, body: dict[str, Any]) -> None:
        chat = self.path.endswith("/chat/completions")
        text = fake.reply(body).text
        streamed = bool(body.get("stream"))
        tokens = max(1, len(text) // 4)
        time.sleep(fake.prompt_s)
        if not streamed:
            time.sleep(fake.token_s * tokens)
            choice: dict[str, Any] = {"index": 0, "finish_reason": "stop"}
            if chat:
                choice["message"] = {"role": "assistant", "content": text}
            else:
                choice["text"] = text
            usage = {
                "prompt_tokens": 100,
                "completion_tokens": tokens,
                "total_tokens": 100 + tokens,
            }
            data = json.dumps({"choices": [choice], "usage": usage}).encode()
            self._headers(200, "application/json", len(data))
            self.wfile.write(data)
            return
        self._headers(200, "text/event-stream", None)
        size = 4 * fake.chunk_tokens
        pieces = [text[i : i + size] for i in range(0, len(text), size)]
        for number, piece in enumerate(pieces):
            if number == 1 and fake.hold_s:
                fake.hold()
            if fake.cut_now(streamed):
                fake.count_cut()
                self._chunk(b"data: [DONE]\n\n")  # no finish_reason, no terminating chunk
                return
            self._event(chat, piece, None)
            time.sleep(fake.token_s * len(piece) / 4)
        self._event(chat, "", "stop")
        self._chunk(b"data: [DONE]\n\n")
        self._chunk(b"")

    def _headers(self, status: int, kind: str, length: int | None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        if length is None:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(length))
        self.send_header("Connection", "close")
        self.end_headers()

    def _event(self, chat: bool, piece: str, finish: str | None) -> None:
        if chat:
            choice: dict[str, Any] = {"index": 0, "delta": {"content": piece}}
        else:
            choice = {"index": 0, "text": piece}
        choice["finish_reason"] = finish
        self._chunk(f"data: {json.dumps({'choices': [choice]})}\n\n".encode())

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")
