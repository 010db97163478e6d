"""The batch runner's pieces: the polite wiki wrapper and the stop-aware model."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from scripted import ScriptedModel

from react_cli.deadline import NO_DEADLINE, Deadline
from react_cli.evaluate import EvalStopped, PoliteBackend, StopAwareModel
from react_cli.wiki.base import SearchResult


class SlowBackend:
    """Records how many searches overlap."""

    def __init__(self) -> None:
        self.active = self.most = 0
        self._lock = threading.Lock()

    def search(self, entity: str, *, deadline: Deadline) -> SearchResult:
        with self._lock:
            self.active += 1
            self.most = max(self.most, self.active)
        time.sleep(0.02)
        with self._lock:
            self.active -= 1
        return SearchResult(None, [entity])


@pytest.mark.parametrize("limit", [1, 2])
def test_polite_backend_caps_requests_in_flight(limit: int) -> None:
    slow = SlowBackend()
    polite = PoliteBackend(slow, limit)
    with ThreadPoolExecutor(8) as pool:
        entities = [f"e{i}" for i in range(16)]
        outcomes = list(pool.map(lambda e: polite.search(e, deadline=NO_DEADLINE), entities))
    assert slow.most == limit
    assert [o.similar for o in outcomes] == [[f"e{i}"] for i in range(16)]


def test_stop_aware_model_refuses_calls_once_stopped() -> None:
    stop = threading.Event()
    model = StopAwareModel(ScriptedModel(["a", "b"]), stop)
    assert model.complete("p", [], deadline=NO_DEADLINE).text == "a"
    stop.set()
    with pytest.raises(EvalStopped):
        model.complete("p", [], deadline=NO_DEADLINE)
