"""A fake OpenAI-compatible server on 127.0.0.1 for tests, CLI subprocess tests and benchmarks.

It speaks real HTTP/1.1 over loopback, connections kept alive (``keepalive``), so the client's
whole stack (sessions, pooled connections, urllib3 retries, timeouts, SSE parsing) is exercised.
Each request is answered by the next scripted ``Reply``::

    with FakeOpenAI(scripted("Thought: done\\nAction: Finish[yes]")) as fake:
        client = OpenAIClient(base_url=fake.url, model="m")
        ...
        assert fake.requests[0].json["stop"] == ["\\nObservation"]

Served paths: ``/v1/chat/completions`` and ``/v1/completions``, and ``GET /v1/models`` (the
``models`` names, or the next reply if it is an error); anything else gets a 404 JSON error
without consuming a reply. The request's ``stream`` flag picks SSE or a plain JSON body;
``stop`` is applied like a real server (cut at the earliest stop sequence, which is excluded)
unless ``Reply.ignore_stop``; ``default_max_tokens`` makes it honour ``max_tokens`` like a
real server, with that default when a request sends none. A finished list of replies keeps
answering with its LAST reply, so ``[Reply(status=503)]`` is a server that is down for good.
A request for ``n`` choices (not streamed) gets ``n`` replies as its choices (``n="answer"``),
a 400 naming ``n`` (``"refuse"``, as reasoning models and llama.cpp's server do), or one
choice (``"ignore"``, as llama-cpp-python's server does). ``ECHO`` in a reply's text or body
becomes the request's line and headers, on one line (a server echoing what it was sent).

Native tool calls: a reply's ``tool_calls`` (``{"name", "arguments", "id"}``; ``arguments`` text
or an object, sent as given) come in the message's ``tool_calls``, or streamed as OpenAI streams
them: each call's id and name in its first delta, its arguments in ``chunk_size`` fragments
(``call_deltas="repeat"``: every delta repeats index, id and name, as llama-cpp-python does;
``"no_index"``: no index at all). The prompt tokens count the declared ``tools`` too.
"""

from __future__ import annotations

import contextlib
import functools
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from hostile_server import echo_line
from keepalive import KeepAliveHandler, KeepAliveServer

PATHS = ("/v1/chat/completions", "/v1/completions")
N_MODES = ("answer", "refuse", "ignore")
N_REFUSED = "'n' must be 1: this server answers one choice per request"
MODELS_PATH = "/v1/models"
ECHO = "<<request>>"
STALL_S = 60.0  # how long "stall_stream" hangs; stop() wakes it early
POLL_S = 0.005  # serve_forever poll: how long stop() may wait for the accept loop


@dataclass
class Reply:
    """One scripted answer.

    ``fault`` breaks the exchange on purpose: ``"drop"`` closes the connection without an
    answer; ``"cut_stream"`` ends the SSE body cleanly after half the chunks, with neither a
    finish_reason nor ``[DONE]``; ``"interrupted_stream"`` sends the first chunk then ``[DONE]``
    without a finish_reason (what llama-cpp-python's server does to a stream a concurrent request
    interrupts); ``"stall_stream"`` sends half the chunks then hangs;
    ``"empty_choices"`` answers 200 with ``choices: []``. ``body`` replaces the whole response
    body (malformed JSON, an error object) and is sent with ``status`` as is; a non-200 status
    without ``body`` gets a generic OpenAI-style error object.
    """

    text: str = ""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: str | None = None
    ignore_stop: bool = False
    usage: bool = True
    delay_s: float = 0.0
    fault: str | None = None
    reasoning: str = ""  # sent as reasoning_content (chat only), before the text
    finish_reason: str = "stop"
    tool_calls: list[dict[str, Any]] = field(default_factory=list)  # chat only
    call_deltas: str = "openai"  # how calls stream: "openai", "repeat", "no_index"
    usage_extra: dict[str, Any] = field(default_factory=dict)  # merged into the usage
    # (OpenAI's prompt_tokens_details)
    extra: dict[str, Any] = field(default_factory=dict)  # merged into the answer's top level,
    # and a stream's finishing chunk (llama.cpp's timings, tokens_cached)


@dataclass
class RecordedRequest:
    """A request as the server saw it; header names are lower-cased."""

    path: str
    headers: dict[str, str]
    json: dict[str, Any] | None  # None when the body was not a JSON object


