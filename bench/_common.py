"""Shared by the bench scripts: make the test helpers (fake servers, scripted models) importable."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
if str(TESTS / "support") not in sys.path:
    sys.path.insert(0, str(TESTS / "support"))
