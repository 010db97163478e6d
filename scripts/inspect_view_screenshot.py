"""Re-make ``docs/inspect-view.png`` and ``docs/inspect-transcript.png``: a question of a small
real eval exported with ``eval export --format inspect``, its trajectory as Inspect AI's viewer
shows it (the Messages tab), and its transcript's events (the Transcript tab, at the Search
call: the model call, the tool event with its argument and observation, the next model call).

The run is the test suite's scripted run A over the first six HotpotQA dev questions (``react-cli
eval`` in-process against the fake model and MediaWiki servers of ``tests/``); the viewer is
``inspect view`` (Inspect AI, in the ``test`` extra), served offline from this machine; the
browser is Debian's ``chromium`` driven by Playwright. Fails if the page fetched anything but
the local viewer. The image is reduced to 64 colours to stay small. Needs a development
install (``pip install -e '.[test]'``).

    python scripts/inspect_view_screenshot.py [OUT.png [TRANSCRIPT.png]]
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "support"))

from eval_fakes import HOTPOT, PerQuestion  # noqa: E402
from share_data import A_SCRIPTS, CHROMIUM_ARGS  # noqa: E402
from share_evals import run_eval  # noqa: E402

from react_cli.share.inspect_log import export_inspect  # noqa: E402

SIZE = {"width": 1200, "height": 640}


def main() -> None:
    from PIL import Image
    from playwright.sync_api import sync_playwright

    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "inspect-view.png"
    events = Path(sys.argv[2]) if len(sys.argv) > 2 else out.with_name("inspect-transcript.png")
    with tempfile.TemporaryDirectory() as tmp:
        folder = run_eval(Path(tmp) / "run", PerQuestion(A_SCRIPTS), HOTPOT, "-m", "scripted-demo")
        logs = Path(tmp) / "logs"
        logs.mkdir()  # a folder: the log gets the name the viewer lists
        (log,) = export_inspect(folder, logs)
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        inspect = Path(sys.executable).with_name("inspect")
        command = [str(inspect), "view", "start", "--log-dir", str(log.parent)]
        server = subprocess.Popen(
            [*command, "--host", "127.0.0.1", "--port", str(port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            _wait(f"{base}/api/log-files")
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=shutil.which("chromium"), args=CHROMIUM_ARGS
                )
                page = browser.new_page(viewport=SIZE)
                elsewhere: list[str] = []
                page.on(
                    "request",
                    lambda r: None if r.url.startswith(base) else elsewhere.append(r.url),
                )
                name = urllib.parse.quote(log.name, safe="")
                page.goto(f"{base}/#/logs/{name}/samples/sample/1/1/messages")
                page.get_by_text("Could not find [Kiss and Tell]").first.wait_for(timeout=30_000)
                page.get_by_text("Chief of Protocol of the United States").last.wait_for()
                page.locator("[data-message-id]").last.scroll_into_view_if_needed()
                page.screenshot(path=out)
                page.goto(f"{base}/#/logs/{name}/samples/sample/1/1/transcript")
                page.get_by_text("TOOL: SEARCH").first.wait_for(timeout=30_000)
                page.get_by_text("TOOL: SEARCH").first.scroll_into_view_if_needed()
                page.mouse.wheel(0, -330)  # the model call before it in view
                time.sleep(0.5)  # the scroll is smooth
                page.screenshot(path=events)
                browser.close()
            if elsewhere:
                raise SystemExit(f"the viewer fetched {elsewhere}")
        finally:
            server.terminate()
            server.wait()
    for shot in (out, events):
        Image.open(shot).convert("RGB").quantize(64).save(shot, optimize=True)
        print(shot, shot.stat().st_size, "bytes")


def _wait(url: str) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(url, timeout=1):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


if __name__ == "__main__":
    main()
