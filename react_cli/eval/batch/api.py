"""The OpenAI Batch API over HTTP: a file of requests uploaded (``/v1/files``), a batch made of
it (``/v1/batches``), polled, its output and error files read, the files deleted.

Every request carries the run's credentials (the key as Bearer, else the URL's user
information), is retried by the run's one ``RetryPolicy`` (connection errors, 429, 5xx), cut
at its time limit by a ``Watchdog``, and every answer is read under a size limit and masked by
the run's redactor: a server that echoes the key shows it nowhere.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import requests

from react_cli.core.errors import (
    LLMAuthError,
    LLMConnectionError,
    LLMError,
    LLMNotFoundError,
    LLMRequestError,
)
from react_cli.core.records import Api
from react_cli.infra.auth import credentials
from react_cli.infra.credentials import redact_url, url_secrets
from react_cli.infra.deadline import NO_DEADLINE, Watchdog
from react_cli.infra.http import make_session, user_agent, watched_request
from react_cli.infra.redaction import Redactor
from react_cli.infra.retry import RETRY_STATUSES, Retryable, RetryPolicy
from react_cli.infra.sizelimit import TooLarge, read_capped
from react_cli.infra.untrusted import decode, loads

MAX_ANSWER_BYTES = 1 << 20  # a batch or file object
MAX_FILE_BYTES = 200 << 20  # an output file: OpenAI's input files hold up to 200 MB
COMPLETION_WINDOW = "24h"


class BatchStatus:
    """A batch's ``status`` values, as the Batch API names them."""

    VALIDATING = "validating"
    IN_PROGRESS = "in_progress"
    FINALIZING = "finalizing"
    COMPLETED = "completed"
    FAILED = "failed"
    EXPIRED = "expired"
    CANCELLING = "cancelling"
    CANCELLED = "cancelled"
    ENDED = frozenset({COMPLETED, FAILED, EXPIRED, CANCELLED})
    """Statuses after which the batch changes no more: its files are read."""


@dataclass(frozen=True)
class Batch:
    """What a batch object says: its id, status, counts and files (None: none yet)."""

    id: str
    status: str
    total: int = 0
    completed: int = 0
    failed: int = 0
    output_file: str | None = None
    error_file: str | None = None
    errors: str = ""  # why a failed batch failed (its ``errors``), cut

    @property
    def ended(self) -> bool:
        return self.status in BatchStatus.ENDED

    @classmethod
    def of(cls, data: Any) -> Batch:
        """A batch object as the endpoint sent it; LLMRequestError when it is none."""
        if not isinstance(data, dict) or not isinstance(data.get("id"), str):
            raise LLMRequestError("the Batch API answered with something that is not a batch")
        counts = data.get("request_counts")
        counts = counts if isinstance(counts, dict) else {}
        errors = data.get("errors")
        listed = errors.get("data") if isinstance(errors, dict) else None
        said = [
            str(item.get("message") or item.get("code") or "")
            for item in (listed if isinstance(listed, list) else [])
            if isinstance(item, dict)
        ]
        return cls(
            id=data["id"][:200],
            status=str(data.get("status") or "")[:40],
            total=_count(counts.get("total")),
            completed=_count(counts.get("completed")),
            failed=_count(counts.get("failed")),
            output_file=_text(data.get("output_file_id")),
            error_file=_text(data.get("error_file_id")),
            errors="; ".join(said)[:300],
        )