TRANSIENT_FAILURES = {
    "429-retry-after": Reply(status=429, headers={"Retry-After": "0"}),
    "429": Reply(status=429),
    "500": Reply(status=500),
    "502": Reply(status=502),
    "503": Reply(status=503),
    "drop": Reply(fault="drop"),
}
"""Failures a client must retry (rate limits, server errors, a dropped connection), by name."""


def scripted(*texts: str) -> list[Reply]:
    """Plain successful replies, one per model call, in order."""
    return [Reply(text=text) for text in texts]


class FakeOpenAI:
    """The server; a context manager, or call ``start()``/``stop()`` yourself.

    ``replies`` is either a list consumed in order (the last one repeats once it runs out) or a
    function from the request's JSON body to a ``Reply``.
    """

    def __init__(
        self,
        replies: list[Reply] | Callable[[dict[str, Any]], Reply],
        *,
        chunk_size: int = 4,
        default_max_tokens: int | None = None,
        models: tuple[str, ...] = ("test-model",),
        n: str = "answer",
    ) -> None:
        if isinstance(replies, list) and not replies:
            raise ValueError("FakeOpenAI needs at least one Reply")
        self._replies = list(replies) if isinstance(replies, list) else replies
        self._served = 0
        self.chunk_size = chunk_size
        self.default_max_tokens = default_max_tokens
        self.models = models
        if n not in N_MODES:
            raise ValueError(f"n must be one of {N_MODES}")
        self.n = n
        self.requests: list[RecordedRequest] = []
        self.connections = 0  # how many connections clients opened to it
        self.url = ""
        self._lock = threading.Condition()  # notified as each request is recorded
        self._stopping = threading.Event()
        self._server: _Server | None = None

    def start(self) -> FakeOpenAI:
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.fake = self
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        serve = functools.partial(self._server.serve_forever, poll_interval=POLL_S)
        threading.Thread(target=serve, daemon=True).start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def received(self, count: int, *, within_s: float) -> int:
        """How many requests it has recorded, once that is ``count`` or ``within_s`` has passed.

        A client that gives up on an attempt (its read timed out) may return before this server
        has accepted or read that attempt's request, on a busy machine: a test counting the
        attempts waits for them here instead of reading ``requests`` as it stops."""
        with self._lock:
            self._lock.wait_for(lambda: len(self.requests) >= count, timeout=within_s)
            return len(self.requests)

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)
            self._lock.notify_all()

    def _next_reply(self, body: dict[str, Any]) -> Reply:
        if callable(self._replies):
            return self._replies(body)
        with self._lock:
            reply = self._replies[min(self._served, len(self._replies) - 1)]
            self._served += 1
        return reply

    def _sleep(self, seconds: float) -> None:
        self._stopping.wait(seconds)


class _Server(KeepAliveServer):
    request_queue_size = 64  # parallel sampling requests: socketserver's 5 drops connections
    fake: FakeOpenAI


