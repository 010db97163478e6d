"""A real browser opens an exported trace and an eval report: steps expand, filters and sorting
work, charts load, nothing is fetched, no CSP violation, and the page is not blank.

Debian's ``chromium`` driven by Playwright for Python (never ``playwright install``). Skipped
when either is missing, unless ``REACT_CLI_REQUIRE_BROWSER=1`` (set by ``.ci/run``) makes that
a failure.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from share_data import TRACES

from react_cli.share.export import ExportFormat, export_trace, write_output

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytest_plugins = ["share_evals", "browsers"]  # browsers: the ``browser`` fixture


class Visit:
    """A page in a fresh context that records console errors, page errors and any fetch."""

    def __init__(self, browser: Browser) -> None:
        self.context = browser.new_context(viewport={"width": 1200, "height": 900})
        self.context.set_default_timeout(5_000)  # a missing element fails fast
        self.problems: list[str] = []
        self.context.route("**/*", self._route)
        self.page: Page = self.context.new_page()
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda error: self.problems.append(f"page error: {error}"))

    def _route(self, route: Any) -> None:
        url = route.request.url
        if url.startswith(("file://", "data:")):
            route.continue_()
        else:
            self.problems.append(f"fetched {url}")
            route.abort()

    def _console(self, message: Any) -> None:
        if message.type in ("error", "warning"):  # CSP violations are reported as errors
            self.problems.append(f"console {message.type}: {message.text}")

    def open(self, path: Path, fragment: str = "") -> Page:
        self.page.goto(path.as_uri() + fragment)
        return self.page

    def open_states(self, selector: str) -> list[bool]:
        return list(self.page.eval_on_selector_all(selector, "all => all.map(d => d.open)"))


@pytest.fixture
def visit(browser: Browser) -> Iterator[Visit]:
    visit = Visit(browser)
    yield visit
    visit.context.close()


def not_blank(png: bytes) -> float:
    """The screenshot's grey-level standard deviation (0 for a blank page), asserted high."""
    from PIL import Image, ImageStat

    image = Image.open(io.BytesIO(png)).convert("L")
    deviation = float(ImageStat.Stat(image).stddev[0])
    assert deviation > 20, f"screenshot looks blank (grey-level deviation {deviation:.1f})"
    assert len(image.getcolors(maxcolors=1 << 16) or []) > 20
    return deviation


def test_trace_page_steps_expand_and_raw_text_shows(visit: Visit, tmp_path: Path) -> None:
    trace = next(path for path in TRACES if path.name == "arthurs-magazine.json")
    html = tmp_path / "run.html"
    write_output(html, export_trace(trace, ExportFormat.HTML))
    page = visit.open(html)
    assert page.title().startswith("ReAct run: Which magazine")
    assert page.evaluate("getComputedStyle(document.body).maxWidth") == "1152px"  # CSS ran
    assert visit.open_states("details.step") == [False, False, False]
    thought = page.get_by_text("I need to search Arthur's Magazine and First for Women")
    assert not thought.first.is_visible()
    page.locator("details.step > summary").first.click()
    assert visit.open_states("details.step") == [True, False, False]
    assert thought.first.is_visible()
    raw = page.locator("details.step").first.locator("details.raw")
    raw.locator("summary").click()
    assert raw.locator("pre").is_visible()
    button = page.locator("button[data-expand]")
    assert button.text_content() == "Expand all steps"
    button.click()  # the inline script, allowed by its hash, ran
    assert visit.open_states("details.step") == [True, True, True]
    assert button.text_content() == "Collapse all steps"
    page.set_viewport_size({"width": 375, "height": 800})  # a phone: nothing wider than it
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    not_blank(page.screenshot(full_page=True))
    assert visit.problems == []


def visible_rows(page: Page) -> list[str]:
    return list(
        page.eval_on_selector_all(
            "#questions tbody tr",
            "rows => rows.filter(r => !r.hidden).map(r => r.cells[0].textContent)",
        )
    )


def test_report_filters_sorts_opens_trajectories(
    visit: Visit, report_a: str, tmp_path: Path
) -> None:
    html = tmp_path / "report.html"
    write_output(html, report_a)
    page = visit.open(html)
    loaded = page.eval_on_selector_all("figure img", "all => all.map(i => i.naturalWidth)")
    assert len(loaded) == 4 and all(width > 300 for width in loaded)  # the SVG charts drew
    assert visible_rows(page) == ["0", "1", "2", "3", "4", "5"]
    page.get_by_role("button", name="Wrong", exact=True).click()
    assert visible_rows(page) == ["1", "3", "4", "5"]
    assert page.locator("#shown").text_content() == "4 of 6 questions"
    page.get_by_role("button", name="No answer").click()
    assert visible_rows(page) == ["5"]
    page.get_by_role("button", name="All").click()
    header = page.locator("#questions thead th", has_text="steps")
    header.locator("button").click()
    assert visible_rows(page) == ["0", "3", "4", "1", "2", "5"]  # 1, 1, 1, 2, 2, 3 steps
    assert header.get_attribute("aria-sort") == "ascending"
    header.locator("button").click()
    assert visible_rows(page) == ["5", "1", "2", "0", "3", "4"]
    assert not page.locator("#q5").is_visible()
    page.locator("#questions a[href='#q5']").click()
    assert page.locator("#q5").is_visible() and not page.locator("#q0").is_visible()
    assert page.locator("#q5 details.step").count() == 3
    page.locator("#q5 details.step > summary").first.click()
    assert page.locator("#q5").get_by_text("Thought 1:").is_visible()
    page.goto(html.as_uri())
    not_blank(page.screenshot(path=tmp_path / "report.png", full_page=True))
    assert visit.problems == []
