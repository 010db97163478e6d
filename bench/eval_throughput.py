"""Eval throughput: N questions against a local fake endpoint with a fixed latency per call.

Every question takes two model calls (Search, then Finish) and one Wikipedia search against a
local fake MediaWiki, all over real HTTP on loopback. The fake servers run in a child process,
so their own CPU time is not charged to react-cli (``--in-process``: on a thread, for a smoke
test). The figure is wall time / ideal, where
ideal = calls x latency / concurrency: how close ``eval`` gets to keeping C calls in flight.

    python bench/eval_throughput.py [--questions 200] [--latency 0.2] [--concurrency 10]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import tempfile
import time
from multiprocessing.connection import Connection
from pathlib import Path

from _common import add_in_process, start_servers
from eval_fakes import PerQuestion, finish, search
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI

from react_cli.core.method import Method
from react_cli.eval.datasets import Selection, load_dataset
from react_cli.eval.plan import EvalPlan
from react_cli.eval.runner import claimed, evaluate, shared_limits
from react_cli.loop.prompts import prompt_set
from react_cli.session import open_session
from react_cli.settings.settings import Settings

CALLS_PER_QUESTION = 2


def serve(conn: Connection, latency: float) -> None:
    """Child process: run both fake servers, send their URLs, serve until told to stop."""
    model = PerQuestion(
        {}, default=[search("Arthur's Magazine"), finish("1844", 2)], delay_s=latency
    )
    with FakeMediaWiki.from_fixtures() as wiki, FakeOpenAI(model) as llm:
        conn.send((llm.url, wiki.url))
        conn.recv()
        conn.send(len(llm.requests))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per model call")
    parser.add_argument("--concurrency", type=int, default=10)
    parser.add_argument("--wiki-concurrency", type=int, default=2)
    add_in_process(parser)
    args = parser.parse_args()
    parent, child = multiprocessing.Pipe()
    servers = start_servers(serve, args.in_process, child, args.latency)
    llm_url, wiki_url = parent.recv()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "questions.jsonl"
        rows = [
            {"question": f"When was magazine {i} started?", "answer": "1844"}
            for i in range(args.questions)
        ]
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
        dataset = load_dataset(path)
        settings = Settings(model="fake", base_url=llm_url, wiki=wiki_url)
        plan = EvalPlan(
            dataset=dataset,
            examples=dataset.examples,
            selection=Selection(),
            settings=settings,
            methods=(Method.REACT,),
            prompts=prompt_set("hotpotqa", [Method.REACT]),
            folder=Path(tmp) / "out",
            concurrency=args.concurrency,
            wiki_concurrency=args.wiki_concurrency,
        )
        shared, used = shared_limits(plan)
        session = open_session(settings, plan.prompts, shared=shared)
        with claimed(plan) as folder, session as opened:  # imports requests: not throughput
            started = time.perf_counter()
            result = evaluate(plan, folder, opened, concurrency=used)
            wall = time.perf_counter() - started
    parent.send("stop")
    calls = parent.recv()
    servers.join()
    figures = result.summary.figures
    assert figures.n == args.questions and figures.em == 1.0, figures
    assert calls == CALLS_PER_QUESTION * args.questions
    ideal = calls * args.latency / args.concurrency
    print(f"questions: {args.questions}  calls: {calls}  latency: {args.latency * 1000:.0f} ms")
    print(f"concurrency: {args.concurrency}  wiki concurrency: {args.wiki_concurrency}")
    print(f"wall: {wall:.3f} s  ideal: {ideal:.3f} s")
    print(f"mean question latency: {(figures.avg_latency_s or 0) * 1000:.1f} ms")
    print(f"wall / ideal: {wall / ideal:.3f} (goal <= 1.1)")


if __name__ == "__main__":
    main()
