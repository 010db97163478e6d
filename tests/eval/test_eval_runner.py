"""The eval runner's pieces: the stop and the stop-aware model."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from scripted import ScriptedModel

from react_cli.eval.stop import CallRefused, Stop, StopAwareModel
from react_cli.infra.deadline import NO_DEADLINE
from react_cli.llm.base import CallKind, ModelRequest


def test_stop_aware_model_refuses_calls_once_stopped() -> None:
    stop = Stop()
    model = StopAwareModel(ScriptedModel(["a", "b"]), stop)
    assert model.complete(ModelRequest(CallKind.STEP, "p"), deadline=NO_DEADLINE).text == "a"
    stop.set()
    with pytest.raises(CallRefused):
        model.complete(ModelRequest(CallKind.STEP, "p"), deadline=NO_DEADLINE)


def test_a_stop_wakes_a_worker_waiting_for_a_question_at_once() -> None:
    """The pool's threads are joined at exit: none may wait for a request in flight."""
    stop, release = Stop(), threading.Event()
    started = threading.Event()

    def question() -> str:
        started.set()
        release.wait(10)
        return "row"

    with ThreadPoolExecutor(1) as pool:
        waiting = pool.submit(stop.wait_for, question)
        assert started.wait(5) and not waiting.done()
        stop.set()
        assert waiting.result(timeout=5) is None  # long before the question ends
    release.set()


def test_the_stop_hands_back_results_and_errors_and_starts_nothing_once_set() -> None:
    stop = Stop()
    assert stop.wait_for(lambda: 42) == 42

    def crash() -> None:
        raise RuntimeError("a bug")

    with pytest.raises(RuntimeError, match="a bug"):
        stop.wait_for(crash)
    ran: list[int] = []
    stop.set()
    assert stop.wait_for(lambda: ran.append(1)) is None and ran == []
