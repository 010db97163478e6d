"""How an eval stops: one flag, set once, that every worker and every model call obeys.

It wakes the workers waiting for a question at once, and a model wrapped in
:class:`StopAwareModel` refuses calls after it, so the questions left in flight end by
themselves.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

from react_cli.core.errors import LLMError
from react_cli.infra.deadline import Deadline
from react_cli.llm.base import Completion, LanguageModel, ModelRequest, Sampled, TextSink

T = TypeVar("T")


class Stop:
    """Set once when the eval stops; wakes every worker waiting for a question."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._set = False
        self._waiting: set[threading.Event] = set()

    def set(self) -> None:
        with self._lock:
            self._set = True
            for woken in self._waiting:
                woken.set()

    def is_set(self) -> bool:
        return self._set

    def wait_for(self, work: Callable[[], T]) -> T | None:
        """``work()`` run on a daemon thread: its result, or None when the eval stops first.

        The pool's threads are joined when the process exits, so none of them may wait in a
        request that can take minutes; a question left behind ends at its next model call
        (:class:`StopAwareModel`), and the process never waits for it.
        """
        done = threading.Event()
        results: list[T] = []
        errors: list[BaseException] = []

        def target() -> None:
            try:
                results.append(work())
            except BaseException as exc:  # handed to the waiting worker
                errors.append(exc)
            finally:
                done.set()

        with self._lock:
            if self._set:
                return None
            self._waiting.add(done)
        threading.Thread(target=target, daemon=True, name="eval-question").start()
        done.wait()
        with self._lock:
            self._waiting.discard(done)
        if errors:
            raise errors[0]
        return results[0] if results else None


class CallRefused(LLMError):
    """A model call refused because the eval is stopping: the loop ends the question as an
    endpoint failure, and the runner keeps no row for it."""


class StopAwareModel:
    """A ``LanguageModel`` that refuses new calls once the eval stops."""

    def __init__(self, model: LanguageModel, stop: Stop) -> None:
        self._model = model
        self._stop = stop

    def complete(
        self, request: ModelRequest, *, deadline: Deadline, on_text: TextSink | None = None
    ) -> Completion:
        if self._stop.is_set():
            raise CallRefused("the eval stopped before this model call")
        return self._model.complete(request, deadline=deadline, on_text=on_text)

    def sample(
        self, request: ModelRequest, *, n: int, temperature: float, deadline: Deadline
    ) -> Sampled:
        if self._stop.is_set():
            raise CallRefused("the eval stopped before this model call")
        return self._model.sample(request, n=n, temperature=temperature, deadline=deadline)
