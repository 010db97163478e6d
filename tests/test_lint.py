"""ruff and ``mypy --strict`` are part of the test run, so a lint or type error turns CI red
like a failing test.

Both are in the ``test`` extra: where one cannot run, its test fails (it never skips).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import background

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


def test_mypy_strict_is_clean() -> None:
    """``mypy --strict`` over the package (settings in pyproject.toml), started in the
    background at collection; its cache in the usual ``.mypy_cache`` makes a second run take a
    fraction of a second."""
    code, output = background.mypy()
    assert code == 0, output
