"""A scripted OpenAI Batch API on 127.0.0.1: ``/v1/files`` and ``/v1/batches`` over real HTTP.

Each line of an uploaded batch is answered by ``replies`` (a ``FakeOpenAI`` reply function:
the request body to a ``Reply``), as ``FakeOpenAI`` answers a live call (the same
``stop``, usage and tool calls), so a batch eval and a live eval of one script give the same
answers. A batch goes ``validating`` → ``in_progress`` → ``finalizing`` → ``completed``, one
step a poll (``polls``: how many polls it stays in progress). Faults, each for the next batches
created: ``expire`` (the batch ends ``expired``: the first ``expire_keep`` lines answered, the
rest in the error file as ``batch_expired``), ``fail_batch`` (validation fails: no file),
``fail_line`` (a predicate on a custom_id: that line is an error line, HTTP 500). Everything
is counted: uploads, batches, polls, deletions, lines; ``live`` counts chat calls, if any.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from fake_openai import Reply, _answer, _calls_text, _completion, _usage

Replies = Callable[[dict[str, Any]], Reply]
JUNK = (
    'not json\n[1, 2]\n{"custom_id": "q99999-step-1-s0", "response": {"status_code": 200}}\n'
    '{"custom_id": {"x": 1}}\n\n' + "{" * 10_000 + "\n"
)
"""Lines of an output file that answer nothing: not JSON, not an object, no such line."""


@dataclass
class ScriptedBatch:
    id: str
    input_file: str
    lines: list[dict[str, Any]]
    polls_left: int
    status: str = "validating"
    fault: str | None = None
    expire_keep: int = 0
    output_file: str | None = None
    error_file: str | None = None
    counts: dict[str, int] = field(default_factory=dict)


class BatchServer:
    """The server; a context manager. ``url`` ends in ``/v1``."""

    def __init__(self, replies: Replies, *, polls: int = 1) -> None:
        self.replies, self.polls = replies, polls
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, ScriptedBatch] = {}
        self.uploads = 0
        self.created = 0
        self.gets = 0
        self.deleted: list[str] = []
        self.lines = 0
        self.auth: set[str] = set()
        self.faults: list[str] = []  # consumed one per batch created: "expire", "fail_batch"
        self.expire_keep = 0
        self.hold_from: int | None = None  # batches from this number on stay in progress
        self.junk = False  # output files hold lines that are no answer too
        self.empty: set[str] = set()  # custom_ids answered once with no choices, then rightly
        self.fail_line: Callable[[str], bool] = lambda custom_id: False
        self.ids = itertools.count(1)
        self.lock = threading.Lock()
        self.url = ""
        self._server: ThreadingHTTPServer | None = None

    def __enter__(self) -> BatchServer:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        server.batch = self  # type: ignore[attr-defined]
        self._server = server
        self.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        threading.Thread(
            target=functools.partial(server.serve_forever, poll_interval=0.005), daemon=True
        ).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def new_id(self, prefix: str) -> str:
        return f"{prefix}-{next(self.ids)}"

    def advance(self, batch: ScriptedBatch) -> None:
        """One poll's worth of progress; the batch's files once it ends."""
        if batch.status == "validating":
            if batch.fault == "fail_batch":
                batch.status = "failed"
                return
            batch.status = "in_progress"
        elif batch.status == "in_progress":
            if batch.polls_left > 0:
                batch.polls_left -= 1
                return
            batch.status = "finalizing"
        elif batch.status == "finalizing":
            self._finish(batch)

    def _finish(self, batch: ScriptedBatch) -> None:
        outputs, errors = [], []
        for number, line in enumerate(batch.lines):
            custom_id = line["custom_id"]
            if batch.fault == "expire" and number >= batch.expire_keep:
                errors.append(
                    {
                        "id": self.new_id("req"),
                        "custom_id": custom_id,
                        "response": None,
                        "error": {"code": "batch_expired", "message": "This request expired"},
                    }
                )
            elif self.fail_line(custom_id):
                body = {"error": {"message": "The server had an error", "type": "server_error"}}
                errors.append(
                    {
                        "id": self.new_id("req"),
                        "custom_id": custom_id,
                        "response": {"status_code": 500, "body": body},
                        "error": None,
                    }
                )
            else:
                body = {"choices": []} if custom_id in self.empty else self._answer(line)
                self.empty.discard(custom_id)
                outputs.append(
                    {
                        "id": self.new_id("req"),
                        "custom_id": custom_id,
                        "response": {"status_code": 200, "body": body},
                        "error": None,
                    }
                )
        for name, records in (("output_file", outputs), ("error_file", errors)):
            if records:
                file_id = self.new_id("file")
                text = "".join(json.dumps(r) + "\n" for r in records)
                if self.junk:
                    text = JUNK + text + JUNK
                self.files[file_id] = text.encode()
                setattr(batch, name, file_id)
        batch.counts = {"total": len(batch.lines), "completed": len(outputs), "failed": len(errors)}
        batch.status = "expired" if batch.fault == "expire" else "completed"

    def _answer(self, line: dict[str, Any]) -> dict[str, Any]:
        body = line["body"]
        reply = self.replies(body)
        self.lines += 1
        text, finish = _answer(reply, body, None)
        usage = {**_usage(body, [text + _calls_text(reply)]), **reply.usage_extra}
        chat = line["url"].endswith("/chat/completions")
        return _completion(reply, chat, [(text, finish)], usage)

    def batch_json(self, batch: ScriptedBatch) -> dict[str, Any]:
        return {
            "id": batch.id,
            "object": "batch",
            "endpoint": "/v1/chat/completions",
            "input_file_id": batch.input_file,
            "completion_window": "24h",
            "status": batch.status,
            "output_file_id": batch.output_file,
            "error_file_id": batch.error_file,
            "errors": {"object": "list", "data": [{"code": "invalid", "message": "bad file"}]}
            if batch.status == "failed"
            else None,
            "request_counts": batch.counts
            or {"total": len(batch.lines), "completed": 0, "failed": 0},
        }


class _Handler(BaseHTTPRequestHandler):
    server: ThreadingHTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    @property
    def batch(self) -> BatchServer:
        return self.server.batch  # type: ignore[attr-defined, no-any-return]

    def _send(self, status: int, data: Any) -> None:
        raw = data if isinstance(data, bytes) else json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(raw)

    def _body(self) -> bytes:
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def do_POST(self) -> None:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self._post()

    def _post(self) -> None:
        server, raw = self.batch, self._body()
        self.close_connection = True
        with server.lock:
            server.auth.add(self.headers.get("Authorization", ""))
            if self.path == "/v1/files":
                content = _multipart_file(raw, self.headers.get("Content-Type", ""))
                file_id = server.new_id("file")
                server.files[file_id] = content
                server.uploads += 1
                self._send(200, {"id": file_id, "object": "file", "purpose": "batch"})
            elif self.path == "/v1/batches":
                request = json.loads(raw)
                content = server.files[request["input_file_id"]].decode()
                lines = [json.loads(line) for line in content.splitlines() if line]
                fault = server.faults.pop(0) if server.faults else None
                held = server.hold_from is not None and server.created + 1 >= server.hold_from
                batch = ScriptedBatch(
                    server.new_id("batch"),
                    request["input_file_id"],
                    lines,
                    10**9 if held else server.polls,
                    fault=fault,
                    expire_keep=server.expire_keep,
                )
                server.batches[batch.id] = batch
                server.created += 1
                self._send(200, server.batch_json(batch))
            else:
                self._send(404, {"error": {"message": f"unknown path {self.path}"}})

    def do_GET(self) -> None:
        server = self.batch
        self.close_connection = True
        with server.lock:
            parts = self.path.strip("/").split("/")
            if parts[:2] == ["v1", "batches"] and len(parts) == 3 and parts[2] in server.batches:
                batch = server.batches[parts[2]]
                server.gets += 1
                server.advance(batch)
                self._send(200, server.batch_json(batch))
            elif parts[:2] == ["v1", "files"] and len(parts) == 4 and parts[2] in server.files:
                self._send(200, server.files[parts[2]])
            else:
                self._send(404, {"error": {"message": "no such object"}})

    def do_DELETE(self) -> None:
        server = self.batch
        self.close_connection = True
        with server.lock:
            file_id = self.path.strip("/").split("/")[-1]
            if file_id in server.files:
                del server.files[file_id]
                server.deleted.append(file_id)
                self._send(200, {"id": file_id, "deleted": True})
            else:
                self._send(404, {"error": {"message": "no such file"}})


def _multipart_file(raw: bytes, content_type: str) -> bytes:
    """The ``file`` part of a multipart/form-data body."""
    boundary = content_type.split("boundary=", 1)[1].strip('"').encode()
    for part in raw.split(b"--" + boundary):
        head, _, data = part.partition(b"\r\n\r\n")
        if b'name="file"' in head:
            return data.removesuffix(b"\r\n")
    raise ValueError("no file part")
