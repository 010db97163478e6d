"""Debian's ``chromium`` driven by Playwright for Python (never ``playwright install``), for the
tests that open pages in a real browser: skipped when either is missing, unless
``REACT_CLI_REQUIRE_BROWSER=1`` (set by ``.ci/run``) makes that a failure.

Load as a plugin (``pytest_plugins = ["browsers"]``) and ask for ``browser``. Launching
Playwright's driver and Chromium costs about a second of CPU, so the browser launched for one
test stays open for the tests that follow it and ask for it too (``scheduling`` puts the browser
files side by side on one worker: one launch a run), and closes before a test that does not:
while Playwright's sync API is open it keeps an asyncio loop running in this thread, and any
other test's ``asyncio.run`` would refuse to start. Each test opens its own context (cookies,
storage, routes, viewport), so what one test did is never seen by the next, but the viewer tests
of ``test_inspect_export.py``, which go to their own addresses in one page of Inspect's viewer
(its app loaded once). A file's browser tests come last in it, so that the browser stays open
into the next file's (``scheduling`` runs the browser files one after the other).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from collections.abc import Generator
from typing import TYPE_CHECKING, Any

import pytest
from share_data import CHROMIUM_ARGS

if TYPE_CHECKING:
    from playwright.sync_api import Browser

_open: list[tuple[Any, Browser]] = []  # (Playwright's context manager, the browser), one at most


def _unavailable() -> str | None:
    if importlib.util.find_spec("playwright") is None:
        return "Playwright for Python is not installed (pip install -e '.[test]')"
    if shutil.which("chromium") is None:
        return "Debian's chromium is not installed (apt-get install chromium)"
    return None


@pytest.fixture
def browser() -> Browser:
    """A headless chromium (or the test skipped, see the module's docstring)."""
    if not _open:
        reason = _unavailable()
        if reason is not None:
            if os.environ.get("REACT_CLI_REQUIRE_BROWSER") == "1":
                pytest.fail(f"REACT_CLI_REQUIRE_BROWSER=1 but {reason}")
            pytest.skip(reason)
        from playwright.sync_api import sync_playwright

        manager = sync_playwright()
        playwright = manager.__enter__()
        try:
            launched = playwright.chromium.launch(
                executable_path=shutil.which("chromium"), args=CHROMIUM_ARGS
            )
        except BaseException:
            manager.__exit__(None, None, None)
            raise
        _open.append((manager, launched))
    return _open[0][1]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None]:
    """Close the browser once its test's own fixtures are gone (their contexts closed) if the
    next test does not ask for it."""
    try:
        return (yield)
    finally:
        if _open and (nextitem is None or "browser" not in nextitem.fixturenames):
            manager, launched = _open.pop()
            try:
                launched.close()
            finally:
                manager.__exit__(None, None, None)
