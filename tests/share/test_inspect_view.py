"""``inspect view`` shows the exported logs: Inspect AI's own viewer, in a real browser.

One ``inspect view`` server (Inspect's console script, a process of its own, started once for
the module while the test evals are exported) serves a folder holding the logs of a test eval
and of the hostile eval; Debian's ``chromium`` driven by Playwright opens them. The viewer is
served offline (nothing but the server is fetched), lists the logs by their names, shows a
sample's trajectory, and shows hostile text as plain text: no markup rendered, no script run,
no image or link fetched. Skipped when chromium, Playwright or Inspect's script is missing,
unless ``REACT_CLI_REQUIRE_BROWSER=1`` (set by ``.ci/run``).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from share_data import CHROMIUM_ARGS

from react_cli.share.inspect_log import export_inspect

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytest_plugins = ["share_evals"]
INSPECT = Path(sys.executable).with_name("inspect")
STARTUP_S = 60.0  # a busy machine imports Inspect's server slowly; it is ready far sooner


def _unavailable() -> str | None:
    if not INSPECT.is_file():
        return "Inspect AI is not installed (pip install -e '.[test]')"
    try:
        import playwright  # noqa: F401
    except ImportError:
        return "Playwright for Python is not installed (pip install -e '.[test]')"
    if shutil.which("chromium") is None:
        return "Debian's chromium is not installed (apt-get install chromium)"
    return None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("inspect-logs")


@pytest.fixture(scope="module")
def viewer(logs: Path, eval_a: Path, eval_hostile: Path) -> Iterator[str]:
    """``inspect view`` on ``logs`` (started first: it loads while the evals are exported)."""
    reason = _unavailable()
    if reason is not None:
        if os.environ.get("REACT_CLI_REQUIRE_BROWSER") == "1":
            pytest.fail(f"REACT_CLI_REQUIRE_BROWSER=1 but {reason}")
        pytest.skip(reason)
    port = _free_port()
    home = logs.parent / "inspect-home"
    env = {**os.environ, "HOME": str(home), "XDG_DATA_HOME": str(home / "data")}
    command = [str(INSPECT), "view", "start", "--log-dir", str(logs), "--host", "127.0.0.1"]
    server = subprocess.Popen(
        [*command, "--port", str(port)],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        export_inspect(eval_a, logs)
        export_inspect(eval_hostile, logs)
        base = f"http://127.0.0.1:{port}"
        _wait_for(server, f"{base}/api/log-files")
        yield base
    finally:
        server.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            server.wait(timeout=5)
        if server.poll() is None:
            server.kill()
        server.wait()
        assert server.stderr is not None
        server.stderr.close()


def _wait_for(server: subprocess.Popen[bytes], url: str) -> None:
    """Until the server answers ``url`` (it is up), or it dies (its stderr in the failure)."""
    deadline = time.monotonic() + STARTUP_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            assert server.stderr is not None
            pytest.fail(f"inspect view ended: {server.stderr.read().decode(errors='replace')}")
        try:
            with urllib.request.urlopen(url, timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    pytest.fail(f"inspect view did not answer {url} within {STARTUP_S:g} s")


@pytest.fixture(scope="module")
def browser(viewer: str) -> Iterator[Browser]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=shutil.which("chromium"), args=CHROMIUM_ARGS
        )
        yield chromium
        chromium.close()


class Visit:
    """A page of the viewer that records every request elsewhere (aborted), dialog, page
    error and console error but the viewer's own probes for files a log may lack (404)."""

    def __init__(self, browser: Browser, base: str) -> None:
        self.base = base
        self.context = browser.new_context(viewport={"width": 1280, "height": 800})
        self.context.set_default_timeout(20_000)  # the viewer parses logs in a web worker
        self.problems: list[str] = []
        self.context.route("**/*", self._route)
        self.page: Page = self.context.new_page()
        self.page.on("dialog", self._dialog)
        self.page.on("pageerror", lambda error: self.problems.append(f"page error: {error}"))
        self.page.on("console", self._console)

    def _route(self, route: Any) -> None:
        url = route.request.url
        if url.startswith((self.base + "/", "data:", "blob:")):
            route.continue_()
        else:
            self.problems.append(f"fetched {url}")
            route.abort()

    def _dialog(self, dialog: Any) -> None:
        self.problems.append(f"dialog: {dialog.message}")
        dialog.dismiss()

    def _console(self, message: Any) -> None:
        if message.type == "error" and "404" not in message.text:
            self.problems.append(f"console error: {message.text}")

    def sample(self, log: str, sample_id: int) -> Page:
        name = urllib.parse.quote(log, safe="")
        self.page.goto(f"{self.base}/#/logs/{name}/samples/sample/{sample_id}/1/messages")
        return self.page


@pytest.fixture
def visit(browser: Browser, viewer: str) -> Iterator[Visit]:
    visit = Visit(browser, viewer)
    yield visit
    visit.context.close()


def listed(viewer: str) -> dict[str, str]:
    """The logs ``inspect view`` lists: task by file name."""
    with urllib.request.urlopen(f"{viewer}/api/log-files", timeout=5) as answer:
        files = json.load(answer)["files"]
    return {Path(urllib.parse.urlsplit(f["name"]).path).name: f["task"] for f in files}


def test_the_viewer_lists_both_logs_and_shows_a_trajectory(visit: Visit, viewer: str) -> None:
    names = listed(viewer)
    assert sorted(names.values()) == ["hostile-react", "hotpotqa-dev-first6-react"]
    page = visit.page
    page.goto(viewer + "/")
    page.get_by_text("hotpotqa_dev_first6-react").first.wait_for()
    log = next(name for name, task in names.items() if task == "hotpotqa-dev-first6-react")
    page = visit.sample(log, 1)
    page.get_by_text("Could not find [Kiss and Tell]").first.wait_for()
    assert page.get_by_text('entity: "Kiss and Tell"').count() == 1  # the Search call
    assert page.get_by_text("Chief of Protocol of the United States").count() >= 1
    assert visit.problems == []


def test_hostile_text_shows_as_plain_text(visit: Visit, viewer: str) -> None:
    log = next(name for name, task in listed(viewer).items() if task == "hostile-react")
    page = visit.sample(log, 1)  # the question whose Search reads the evil page
    question = page.locator("[data-message-id='msg-1']")  # the user's message: the question
    question.locator("[class*='untrustedText']").wait_for()  # the viewer's plain-text block
    assert "**bold** _em_ `code` [link](javascript:alert(3))" in question.inner_text()
    page.get_by_text('entity: "Evil page"').first.wait_for()
    # a log trusting its content renders each message as .markdown-content (<strong>, links)
    rendered = "strong, .markdown-content, img[src='x'], a[href*='evil.example'], a[href^='java']"
    assert page.locator("[data-message-id]").locator(rendered).count() == 0
    assert visit.problems == []
