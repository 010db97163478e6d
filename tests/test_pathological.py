"""Every regex, parser and extractor stays linear on its worst input, however busy the machine.

The cases are ``bench/pathological.py``'s (which prints their times). Each climbs a ladder,
10 KB → 100 KB → 1 MB, and at each rung its CPU time per character over that at 10 KB is its
growth: 1 for linear code; for quadratic code 10 at 100 KB and 100 at 1 MB. The bound,
``MAX_GROWTH``, is 4: twice the worst a linear case measured here with both cores saturated by
other processes (busy loops, memory-bound loops, the rest of the suite: 1.9), and under half of
what quadratic code measures at the first rung (the controls below: 8.5). Quadratic code thus
fails at 100 KB, in milliseconds, before a 1 MB run could take it minutes.

Load only ever adds CPU time (a neighbour on the core evicts the caches, which costs large runs
more than small ones), so every figure is a minimum: a rung over the bound is measured again, up
to ``MAX_ROUNDS`` rounds, against the fastest of all the runs at 10 KB so far. A linear case
needs one round where its large run went clean; a quadratic one cannot pass on a slowed 10 KB
run (every one of them would have to be slowed). Nothing waits for a quiet machine or has to
run last.

Measured on this 2-vCPU machine, and rejected:

- a reference run, dividing each growth by that of a linear workload of the same size timed in
  between (regex scans, Python loops, objects built): load slows each workload by its own cache
  footprint, not by a common factor, so the spread between rounds grew (median ×1.08 → ×1.09-1.31,
  worst ×2.4 → ×2.4-7.0);
- counting work (``sys.settrace`` line events): exact, but blind where the work is. 9 of the
  cases execute the same Python lines at every size (their work is in C: the regex engine,
  json), and the Python loop control below executes 9.2× the lines for ×10 in size while doing
  92× the work; tracing also costs 4-5× the time.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

from pathological import CASES, Case, best_time_s, chunks, repeat

from react_cli.loop.text import cutter

LADDER = (10_000, 100_000, 1_000_000)
MAX_GROWTH = 4.0  # time per character at a rung over that at LADDER[0]
MAX_ROUNDS = 3
BASE_RUNS = 3  # runs at LADDER[0] per round (each 0.01-6 ms)
FLOOR_S = 1e-5  # below this a time at LADDER[0] is noise, not a ratio's denominator


@dataclass(frozen=True)
class Rung:
    """One rung of the ladder: CPU seconds at ``size`` and at ``LADDER[0]``."""

    size: int
    time_s: float
    base_s: float

    @property
    def growth(self) -> float:
        """Time per character here over time per character at ``LADDER[0]``: 1 for linear
        code, ``size / LADDER[0]`` for quadratic."""
        return self.time_s / max(self.base_s, FLOOR_S) * LADDER[0] / self.size

    @property
    def linear(self) -> bool:
        return self.growth <= MAX_GROWTH

    def __str__(self) -> str:
        return (
            f"{self.growth:.2f}× linear at {self.size // 1000} KB "
            f"({self.time_s * 1000:.2f} ms; {self.base_s * 1000:.3f} ms at {LADDER[0] // 1000} KB)"
        )


def climb(case: Case) -> list[Rung]:
    """The rungs ``case`` reached, smallest first; the last is over the bound if any is.

    A round times the case ``BASE_RUNS`` times at ``LADDER[0]``, then once at the rung; rounds
    go on while the rung is over the bound, ``MAX_ROUNDS`` at most. A rung's figure is its
    fastest run against the fastest at ``LADDER[0]`` so far.
    """
    base = case.make(LADDER[0])
    base_s = float("inf")
    rungs: list[Rung] = []
    for size in LADDER[1:]:
        data = case.make(size)
        rung = Rung(size, float("inf"), base_s)
        for _ in range(MAX_ROUNDS):
            base_s = min(base_s, best_time_s(case, base, BASE_RUNS))
            rung = Rung(size, min(rung.time_s, best_time_s(case, data, 1)), base_s)
            if rung.linear:
                break
        rungs.append(rung)
        if not rung.linear:
            break
    return rungs


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_growth_is_linear(case: Case) -> None:
    rungs = climb(case)
    assert all(rung.linear for rung in rungs), "; ".join(map(str, rungs))


# The checker's controls: quadratic code, one in the C regex engine and one in a Python loop,
# over units of 2,000 characters, so the quadratic work dominates from 10 KB on and a round at
# 100 KB costs 15-30 ms. They grow about 8.5× per character at 100 KB (the bound: 4).
UNIT = 2_000
GREEDY_BRACKET = re.compile(r"Action: (.*)\]")  # from every label to the end, then back


def rescan(pieces: list[str]) -> str:
    """A stream cutter that looks for an invented Observation in all the text so far at each
    piece (ObservationCutter's bug before issue 10)."""
    text = ""
    for piece in pieces:
        text += piece
        cutter.cut_at_observation(text)
    return text


QUADRATIC = [
    Case(
        "regex: greedy '.*' after every label",
        lambda n: repeat("Action: ".ljust(UNIT, "x"), n),
        GREEDY_BRACKET.search,
    ),
    Case(
        "loop: rescans all the text per piece",
        lambda n: chunks(repeat("* _ # > ", n), UNIT),
        rescan,
    ),
]


@pytest.mark.parametrize("case", QUADRATIC, ids=[case.name for case in QUADRATIC])
def test_quadratic_growth_is_rejected_at_the_first_rung(case: Case) -> None:
    rungs = climb(case)
    assert len(rungs) == 1, "; ".join(map(str, rungs))
    assert not rungs[0].linear, rungs[0]
