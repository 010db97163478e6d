"""The cache: a second identical ``eval --cache`` makes no model and no Wikipedia request,
writes the same rows (answers and scores), and takes a fraction of the first run's time.

The endpoint is ``tests/support/slot_server.py`` serving ``--slots`` requests at once (a local
server: a call reads its prompt in ``--prompt-ms`` and writes ~45 tokens at ``--token-ms``
each, about a second a call by default), with the recorded fake Wikipedia, in a child process;
both evals run in this process through the real command line, with the defaults (``--concurrency
auto``) and a fresh home directory (an empty cache) for the first.

    python bench/cache.py [--questions 40] [--slots 4] [--prompt-ms 100] [--token-ms 20]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import tempfile
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from _common import add_in_process, questions_file, run_cli, start_servers
from eval_fakes import PerQuestion, finish
from fake_mediawiki import FakeMediaWiki
from slot_server import SlotServer

KEPT = ("index", "answer", "em", "f1", "evidence", "stop_reason", "steps")


THOUGHT = " I need to search {0} to find out when it was started, then compare.\nAction 1: "


def serve(conn: Connection, slots: int, prompt_s: float, token_s: float) -> None:
    """Child process: both fake servers; reports the requests each received on request."""
    entity = "Arthur's Magazine"
    model = PerQuestion(
        {}, default=[THOUGHT.format(entity) + f"Search[{entity}]", finish("1844", 2)]
    )
    endpoint = SlotServer(model, slots=slots, prompt_s=prompt_s, token_s=token_s)
    with FakeMediaWiki.from_fixtures() as wiki, endpoint as llm:
        conn.send((llm.url, wiki.url))
        while conn.recv() == "count":
            conn.send((len(llm.requests), len(wiki.requests)))


def run_eval(dataset: Path, folder: Path, env: dict[str, str]) -> float:
    return run_cli(["eval", str(dataset), "--cache", "--out", str(folder)], env)


def rows(folder: Path) -> list[dict[str, Any]]:
    lines = (folder / "results.jsonl").read_text(encoding="utf-8").splitlines()
    return sorted(({k: json.loads(line).get(k) for k in KEPT} for line in lines), key=str)


def main_bench() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=40)
    parser.add_argument("--slots", type=int, default=4)
    parser.add_argument("--prompt-ms", type=float, default=100.0)
    parser.add_argument("--token-ms", type=float, default=20.0)
    add_in_process(parser)
    args = parser.parse_args()
    parent, child = multiprocessing.Pipe()
    timing = (args.slots, args.prompt_ms / 1000, args.token_ms / 1000)
    servers = start_servers(serve, args.in_process, child, *timing)
    llm_url, wiki_url = parent.recv()
    with tempfile.TemporaryDirectory() as tmp:
        dataset = questions_file(Path(tmp) / "questions.jsonl", args.questions)
        env = {
            "REACT_CLI_HOME": str(Path(tmp) / "home"),
            "OPENAI_BASE_URL": llm_url,
            "REACT_CLI_MODEL": "fake",
            "REACT_CLI_WIKI": wiki_url,
        }
        walls, counts = [], []
        for run in ("first", "second"):
            walls.append(run_eval(dataset, Path(tmp) / run, env))
            parent.send("count")
            counts.append(parent.recv())
        same = rows(Path(tmp) / "first") == rows(Path(tmp) / "second")
        summary = json.loads((Path(tmp) / "second" / "summary.json").read_text("utf-8"))
    parent.send("stop")
    servers.join(5)
    (model_1, wiki_1), (model_2, wiki_2) = counts
    print(
        f"questions: {args.questions}  endpoint: {args.slots} at once, prompt "
        f"{args.prompt_ms:g} ms, {args.token_ms:g} ms a token"
    )
    print(f"first run:  {walls[0]:.2f} s, {model_1} model and {wiki_1} Wikipedia requests")
    print(
        f"second run: {walls[1]:.2f} s, {model_2 - model_1} model and {wiki_2 - wiki_1} "
        f"Wikipedia requests, {summary.get('cached_tokens', 0):,} tokens answered from the cache"
    )
    print(f"same rows (answers and scores): {same}")
    print(f"second / first: {walls[1] / walls[0]:.3f} (goal < 0.05)")


if __name__ == "__main__":
    main_bench()
