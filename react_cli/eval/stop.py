"""How an eval stops: one flag, set once, that every worker and every model call obeys.

It wakes the workers waiting for a question at once, cancels the calls in flight (every
question's deadline holds its :class:`~react_cli.infra.deadline.Cancel`: their requests' sockets
are shut, no retry waits), and a model wrapped in :class:`StopAwareModel` refuses calls after
it, so the questions left in flight end by themselves, at once; :meth:`Stop.join` waits for
them (within ``JOIN_S``), so nothing of an eval runs once it returned.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TypeVar

from react_cli.core.errors import LLMError
from react_cli.infra.deadline import Cancel, Deadline
from react_cli.llm.base import Completion, LanguageModel, ModelRequest, Sampled, TextSink

T = TypeVar("T")
JOIN_S = 5.0
"""How long a stopped eval waits for its questions in flight to end, all of them together:
cancelled, they end within milliseconds; one that does not (a user's function that ignores
its time limit) is left behind then, as a daemon thread."""


class Stop:
    """Set once when the eval stops; wakes every worker waiting for a question and cancels
    the calls of the questions in flight (``cancel``: their deadlines hold it)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._set = False
        self._waiting: set[threading.Event] = set()
        self._running: set[threading.Thread] = set()
        self.cancel = Cancel()

    def set(self) -> None:
        with self._lock:
            self._set = True
            for woken in self._waiting:
                woken.set()
        self.cancel.set()

    def is_set(self) -> bool:
        return self._set

    def join(self, limit_s: float = JOIN_S) -> bool:
        """Wait until no question runs, for at most ``limit_s`` in all; whether none does."""
        ends = time.monotonic() + limit_s
        with self._lock:
            running = list(self._running)
        for thread in running:
            thread.join(max(0.0, ends - time.monotonic()))
        return not any(thread.is_alive() for thread in running)

    def wait_for(self, work: Callable[[], T]) -> T | None:
        """``work()`` run on a daemon thread: its result, or None when the eval stops first.

        The worker stops waiting at the stop, so no worker waits in a request that can take
        minutes; the question left behind is cancelled and ends by itself, and :meth:`join`
        waits for it (a daemon thread: the process never waits for one that does not end).
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
                with self._lock:
                    self._running.discard(thread)
                done.set()

        thread = threading.Thread(target=target, daemon=True, name="eval-question")
        with self._lock:
            if self._set:
                return None
            self._waiting.add(done)
            self._running.add(thread)
        thread.start()
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
