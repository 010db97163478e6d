"""The limiter's rules, driven by synthetic signals on a fake clock (no timing, no sleeps):
slow start, the queue estimate, the moves by one, the halving once per overload, the pause a
Retry-After asks for, and the gate itself (first come first served, at most the level,
which requests overlapped, the deadline)."""

from __future__ import annotations

import itertools
import threading

import pytest

from react_cli.infra.deadline import Deadline
from react_cli.infra.limiter import Limiter, Waited
from react_cli.infra.limiter import Permit as LimiterPermit
from react_cli.infra.vegas import ALPHA, BETA, IDLE_STEPS, Sample, Vegas

NOW = Deadline()  # no time limit


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Server:
    """Answers for a rule from a server that serves ``slots`` at once, ``service`` seconds
    each, with the rule's level kept on the wire (a steady closed loop): each request waits
    behind the ``level - slots`` others, answers come ``min(level, slots) / service`` a
    second, and a stream's first token comes ``base`` after its turn."""

    def __init__(self, rule: Vegas, slots: int, service: float = 1.0, base: float = 0.05):
        self.rule, self.slots, self.service, self.base = rule, slots, service, base
        self.at = 0.0

    def round(self) -> None:
        """As many answers as the level."""
        level = self.rule.level
        rate = min(level, self.slots) / self.service
        wait = max(0, level - self.slots) / self.slots * self.service
        for _ in range(level):
            self.at += 1 / rate
            sent = self.at - wait - self.service
            self.rule.sample(Sample("stream", self.base + wait, 1, sent, level, self.at, level))


def sample(delay: float, *, sent: int = 1, at: float = 0.0, inflight: int | None = None) -> Sample:
    return Sample("stream", delay, 1, at - 0.5, sent, at, sent if inflight is None else inflight)


def test_slow_start_doubles_per_round_while_nothing_waits() -> None:
    rule = Vegas(level=1, max_level=64)
    server = Server(rule, slots=64)
    levels = []
    for _ in range(6):
        server.round()
        levels.append(rule.level)
    assert levels == [2, 4, 8, 16, 32, 64] and rule.slow_start


@pytest.mark.parametrize("slots", [1, 4, 16])
def test_a_queueing_server_is_held_near_its_slots(slots: int) -> None:
    """From slow start's overshoot back to the slots and one or two more: the server stays
    busy and no more than ``BETA`` requests wait."""
    rule = Vegas(level=1, max_level=64)
    server = Server(rule, slots=slots)
    seen = []
    for _ in range(40):
        server.round()
        seen.append(rule.level)
    assert not rule.slow_start
    settled = seen[-10:]
    assert min(settled) > slots and max(settled) <= slots + BETA, seen


def test_slow_start_never_claims_more_than_twice_what_was_tried() -> None:
    rule = Vegas(level=10, max_level=64)
    for at in range(20):  # answers to requests that went with 3 on the wire
        rule.sample(sample(0.05, sent=3, inflight=10, at=float(at)))
    assert rule.level == 10  # at 10 already, more than twice 3: nothing learnt


def test_an_app_limited_limiter_does_not_grow() -> None:
    rule = Vegas(level=8, max_level=64)
    for at in range(20):
        rule.sample(sample(0.05, sent=2, inflight=2, at=float(at)))
    assert rule.level == 8


def test_a_queue_from_requests_sent_before_the_level_went_down_is_read_once() -> None:
    """Answers to requests sent at the old level all report its queue: one move, not many
    (after it, they only count for the rate)."""
    rule = Vegas(level=20, max_level=64, slow_start=False)
    for number in range(10):  # 10 answers a second, no wait: the base and the rate
        at = number / 10
        rule.sample(Sample("stream", 0.05, 1, at - 1, 20, at, 20))
    levels = []
    for number in range(10, 30):  # then everything sent before t=1 waited 1 s: 10 waiting
        at = number / 10
        rule.sample(Sample("stream", 1.05, 1, 0.9, 20, at, 20))
        levels.append(rule.level)
    moves = [after - before for before, after in itertools.pairwise(levels) if after != before]
    assert moves.count(-1) == 1 and all(move > 0 for move in moves if move != -1)


def test_the_queue_estimate_is_littles_law() -> None:
    """Waiting requests = answers per second × the wait above the base (× units)."""
    rule = Vegas(level=10, max_level=64, slow_start=False)
    for at in range(5):  # one answer a second, nothing waits
        rule.sample(sample(0.1, sent=10, inflight=10, at=float(at)))
    assert rule.rate() == pytest.approx(1.0) and rule.waiting("stream") == 0
    for at in range(5, 8):  # 2 s above the base, at one a second: 2 waiting
        rule.sample(sample(2.1, sent=10, inflight=10, at=float(at)))
    assert rule.waiting("stream") == pytest.approx(2.0)
    assert ALPHA <= rule.waiting("stream") <= BETA
    level = rule.level
    for at in range(8, 10):  # held: neither up nor down
        rule.sample(sample(2.1, sent=10, inflight=10, at=float(at)))
    assert rule.level == level
    for at in range(10, 15):  # whole answers: the base of their kind, 0.01 s a token
        rule.sample(Sample("whole", 0.01, 300, float(at) - 0.5, 10, float(at), 10))
    for at in range(15, 18):  # then 0.01 s a token above it, 300 tokens: 3 s of waiting
        rule.sample(Sample("whole", 0.02, 300, float(at) - 0.5, 10, float(at), 10))
    assert rule.waiting("whole", 300) == pytest.approx(3.0 * rule.rate())