class _Handler(KeepAliveHandler):
    """Serves the requests of one connection."""

    server: _Server

    def setup(self) -> None:
        super().setup()
        with self.server.fake._lock:
            self.server.fake.connections += 1

    def do_POST(self) -> None:
        # The client may hang up early, e.g. once it cut the stream at an invented Observation.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self._answer()

    def do_GET(self) -> None:
        """``/v1/models``: the fake's ``models``, or the next reply when it is an error."""
        fake = self.server.fake
        fake._record(
            RecordedRequest(self.path, {k.lower(): v for k, v in self.headers.items()}, None)
        )
        if self.path.partition("?")[0] != MODELS_PATH:
            self._send(404, _error_body(f"unknown path {self.path}"), {})
            return
        reply = self._echoed(fake._next_reply({}))
        if reply.body is not None or reply.status != 200:
            self._send(
                reply.status, reply.body or _error_body(f"HTTP {reply.status}"), reply.headers
            )
            return
        data = [{"id": name, "object": "model", "owned_by": "me"} for name in fake.models]
        self._send(200, json.dumps({"object": "list", "data": data}), reply.headers)

    def _answer(self) -> None:
        fake = self.server.fake
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = _json_object(raw)
        fake._record(
            RecordedRequest(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
        )
        path = self.path.partition("?")[0]  # a query string (?api-version=...) is allowed
        if path not in PATHS:
            self._send(404, _error_body(f"unknown path {self.path}"), {})
            return
        body = body or {}
        asked = body.get("n") if isinstance(body.get("n"), int) else 1
        if asked > 1 and fake.n == "refuse":
            self._send(400, _error_body(N_REFUSED), {})
            return
        choices = asked if fake.n == "answer" and not body.get("stream") else 1
        reply = self._echoed(fake._next_reply(body))
        if reply.delay_s:
            fake._sleep(reply.delay_s)
        if reply.fault == "drop":
            self.close_connection = True  # hung up without an answer
            return
        if reply.body is not None or reply.status != 200:
            self._send(
                reply.status, reply.body or _error_body(f"HTTP {reply.status}"), reply.headers
            )
            return
        chat = path.endswith("/chat/completions")
        replies = [reply] + [fake._next_reply(body) for _ in range(choices - 1)]
        answers = [_answer(r, body, fake.default_max_tokens) for r in replies]
        written = [text + _calls_text(r) for r, (text, _) in zip(replies, answers, strict=True)]
        usage = {**_usage(body, written), **reply.usage_extra} if reply.usage else None
        if body.get("stream"):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            text, finish = answers[0]
            self._stream(reply, chat, text, finish, usage if include_usage else None)
        else:
            self._send(200, json.dumps(_completion(reply, chat, answers, usage)), reply.headers)

    def _echoed(self, reply: Reply) -> Reply:
        """``reply`` with ``ECHO`` replaced by this request's line and headers."""
        if ECHO not in reply.text + (reply.body or ""):
            return reply
        echo = echo_line(self.command, self.path, self.headers.items())
        body = None if reply.body is None else reply.body.replace(ECHO, echo)
        return replace(reply, text=reply.text.replace(ECHO, echo), body=body)

    def _send(self, status: int, body: str, headers: dict[str, str]) -> None:
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _stream(
        self, reply: Reply, chat: bool, text: str, finish: str, usage: dict[str, Any] | None
    ) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        size = self.server.fake.chunk_size
        pieces = [text[i : i + size] for i in range(0, len(text), size)]
        if reply.fault == "empty_choices":
            self._event({"choices": []})
        elif reply.fault == "interrupted_stream":
            self._event(_chunk(chat, content=pieces[0] if pieces else ""))
        elif reply.fault in ("cut_stream", "stall_stream"):
            for piece in pieces[: max(1, len(pieces) // 2)]:
                self._event(_chunk(chat, content=piece))
            if reply.fault == "stall_stream":
                self.server.fake._sleep(STALL_S)
            self._write_chunk(b"")
            return
        else:
            if chat:
                self._event(_chunk(chat, role="assistant"))
                for i in range(0, len(reply.reasoning), size):
                    self._event(_chunk(chat, reasoning=reply.reasoning[i : i + size]))
            for piece in pieces:
                self._event(_chunk(chat, content=piece))
            if chat:
                for delta in _call_deltas(reply, size):
                    self._event(_chunk(chat, calls=[delta]))
            self._event({**_chunk(chat, finish=_finish(reply, finish)), **reply.extra})
            if usage is not None:
                self._event({"object": "chunk", "choices": [], "usage": usage})
        self._write_chunk(b"data: [DONE]\n\n", last=True)

    def _event(self, payload: dict[str, Any]) -> None:
        self._write_chunk(f"data: {json.dumps(payload)}\n\n".encode())

    def _write_chunk(self, data: bytes, *, last: bool = False) -> None:
        """One HTTP/1.1 chunk; empty ``data`` is the terminating chunk, which ``last`` sends
        with it (as servers send ``[DONE]`` and the end of the body together)."""
        end = b"0\r\n\r\n" if last else b""
        self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n" + end)


def _json_object(raw: bytes) -> dict[str, Any] | None:
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _error_body(message: str) -> str:
    return json.dumps({"error": {"message": message, "type": "invalid_request_error"}})


def _apply_stop(reply: Reply, stop: str | list[str] | None) -> tuple[str, str]:
    """Cut at the earliest stop sequence like a real server; the sequence itself is dropped."""
    stops = [stop] if isinstance(stop, str) else list(stop or [])
    if reply.ignore_stop:
        return reply.text, reply.finish_reason
    hits = [i for i in (reply.text.find(s) for s in stops if s) if i >= 0]
    if not hits:
        return reply.text, reply.finish_reason
    return reply.text[: min(hits)], "stop"


def _apply_max_tokens(
    text: str, finish: str, body: dict[str, Any], default: int | None
) -> tuple[str, str]:
    """With ``default_max_tokens`` (llama-cpp-python's is 16), cut at ``max_tokens`` (or that
    default when the request has none) of 4 characters, as ``finish_reason: "length"``."""
    limit = body.get("max_tokens") or default
    if default is None or not isinstance(limit, int) or len(text) <= 4 * limit:
        return text, finish
    return text[: 4 * limit], "length"


def _answer(reply: Reply, body: dict[str, Any], default: int | None) -> tuple[str, str]:
    """A reply's text and finish reason, cut at ``stop`` and ``max_tokens`` like a server."""
    text, finish = _apply_stop(reply, body.get("stop"))
    return _apply_max_tokens(text, finish, body, default)


def _wire_call(number: int, call: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": call.get("id", f"call_fake_{number}"),
        "type": "function",
        "function": {"name": call.get("name"), "arguments": call.get("arguments", "")},
    }


def _call_deltas(reply: Reply, size: int) -> list[dict[str, Any]]:
    """A reply's calls as stream deltas (see the module docstring)."""
    deltas: list[dict[str, Any]] = []
    for number, call in enumerate(reply.tool_calls):
        wire = _wire_call(number, call)
        head = {"index": number, "id": wire["id"], "type": "function"}
        name = wire["function"]["name"]
        arguments = wire["function"]["arguments"]
        if not isinstance(arguments, str):  # an object: sent whole, in the first delta
            deltas.append({**head, "function": {"name": name, "arguments": arguments}})
            continue
        deltas.append({**head, "function": {"name": name, "arguments": ""}})
        for i in range(0, len(arguments), size):
            piece: dict[str, Any] = {"arguments": arguments[i : i + size]}
            if reply.call_deltas == "repeat":
                deltas.append({**head, "function": {"name": name, **piece}})
            else:
                deltas.append({"index": number, "function": piece})
    if reply.call_deltas == "no_index":
        for delta in deltas:
            delta.pop("index", None)
    return deltas


def _calls_text(reply: Reply) -> str:
    """A reply's calls as the completion tokens count them."""
    return "".join(json.dumps(call, separators=(",", ":")) for call in reply.tool_calls)


def _finish(reply: Reply, finish: str) -> str:
    return "tool_calls" if reply.tool_calls and finish == "stop" else finish


def _usage(body: dict[str, Any], texts: list[str]) -> dict[str, Any]:
    """The prompt counted once (with the tools it declares and the calls in its messages),
    every choice's text: 4 characters a token."""
    messages = body.get("messages") or []
    prompt = "".join(str(m.get("content") or "") for m in messages) or str(body.get("prompt", ""))
    prompt += "".join(json.dumps(m["tool_calls"]) for m in messages if m.get("tool_calls"))
    if body.get("tools"):
        prompt += json.dumps(body["tools"], separators=(",", ":"))
    prompt_tokens, completion_tokens = len(prompt) // 4, sum(len(text) // 4 for text in texts)
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }


def _completion(
    reply: Reply, chat: bool, answers: list[tuple[str, str]], usage: dict[str, Any] | None
) -> dict[str, Any]:
    choices = []
    for index, (text, finish) in enumerate(answers):
        choice: dict[str, Any] = {"index": index, "finish_reason": _finish(reply, finish)}
        if chat:
            choice["message"] = {"role": "assistant", "content": text}
            if reply.reasoning:
                choice["message"]["reasoning_content"] = reply.reasoning
            if reply.tool_calls:
                calls = [_wire_call(n, call) for n, call in enumerate(reply.tool_calls)]
                choice["message"].update(content=text or None, tool_calls=calls)
        else:
            choice["text"] = text
        choices.append(choice)
    result: dict[str, Any] = {
        "id": "fake-1",
        "object": "chat.completion" if chat else "text_completion",
        "created": int(time.time()),
        "choices": [] if reply.fault == "empty_choices" else choices,
    }
    if usage is not None:
        result["usage"] = usage
    return {**result, **reply.extra}


def _chunk(
    chat: bool,
    *,
    content: str | None = None,
    reasoning: str | None = None,
    role: str | None = None,
    finish: str | None = None,
    calls: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    if chat:
        delta: dict[str, Any] = {}
        if role is not None:
            delta.update(role=role, content="")
        if content is not None:
            delta["content"] = content
        if calls is not None:
            delta["tool_calls"] = calls
        if reasoning is not None:
            delta["reasoning_content"] = reasoning
        choice: dict[str, Any] = {"index": 0, "delta": delta, "finish_reason": finish}
    else:
        choice = {"index": 0, "text": content or "", "finish_reason": finish}
    return {"object": "chat.completion.chunk" if chat else "text_completion", "choices": [choice]}
