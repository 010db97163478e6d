"""Re-make ``docs/report.png``: the eval report of a small real run, as Chromium shows it.

The run is the test suite's scripted run A over the first six HotpotQA dev questions (``react-cli
eval`` in-process against the fake model and MediaWiki servers of ``tests/``); the browser is
Debian's ``chromium`` driven by Playwright, as in ``tests/share/test_share_browser.py``. Needs a
development install (``pip install -e '.[test]'``).

    python scripts/report_screenshot.py [OUT.png]
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "support"))

from eval_fakes import HOTPOT, PerQuestion  # noqa: E402
from share_data import A_SCRIPTS, CHROMIUM_ARGS  # noqa: E402
from share_evals import run_eval  # noqa: E402

from react_cli.share.export import write_output  # noqa: E402
from react_cli.share.report import eval_report  # noqa: E402


def main() -> None:
    from playwright.sync_api import sync_playwright

    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "report.png"
    with tempfile.TemporaryDirectory() as tmp:
        folder = run_eval(Path(tmp) / "run", PerQuestion(A_SCRIPTS), HOTPOT, "-m", "scripted-demo")
        page_path = Path(tmp) / "report.html"
        write_output(page_path, eval_report(folder))
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=shutil.which("chromium"), args=CHROMIUM_ARGS
            )
            page = browser.new_page(viewport={"width": 1100, "height": 900})
            page.goto(page_path.as_uri())
            page.screenshot(path=out, full_page=True)
            browser.close()
    print(out)


if __name__ == "__main__":
    main()
