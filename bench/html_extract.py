"""Article HTML -> text: react-cli's extraction against a whole-page ``html.parser`` baseline.

Pages: the real Wikipedia pages in ``../shared/data/wikipedia_html/`` when that folder is
present (7 pages, 240 KB to 1 MB: desktop, Parsoid, action=parse output, en and zh);
otherwise the trimmed copies committed in ``tests/fixtures/html/``. Pass a folder to use
others. For each page both ways must give the same text; the figure is the ratio of the
median times (the goal of issue 5 is at least 5x).

Usage: python bench/html_extract.py [FOLDER] [--repeat N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from react_cli.wiki.html import article_text  # noqa: E402

SHARED = ROOT.parent / "shared" / "data" / "wikipedia_html"
FIXTURES = ROOT / "tests" / "fixtures" / "html"


def median_s(run: Callable[[], str], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", type=Path)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    folder = args.folder or (SHARED if SHARED.is_dir() else FIXTURES)
    pages = sorted(folder.glob("*.html"))
    if not pages:
        sys.exit(f"no .html pages in {folder}")
    print(f"pages: {folder} ({len(pages)}); median of {args.repeat} runs each")
    print(f"{'page':44} {'KB':>6} {'ours ms':>8} {'base ms':>8} {'ratio':>6}  same text")
    total_ours = total_base = 0.0
    all_same = True
    for path in pages:
        html = path.read_text(encoding="utf-8")
        ours = article_text(html)
        base = article_text(html, parser="html.parser", cut=False)
        same = ours == base
        all_same &= same
        t_ours = median_s(lambda html=html: article_text(html), args.repeat)
        t_base = median_s(
            lambda html=html: article_text(html, parser="html.parser", cut=False), args.repeat
        )
        total_ours += t_ours
        total_base += t_base
        print(
            f"{path.name[:44]:44} {len(html.encode()) / 1024:6.0f} {t_ours * 1000:8.1f} "
            f"{t_base * 1000:8.1f} {t_base / t_ours:5.1f}x  {'yes' if same else 'NO'}"
        )
    ratio = total_base / total_ours
    ours_ms, base_ms = total_ours * 1000, total_base * 1000
    print(f"all pages: {ours_ms:.0f} ms vs {base_ms:.0f} ms: {ratio:.1f}x faster")
    print("same text on every page" if all_same else "TEXT DIFFERS on some page")


if __name__ == "__main__":
    main()
