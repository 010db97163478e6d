"""Every regex, parser and extractor stays linear on its worst input: ×10 in size, ≤ 15× in time.

The cases and the measurement are those of ``bench/pathological.py`` (which prints the
figures): CPU time at 100 KB and 1 MB, with up to 5 rounds while a ratio is over the bound (its
``growth`` says why). Measured in the test process, and after every other test file
(``conftest.pytest_collection_modifyitems``): on this 2-vCPU machine a process busy on the
other core inflates the 1 MB times of the cache-hungry cases past the bound (measured: 15.4×
for 16-byte SSE pieces).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

from pathological import CASES, MAX_GROWTH, Case, growth


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_growth_is_linear(case: Case) -> None:
    small, large = growth(case)
    times = f"{large * 1000:.1f} ms at 1 MB, {small * 1000:.1f} at 100 KB"
    assert large / small <= MAX_GROWTH, times