def test_growth_is_one_per_round_after_slow_start_and_faster_when_idle() -> None:
    rule = Vegas(level=10, max_level=64, slow_start=False)
    for at in range(10):  # a round of answers with about 0.7 waiting: +1
        rule.sample(Sample("stream", 0.1 + 0.7 * (at > 0), 1, at - 0.5, 10, float(at), 10))
    assert rule.level == 11
    idle = Vegas(level=10, max_level=64, slow_start=False)
    for at in range(10):  # a round with nothing waiting at all: +IDLE_STEPS
        idle.sample(Sample("stream", 0.1, 1, at - 0.5, 10, float(at), 10))
    assert idle.level >= 10 + IDLE_STEPS - 1 > rule.level


def test_an_overload_halves_once_for_every_request_that_saw_it() -> None:
    clock = Clock()
    limiter = Limiter(16, Vegas(max_level=64), clock=clock)
    permits = [limiter.acquire(NOW) for _ in range(12)]
    for permit in permits:  # all twelve get a 429 for the same overload
        permit.dropped()
    assert limiter.level == 8
    again = limiter.acquire(NOW)  # a request sent after the halving: a new overload
    again.dropped()
    assert limiter.level == 4
    assert limiter.inflight == 0
    stats = limiter.stats()
    assert (stats.lowest, stats.highest, stats.level, stats.adaptive) == (4, 16, 4, True)


def test_retry_after_pauses_the_whole_endpoint() -> None:
    clock = Clock()
    limiter = Limiter.auto(8, clock=clock)
    limiter.acquire(NOW).dropped(pause_s=2.0)
    assert limiter.pause_left() == 2.0
    with pytest.raises(Waited):  # paused: no permit before a deadline that has passed
        limiter.acquire(Deadline(at=0.0))
    clock.now += 2.0
    assert limiter.pause_left() == 0.0
    limiter.acquire(NOW).release()


def test_a_fixed_limiter_never_moves() -> None:
    limiter = Limiter(3)
    permit = limiter.acquire(NOW)
    permit.dropped()
    permit = limiter.acquire(NOW)
    permit.done("stream", 0.01)
    assert limiter.level == 3 and not limiter.adaptive
    assert limiter.stats().to_json()["mode"] == "fixed"


def test_overlap_is_told_while_a_permit_is_held() -> None:
    limiter = Limiter(4)
    alone = limiter.acquire(NOW)
    assert not alone.overlapped
    later = limiter.acquire(NOW)  # started while the first was on the wire
    assert alone.overlapped and later.overlapped
    alone.release()
    later.release()
    assert not limiter.acquire(NOW).overlapped


def test_permits_go_first_come_first_served_up_to_the_level() -> None:
    limiter = Limiter(1)
    held = limiter.acquire(NOW)
    order: list[int] = []

    def take(number: int, ready: threading.Event) -> None:
        ready.set()
        permit = limiter.acquire(NOW)
        order.append(number)
        permit.release()

    threads = []
    for number in range(2):
        ready = threading.Event()
        thread = threading.Thread(target=take, args=(number, ready))
        thread.start()
        assert ready.wait(5)
        while len(limiter._queue) < number + 1:  # it queued: the next one queues behind
            threading.Event().wait(0.001)  # a thread's state, not a time: no test waits long
        threads.append(thread)
    assert order == [] and limiter.inflight == 1
    held.release()
    for thread in threads:
        thread.join(5)
    assert order == [0, 1] and limiter.inflight == 0


def test_a_deadline_that_passes_while_waiting_is_waited() -> None:
    limiter = Limiter(1)
    limiter.acquire(NOW)
    with pytest.raises(Waited):
        limiter.acquire(Deadline(at=0.0))
    assert not limiter._queue  # the ticket left the line


def test_a_cut_stream_restarts_the_limiter_from_one() -> None:
    """An endpoint that cut a stream serves one request at a time: learnt again from 1, with
    no delay it taught before (streams' and whole answers' alike)."""
    clock = Clock()
    limiter = Limiter(8, Vegas(max_level=64, slow_start=False), clock=clock)
    permits = [limiter.acquire(NOW) for _ in range(3)]
    for permit in permits[:2]:
        permit.done("whole", 0.01, 40)
    permits[2].restarted()
    assert limiter.level == 1 and limiter.rule is not None and limiter.rule.waiting("whole") == 0
    late = limiter.acquire(NOW)  # sent after: a new answer at 1
    clock.now += 1
    late.done("whole", 0.5, 40)
    assert limiter.rule._base == {"whole": 0.5}


def test_signals_after_a_release_teach_without_returning_twice() -> None:
    limiter = Limiter(8, Vegas(max_level=64))
    permit: LimiterPermit = limiter.acquire(NOW)
    permit.release()
    permit.dropped()  # maxlag seen after the answer was read
    assert limiter.level == 4 and limiter.inflight == 0
