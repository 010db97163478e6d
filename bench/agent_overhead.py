"""Agent overhead per step: full runs against an instant model and an in-memory wiki.

Each run is a ``Session`` answering a question (loop, parsing, the real Wikipedia tools with
sentence splitting, trace document and atomic trace write) with the shipped hotpotqa prompt.
The model answers instantly and the wiki is a dict of real recorded pages, so what is left
after subtracting the model and tool time the loop measured itself is react-cli's own cost
per step.

    python bench/agent_overhead.py [--runs 200] [--steps 8]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import _common
from scripted import ScriptedModel

from react_cli.core.method import Method
from react_cli.infra.deadline import Deadline
from react_cli.loop.limits import hybrid_steps, run_limits
from react_cli.loop.prompts import prompt_set
from react_cli.session import Session
from react_cli.settings.settings import Settings
from react_cli.tools.base import ToolSet
from react_cli.tools.wikipedia import Wikipedia
from react_cli.traces.recorder import trace_of
from react_cli.traces.trace import now_utc
from react_cli.wiki.base import Article, SearchResult

PAGES = json.loads((_common.TESTS / "fixtures" / "wiki" / "pages.json").read_text("utf-8"))


class MemoryBackend:
    """Real recorded pages from a dict: a hit is an Article, a miss has no suggestions."""

    def search(self, entity: str, *, deadline: Deadline) -> SearchResult:
        text = PAGES.get(entity)
        return SearchResult(Article(entity, text) if text is not None else None)


def script(steps: int) -> list[str]:
    """steps - 1 searches over different pages (no repeats), then Finish."""
    titles = list(PAGES)
    outputs = [
        f" I need to look up {titles[k % len(titles)]}.\nAction {k + 1}: "
        f"Search[{titles[k % len(titles)]}]"
        for k in range(steps - 1)
    ]
    return [*outputs, f" Done.\nAction {steps}: Finish[yes]"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--steps", type=int, default=8)
    args = parser.parse_args()
    settings = Settings(model="instant", max_steps=args.steps)
    prompts = prompt_set("hotpotqa", [Method.REACT])
    backend = MemoryBackend()
    total_wall = model_s = tool_s = 0.0
    steps = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.runs):
            model = ScriptedModel(script(args.steps))
            started = time.perf_counter()
            session = Session(
                prompts,
                model,
                tools=lambda: ToolSet(Wikipedia(backend).tools()),
                limits=run_limits(settings),
                hybrid_steps=hybrid_steps(settings, prompts.task),
                sampler=model,
                settings=settings,
            )
            question = "Which magazine was started first, Arthur's Magazine or First for Women?"
            outcome, result = session.answer(question, Method.REACT)
            trace_of(session, outcome, result, created=now_utc()).write(Path(tmp) / f"{i}.json")
            total_wall += time.perf_counter() - started
            assert result.stop_reason == "finish", result.stop_reason
            steps += len(result.steps)
            model_s += sum(step.latency_s for step in result.steps)
            tool_s += sum(step.tool_latency_s for step in result.steps)
    overhead_ms = (total_wall - model_s - tool_s) / steps * 1000
    print(f"runs: {args.runs}  steps: {steps}")
    print(f"wall per step: {total_wall / steps * 1000:.3f} ms")
    print(f"tool time per step (Wikipedia over memory): {tool_s / steps * 1000:.3f} ms")
    print(f"agent overhead per step: {overhead_ms:.3f} ms (goal < 2 ms)")


if __name__ == "__main__":
    main()
