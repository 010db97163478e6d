"""Drawing n completions of one prompt: one request asking for ``n`` where the endpoint honours
it, else single requests, at most ``concurrency`` at a time.

An endpoint that refuses ``n`` (a 400 naming it) or answers fewer choices than asked is
remembered in the ``EndpointFacts`` a run's clients share (an eval's workers too), so later
samplings go straight to single requests; the choices it did answer are kept. A request's
reported usage is split evenly over its completions; without one, each is estimated (the
prompt counted once per request). The refused request counts as a retry of the first sample.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace

from react_cli.core.records import Usage
from react_cli.llm.base import Completion, Sampled
from react_cli.llm.endpoint import EndpointFacts
from react_cli.llm.stream import Answer


@dataclass(frozen=True)
class Choices:
    """What one request gave: its answers and what it cost."""

    answers: list[Answer]
    usage: Usage | None  # reported for all its answers; None: not reported
    latency_s: float
    retries: int


class NRefused(Exception):
    """The endpoint refused the ``n`` parameter (a 400 naming it)."""


Request = Callable[[int], Choices]
"""One request for ``k`` completions (``k`` 1: without ``n``)."""


def sample(
    request: Request, prompt: str, n: int, *, concurrency: int, facts: EndpointFacts
) -> Sampled:
    """``n`` completions of ``prompt``, in a stable order; see the module docstring."""
    kept: list[Completion] = []
    requests = refused = 0
    if n > 1 and facts.n_supported is not False:
        try:
            answered = request(n)
        except NRefused:
            facts.n_supported, refused = False, 1
        else:
            requests, kept = 1, completions(answered, prompt)[:n]
            facts.n_supported = len(kept) == n
    missing = n - len(kept)
    if missing:
        singles = _in_parallel(lambda: request(1), missing, concurrency)
        requests += missing
        kept += [completions(answered, prompt)[0] for answered in singles]
    if refused:
        kept[0] = replace(kept[0], retries=kept[0].retries + refused)
    return Sampled(kept, requests)


def completions(answered: Choices, prompt: str) -> list[Completion]:
    """A request's answers as completions, each with its share of the usage."""
    count = len(answered.answers)
    if answered.usage is not None:
        usages = split(answered.usage, count)
    else:
        usages = [
            Usage.estimate(prompt if i == 0 else "", answer.text)
            for i, answer in enumerate(answered.answers)
        ]
    retries = [answered.retries] + [0] * (count - 1)  # the request's, booked on its first
    return [
        Completion(answer.text, usage, answered.latency_s, again, answer.finish_reason)
        for answer, usage, again in zip(answered.answers, usages, retries, strict=True)
    ]


def split(usage: Usage, parts: int) -> list[Usage]:
    """``usage`` in ``parts`` even shares that add up to it (the first takes the remainder)."""
    prompt, prompt_rest = divmod(usage.prompt_tokens, parts)
    completion, completion_rest = divmod(usage.completion_tokens, parts)
    cached, cached_rest = divmod(usage.cached_prompt_tokens or 0, parts)
    unreported = usage.cached_prompt_tokens is None
    shares = [
        Usage(prompt, completion, usage.estimated, None if unreported else cached)
        for _ in range(parts)
    ]
    shares[0] = Usage(
        prompt + prompt_rest,
        completion + completion_rest,
        usage.estimated,
        None if unreported else cached + cached_rest,
    )
    return shares


def _in_parallel(job: Callable[[], Choices], count: int, concurrency: int) -> list[Choices]:
    """``job()`` ``count`` times, at most ``concurrency`` at once, on daemon threads (a Ctrl-C
    never waits for them); the results in the order the jobs started. After a failure no job
    starts, those running are waited for, and the first failure is raised."""
    results: dict[int, Choices] = {}
    done: queue.Queue[tuple[int, Choices | BaseException]] = queue.Queue()
    lock, stopped, jobs = threading.Lock(), threading.Event(), iter(range(count))
    started = 0

    def worker() -> None:
        nonlocal started
        while True:
            with lock:
                number = None if stopped.is_set() else next(jobs, None)
                if number is None:
                    return
                started += 1
            try:
                done.put((number, job()))
            except BaseException as exc:  # handed to the waiting thread; no job starts after
                with lock:
                    stopped.set()
                done.put((number, exc))

    for _ in range(min(concurrency, count)):
        threading.Thread(target=worker, daemon=True, name="sample").start()
    failure: BaseException | None = None
    received = 0
    try:
        while True:
            with lock:  # once stopped, no job starts: wait for those that did
                if received >= (started if stopped.is_set() else count):
                    break
            number, result = done.get()
            received += 1
            if isinstance(result, BaseException):
                failure = failure or result
                with lock:
                    stopped.set()
            else:
                results[number] = result
    finally:
        stopped.set()
    if failure is not None:
        raise failure
    return [results[number] for number in sorted(results)]