class BatchApi:
    """One endpoint's Batch API (``base_url`` ends in ``/v1``, as for its completions)."""

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str | None,
        policy: RetryPolicy,
        timeout_s: float,
        redact: Redactor,
        debug_log: Callable[[str], None] | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.shown = redact_url(self.base_url)
        self._auth = credentials(self.base_url, api_key)
        self._redact = (
            Redactor([api_key, *url_secrets(self.base_url)]) if redact is None else redact
        )
        self._session = make_session(user_agent(), debug_log, self._redact)
        self._policy, self._timeout_s = policy, timeout_s

    def close(self) -> None:
        self._session.close()

    def upload(self, lines: list[dict[str, Any]], name: str) -> str:
        """Upload the requests (one JSON object a line) as a ``batch`` file; its id."""
        data = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
        files = {"file": (name, data.encode("utf-8"), "application/jsonl")}
        answer = self._json("POST", "files", data={"purpose": "batch"}, files=files)
        file_id = answer.get("id") if isinstance(answer, dict) else None
        if not isinstance(file_id, str):
            raise LLMRequestError(f"{self.shown}/files answered without a file id")
        return file_id[:200]

    def create(self, file_id: str, api: Api) -> Batch:
        endpoint = "/v1/chat/completions" if api is Api.CHAT else "/v1/completions"
        body = {
            "input_file_id": file_id,
            "endpoint": endpoint,
            "completion_window": COMPLETION_WINDOW,
        }
        return Batch.of(self._json("POST", "batches", json=body))

    def get(self, batch_id: str) -> Batch:
        """The batch now (ids the endpoint gave are quoted: never another path)."""
        return Batch.of(self._json("GET", f"batches/{quote(batch_id, safe='')}"))

    def content(self, file_id: str) -> str:
        """A file's text (an output or error file), masked."""
        raw = self._request("GET", f"files/{quote(file_id, safe='')}/content", MAX_FILE_BYTES)
        return self._redact(decode(raw))

    def delete(self, file_id: str) -> None:
        self._request("DELETE", f"files/{quote(file_id, safe='')}", MAX_ANSWER_BYTES)

    def _json(self, method: str, path: str, **kwargs: Any) -> Any:
        raw = self._request(method, path, MAX_ANSWER_BYTES, **kwargs)
        try:
            return self._redact.json(loads(raw))
        except ValueError:
            where = f"{self.shown}/{path.split('/')[0]}"
            raise LLMRequestError(f"{where} answered malformed JSON") from None

    def _request(self, method: str, path: str, limit: int, **kwargs: Any) -> bytes:
        url = _joined(self.base_url, path)
        shown = f"{self.shown}/{path.split('/')[0]}"

        def attempt() -> bytes:
            with Watchdog(self._timeout_s, NO_DEADLINE) as dog:
                try:
                    response = watched_request(
                        self._session, method, url, dog, self._timeout_s, auth=self._auth, **kwargs
                    )
                    with response:
                        body = read_capped(response.iter_content(65536), limit)
                except TooLarge as exc:
                    raise LLMRequestError(f"{shown} answered {exc}") from None
                except requests.RequestException as exc:
                    error = LLMConnectionError(f"cannot reach {shown}: {type(exc).__name__}")
                    raise Retryable("connection failed", lambda *_: error) from None
            status = response.status_code
            if status < 400:
                return body
            said = self._redact(_message(body))
            refused = _refusal(status, f"{shown} answered HTTP {status}{said}")
            if status in RETRY_STATUSES:
                raise Retryable.for_status(status, response.headers, lambda *_: refused)
            raise refused

        body, _ = self._policy.call(attempt, NO_DEADLINE)
        return body


def line_outcome(record: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """A line of a batch's output or error file: its answer body (a 200's with choices), or
    why it has none."""
    response = record.get("response")
    error = record.get("error")
    if isinstance(response, dict):
        status, body = response.get("status_code"), response.get("body")
        if status == 200 and isinstance(body, dict):
            choices = body.get("choices")
            if isinstance(choices, list) and choices:
                return body, ""
            return None, "an answer without choices"  # asked again, never kept
        said = body.get("error") if isinstance(body, dict) else None
        message = said.get("message") if isinstance(said, dict) else None
        return None, f"HTTP {status}" + (f": {str(message)[:200]}" if message else "")
    if isinstance(error, dict):
        return None, str(error.get("message") or error.get("code") or "an error line")[:200]
    return None, "an unreadable line"


def _refusal(status: int, message: str) -> LLMError:
    """An error answer as the error it means: a key refused is the configuration's."""
    if status in (401, 403):
        return LLMAuthError(f"{message}; set OPENAI_API_KEY or --api-key")
    if status == 404:
        return LLMNotFoundError(f"{message}: does the endpoint have the Batch API?")
    return LLMRequestError(message)


def _joined(base_url: str, path: str) -> str:
    """``path`` under ``base_url``, a query string (``?api-version=``) kept at the end."""
    parts = urlsplit(base_url)
    return urlunsplit((parts.scheme, parts.netloc, f"{parts.path}/{path}", parts.query, ""))


def _message(body: bytes) -> str:
    """An error answer's message, cut: ``: Invalid file``."""
    try:
        data = loads(body)
    except ValueError:
        return ""
    error = data.get("error") if isinstance(data, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return f": {str(message)[:200]}" if message else ""


def _count(value: Any) -> int:
    return value if type(value) is int and 0 <= value < 10**9 else 0


def _text(value: Any) -> str | None:
    return value[:200] if isinstance(value, str) and value else None
