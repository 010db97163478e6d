"""Debian's ``chromium`` driven by Playwright for Python (never ``playwright install``), for the
tests that open pages in a real browser: skipped when either is missing, unless
``REACT_CLI_REQUIRE_BROWSER=1`` (set by ``.ci/run``) makes that a failure."""

from __future__ import annotations

import importlib.util
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import pytest
from share_data import CHROMIUM_ARGS

if TYPE_CHECKING:
    from playwright.sync_api import Browser


def _unavailable() -> str | None:
    if importlib.util.find_spec("playwright") is None:
        return "Playwright for Python is not installed (pip install -e '.[test]')"
    if shutil.which("chromium") is None:
        return "Debian's chromium is not installed (apt-get install chromium)"
    return None


@contextmanager
def chromium() -> Iterator[Browser]:
    """A headless chromium for a module's tests (or the test skipped, see the docstring)."""
    reason = _unavailable()
    if reason is not None:
        if os.environ.get("REACT_CLI_REQUIRE_BROWSER") == "1":
            pytest.fail(f"REACT_CLI_REQUIRE_BROWSER=1 but {reason}")
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=shutil.which("chromium"), args=CHROMIUM_ARGS
        )
        yield browser
        browser.close()
