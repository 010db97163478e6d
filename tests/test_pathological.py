"""Every regex, parser and extractor stays linear on its worst input: ×10 in size, ≤ 15× in time.

The cases and the measurement are those of ``bench/pathological.py``: CPU time at 100 KB and
1 MB, with up to 5 rounds while a ratio is over the bound (its ``growth`` says why). Its
``--check`` run starts in a process of its own when collection ends (``background``), so the
CPU times are those of the measured code alone, taken on the machine's other core.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import background
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

from pathological import CASES, MAX_GROWTH


def measured() -> dict[str, tuple[float, float]]:
    result = background.GROWTH.result()
    assert result.returncode == 0, result.stdout
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    return {row["case"]: (row["small_s"], row["large_s"]) for row in rows}


@pytest.mark.parametrize("name", [case.name for case in CASES])
def test_growth_is_linear(name: str) -> None:
    small, large = measured()[name]
    assert large / small <= MAX_GROWTH, (
        f"{large * 1000:.1f} ms at 1 MB, {small * 1000:.1f} at 100 KB"
    )
