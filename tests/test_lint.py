"""ruff is part of the test run, so a lint error turns CI red like a failing test.

ruff is in the ``test`` extra: where it cannot run, this test fails (it never skips).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_ruff_is_clean() -> None:
    paths = [name for name in ("react_cli", "tests", "bench") if (ROOT / name).exists()]
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", *paths],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
