"""The model behind the cache: calls at temperature 0 answered from it when it holds them.

A call at temperature 0 is the same call every time: its key is the endpoint (without
credentials or query string), the API and the whole request body as the client would send
it first (model, prompt, stop sequences, max_tokens, temperature; never the key, never how
it is carried: streamed or not). Sampling at a higher temperature (CoT-SC) is never cached:
each run draws its own samples.

A hit costs nothing: its ``usage`` is zero and the usage the call would have cost is kept
apart (``Completion.cached_usage``), so totals, costs and token budgets count only what was
paid. A reply to a request with tools keeps its native calls (``--protocol tools``), read back
as a reply's are. What the file holds is read as untrusted: a value of the wrong shape or size
is a miss (and is dropped), the text is cut by the request's cutter again and the calls are
bounded, as a reply's would be.
"""

from __future__ import annotations

import time
from typing import Any, Protocol

from react_cli.cache.keys import digest
from react_cli.cache.store import CacheStore
from react_cli.core.records import Usage
from react_cli.infra.deadline import Deadline
from react_cli.infra.untrusted import dump_json, loads
from react_cli.llm.base import (
    Completion,
    LanguageModel,
    ModelRequest,
    Sampled,
    TextSink,
    cut_whole,
)
from react_cli.llm.toolcalls import assistant_message, calls_of

KIND = "model"
MAX_TEXT_CHARS = 1_000_000
"""No reply react-cli keeps is longer (the client cuts at 4× max_tokens' characters)."""
MAX_COMPLETIONS = 1000


class CacheableModel(LanguageModel, Protocol):
    """A model that can say what identifies a call (the HTTP client)."""

    @property
    def temperature(self) -> float: ...

    def request_identity(
        self, request: ModelRequest, *, temperature: float | None = None, n: int = 0
    ) -> dict[str, Any]: ...


class CachedModel:
    """``model`` with its calls at temperature 0 kept in ``store``."""

    def __init__(self, model: CacheableModel, store: CacheStore) -> None:
        self._model = model
        self._store = store

    def complete(
        self, request: ModelRequest, *, deadline: Deadline, on_text: TextSink | None = None
    ) -> Completion:
        if self._model.temperature != 0:
            return self._model.complete(request, deadline=deadline, on_text=on_text)
        started = time.monotonic()
        key = digest(KIND, self._model.request_identity(request))
        found = self._read(key, request, 1)
        if found is not None:
            return _hit(found[0][0], time.monotonic() - started)
        completion = self._model.complete(request, deadline=deadline, on_text=on_text)
        self._write(key, request, [completion], 1)
        return completion

    def sample(
        self, request: ModelRequest, *, n: int, temperature: float, deadline: Deadline
    ) -> Sampled:
        if temperature != 0:
            return self._model.sample(request, n=n, temperature=temperature, deadline=deadline)
        started = time.monotonic()
        key = digest(KIND, self._model.request_identity(request, temperature=0.0, n=n))
        found = self._read(key, request, n)
        if found is not None:
            seconds, (completions, requests) = time.monotonic() - started, found
            return Sampled([_hit(completion, seconds) for completion in completions], requests)
        sampled = self._model.sample(request, n=n, temperature=temperature, deadline=deadline)
        self._write(key, request, sampled.completions, n, sampled.requests)
        return sampled

    def _read(self, key: str, request: ModelRequest, n: int) -> tuple[list[Completion], int] | None:
        """The completions stored under ``key`` and the requests they took (the calls a
        method counts, whoever answers them), if the entry is a valid one of ``n``."""
        raw = self._store.get(key)
        if raw is None:
            return None
        found = _completions(raw, request, n)
        if found is None:
            self._store.forget(key)
        return found

    def _write(
        self,
        key: str,
        request: ModelRequest,
        completions: list[Completion],
        n: int,
        requests: int = 1,
    ) -> None:
        if len(completions) != n:
            return
        items = [
            {
                "text": c.text,
                "finish_reason": c.finish_reason,
                "usage": (
                    c.usage or Usage.estimate(request.prompt if i == 0 else "", c.text)
                ).to_json(),
                **({"message": c.message} if c.message is not None else {}),
            }
            for i, c in enumerate(completions)
        ]
        entry = {"completions": items, "requests": requests}
        self._store.put(key, KIND, dump_json(entry).encode())


def _hit(stored: Completion, seconds: float) -> Completion:
    """A stored completion as a call's answer: free, its usage kept apart."""
    return Completion(
        stored.text,
        Usage(),
        seconds,
        0,
        stored.finish_reason,
        stored.tool_calls,
        stored.message,
        cached=True,
        cached_usage=stored.usage,
    )


def _completions(raw: bytes, request: ModelRequest, n: int) -> tuple[list[Completion], int] | None:
    """The stored completions (text, finish reason, usage, native calls) and requests, or None
    for anything else."""
    try:
        data = loads(raw)
    except ValueError:
        return None
    items = data.get("completions") if isinstance(data, dict) else None
    if not isinstance(items, list) or len(items) != n or n > MAX_COMPLETIONS:
        return None
    requests = data.get("requests")
    if type(requests) is not int or not 0 < requests <= MAX_COMPLETIONS:
        return None
    found = []
    for item in items:
        text = item.get("text") if isinstance(item, dict) else None
        finish = item.get("finish_reason") if isinstance(item, dict) else None
        if not isinstance(text, str) or len(text) > MAX_TEXT_CHARS:
            return None
        if finish is not None and not isinstance(finish, str):
            return None
        usage = Usage.reported(item.get("usage")) or Usage()
        if isinstance(item.get("usage"), dict) and item["usage"].get("estimated") is True:
            usage.estimated = True
        text = cut_whole(request.cutter(), text)
        message = item.get("message")
        if message is not None and not isinstance(message, dict):
            return None
        calls = calls_of(message, MAX_TEXT_CHARS)
        rebuilt = assistant_message(text, calls) if request.tools else None
        found.append(Completion(text, usage, 0.0, 0, finish, calls, rebuilt))
    return found, requests
