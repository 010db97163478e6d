"""The adaptive limiter's first round (issue 33): a model endpoint's first ``PROBE`` requests
go at once, and the answers about as fast as the quickest say how many it serves at once;
the level starts at twice that. Synthetic delays on a fake clock, no timing."""

from __future__ import annotations

from react_cli.infra.deadline import Deadline
from react_cli.infra.limiter import Limiter
from react_cli.infra.vegas import PROBE, Sample, Vegas

NOW = Deadline()


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def first_round(slots: int, requests: int = PROBE, service: float = 0.5) -> list[float]:
    """Each request's time to its first token at a server of ``slots`` that queues the rest
    (0.3 s to read a prompt, ``service`` a request)."""
    return [0.3 + (k // slots) * service for k in range(requests)]


def probed(delays: list[float]) -> Vegas:
    rule = Vegas(level=len(delays), probing=True)
    for seq, delay in enumerate(delays):
        rule.sample(
            Sample(
                "stream", delay, 1, 0.0, len(delays), 1.0 + seq, len(delays) - seq, seq, len(delays)
            )
        )
    return rule


def test_the_first_round_says_how_many_the_endpoint_serves_at_once() -> None:
    for slots, level in ((1, 2), (4, 8), (8, 16)):
        rule = probed(first_round(slots))
        assert (rule.level, rule.probing, rule.slow_start) == (level, False, False), slots


def test_an_endpoint_that_served_the_whole_round_at_once_is_still_in_slow_start() -> None:
    rule = probed(first_round(64))
    assert rule.level == 2 * PROBE and rule.slow_start and not rule.probing


def test_the_round_lasts_until_each_of_its_requests_answered() -> None:
    rule = Vegas(level=PROBE, probing=True)
    delays = first_round(4)
    for seq, delay in enumerate(delays[:-1]):
        rule.sample(Sample("stream", delay, 1, 0.0, PROBE, 1.0 + seq, 1, seq, PROBE))
    assert rule.probing and rule.level == PROBE  # one of the round has not answered yet
    # It failed (released, teaching nothing): the next round's first answer ends the probe.
    rule.sample(Sample("stream", 0.3, 1, 20.0, 1, 21.0, 1, PROBE, PROBE + 1))
    assert not rule.probing and rule.level == 8


def test_an_overload_in_the_first_round_ends_it_halving() -> None:
    rule = Vegas(level=PROBE, probing=True)
    rule.drop(1.0)
    assert not rule.probing and rule.level == PROBE // 2


def test_a_model_limiter_starts_at_the_probe_and_learns_from_its_permits() -> None:
    clock = Clock()
    limiter = Limiter.of(None, 64, probe=True)
    assert limiter.level == PROBE and limiter.adaptive
    limiter = Limiter.auto(64, PROBE, probe=True, clock=clock)
    permits = [limiter.acquire(NOW) for _ in range(PROBE)]
    assert limiter.inflight == PROBE
    for permit, delay in zip(permits, first_round(4), strict=True):
        clock.now += 0.1
        permit.done("stream", delay)
    assert limiter.level == 8
    assert Limiter.of(None, 4, probe=True).level == 4  # never above the cap
    assert Limiter.of(None, 8).level == 1  # a Wikipedia host's: no first round
