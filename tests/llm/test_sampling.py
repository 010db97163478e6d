"""Sampling through the real client against a loopback server: ``n`` in one request where it is
answered, else single requests (at most ``--sample-concurrency`` at once) when the endpoint
refuses ``n`` or ignores it, remembered for the rest of the run by every client sharing it."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from fake_openai import FakeOpenAI, Reply

from react_cli.core.errors import LLMConnectionError
from react_cli.infra.deadline import NO_DEADLINE
from react_cli.infra.retry import RetryPolicy
from react_cli.llm.base import CallKind, ModelRequest
from react_cli.llm.client import OpenAIClient
from react_cli.llm.endpoint import EndpointFacts
from react_cli.loop.text.cutter import ObservationCutter

FAST = RetryPolicy(retries=1, backoff_factor=0.0, backoff_jitter_s=0.0)


class Numbered:
    """Replies ``sample 0``, ``sample 1``, … in the order the server is asked for them; tracks
    how many requests are in the server at once (each takes ``hold_s``)."""

    def __init__(self, hold_s: float = 0.0, fail_from: int | None = None) -> None:
        self.hold_s, self.fail_from = hold_s, fail_from
        self.served = self.inside = self.most_inside = 0
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            number = self.served
            self.served += 1
            self.inside += 1
            self.most_inside = max(self.most_inside, self.inside)
        time.sleep(self.hold_s)
        with self._lock:
            self.inside -= 1
        if self.fail_from is not None and number >= self.fail_from:
            return Reply(status=500)
        return Reply(text=f" sample {number}\nAnswer: {number % 3}")


def client(fake: FakeOpenAI, facts: EndpointFacts | None = None, **kwargs: Any) -> OpenAIClient:
    return OpenAIClient(
        base_url=fake.url, model="m", policy=FAST, timeout_s=5, facts=facts, **kwargs
    )


def req(prompt: str, stop: list[str]) -> ModelRequest:
    return ModelRequest(CallKind.SAMPLE, prompt, tuple(stop), cutter=ObservationCutter)


def test_an_endpoint_that_answers_n_gives_every_sample_in_one_request() -> None:
    with FakeOpenAI(Numbered(), n="answer") as fake:
        sampled = client(fake).sample(
            req("Q: x\n", ["\nQuestion:"]), n=21, temperature=0.7, deadline=NO_DEADLINE
        )
    assert sampled.requests == 1 and len(fake.requests) == 1
    body = fake.requests[0].json or {}
    assert (body["n"], body["temperature"], body["stream"]) == (21, 0.7, False)
    assert [c.text for c in sampled.completions] == [
        f" sample {k}\nAnswer: {k % 3}" for k in range(21)
    ]
    reported = fake_usage(sampled)
    assert reported == (len("Q: x\n") // 4, sum(len(c.text) // 4 for c in sampled.completions))
    assert all(c.usage is not None and not c.usage.estimated for c in sampled.completions)


def fake_usage(sampled: Any) -> tuple[int, int]:
    """The usage the completions add up to (the server's, split over them)."""
    prompt = sum(c.usage.prompt_tokens for c in sampled.completions)
    completion = sum(c.usage.completion_tokens for c in sampled.completions)
    return prompt, completion


@pytest.mark.parametrize("mode", ["refuse", "ignore"])
def test_a_refused_or_ignored_n_falls_back_to_single_requests_remembered(mode: str) -> None:
    facts = EndpointFacts()
    with FakeOpenAI(Numbered(), n=mode) as fake:
        first = client(fake, facts).sample(
            req("Q\n", []), n=5, temperature=0.7, deadline=NO_DEADLINE
        )
        with_n = [r.json for r in fake.requests if r.json and "n" in r.json]
        assert len(with_n) == 1 and with_n[0]["n"] == 5  # asked once
        fake.requests.clear()
        again = client(fake, facts).sample(
            req("Q\n", []), n=3, temperature=0.7, deadline=NO_DEADLINE
        )
    assert facts.n_supported is False
    assert len(first.completions) == 5 and len(again.completions) == 3
    assert all(r.json and "n" not in r.json for r in fake.requests)  # the next client knows
    assert len(fake.requests) == again.requests == 3
    if mode == "refuse":  # the refused request answered nothing: 5 singles, one retry booked
        assert first.requests == 5 and first.completions[0].retries == 1
    else:  # its one answer is kept: 4 singles more
        assert first.requests == 5 and first.completions[0].text.startswith(" sample 0")
        assert sorted(c.text.split()[1] for c in first.completions) == list("01234")


def test_single_requests_are_at_most_sample_concurrency_at_once() -> None:
    numbered = Numbered(hold_s=0.05)
    with FakeOpenAI(numbered, n="refuse") as fake:
        sampled = client(fake, sample_concurrency=3).sample(
            req("Q\n", []), n=9, temperature=1.0, deadline=NO_DEADLINE
        )
    assert len(sampled.completions) == 9 and len(fake.requests) == 10  # the refusal and 9
    assert numbered.most_inside == 3


def test_a_failing_single_request_fails_the_sampling_and_starts_no_other() -> None:
    numbered = Numbered(fail_from=2)  # the third sample fails, and its retry
    failing = pytest.raises(LLMConnectionError, match="kept failing with HTTP 500")
    with FakeOpenAI(numbered, n="refuse") as fake, failing:
        client(fake, sample_concurrency=1).sample(
            req("Q\n", []), n=6, temperature=1.0, deadline=NO_DEADLINE
        )
    assert numbered.served == 4  # samples 1 and 2, then the third and its retry: no fourth
