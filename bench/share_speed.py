"""Share and compare at the paper's scale: trace exports, the eval report, eval compare.

Two real eval folders of N questions (three model calls each, real recorded Wikipedia pages,
the shipped ``hotpotqa`` prompt in every trace) are made first by ``react-cli eval`` in-process
against the fake servers; then each share feature is timed on them, and the report's size given.

    python bench/share_speed.py [--questions 500]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import _common  # noqa: F401  (makes the test helpers importable)
from eval_fakes import PerQuestion, finish, search
from fake_openai import Reply
from share_evals import run_eval

from react_cli.share.charts import charts
from react_cli.share.compare import compare_evals
from react_cli.share.evaldir import load_eval
from react_cli.share.html import trace_page
from react_cli.share.markdown import trace_markdown
from react_cli.share.report import eval_report
from react_cli.share.stats import BOOTSTRAP_RESAMPLES, bootstrap_ci
from react_cli.share.view import load_view

T = TypeVar("T")


def make_evals(root: Path, questions: int) -> tuple[Path, Path]:
    rows = [
        {"question": f"Which magazine came first, number {i}?", "answer": "Arthur's Magazine"}
        for i in range(questions)
    ]
    dataset = root / "questions.jsonl"
    dataset.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    folders = []
    for name, answer in (("a", "Arthur's Magazine"), ("b", "First for Women")):
        steps: list[str | Reply] = [
            search("Arthur's Magazine"),
            search("First for Women", 2),
            finish(answer, 3),
        ]
        folders.append(run_eval(root / name, PerQuestion({}, default=steps), dataset))
    return folders[0], folders[1]


def timed(function: Callable[..., T], *args: Any) -> tuple[T, float]:
    started = time.perf_counter()
    result = function(*args)
    return result, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        (a, b), made_s = timed(make_evals, Path(tmp), args.questions)
        print(f"eval folders: 2 x {args.questions} questions made in {made_s:.1f} s (setup)")
        traces = sorted((a / "traces").glob("*.json"))[:100]
        markdown = [timed(lambda p: trace_markdown(load_view(p)), p)[1] for p in traces]
        html = [timed(lambda p: trace_page(load_view(p)), p)[1] for p in traces]
        md_ms, html_ms = (statistics.median(times) * 1000 for times in (markdown, html))
        print(
            f"export per trace (median of {len(traces)}): "
            f"markdown {md_ms:.1f} ms, html {html_ms:.1f} ms"
        )
        page, report_s = timed(eval_report, a)
        _, chart_s = timed(charts, load_eval(a))
        size = len(page.encode("utf-8"))
        print(
            f"report: {args.questions} questions in {report_s:.2f} s with matplotlib's import "
            f"(charts alone {chart_s:.2f} s), {size / 1e6:.2f} MB, "
            f"{size / args.questions / 1e3:.1f} kB per question"
        )
        differences = [float(i % 3 - 1) for i in range(args.questions)]
        _, bootstrap_s = timed(lambda: bootstrap_ci(differences, seed=0))
        _, compare_s = timed(compare_evals, a, b)
        print(
            f"compare: {args.questions} paired questions in {compare_s:.2f} s "
            f"(bootstrap of {BOOTSTRAP_RESAMPLES:,} resamples alone: {bootstrap_s:.2f} s)"
        )


if __name__ == "__main__":
    main()
