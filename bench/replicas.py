"""Replicas of one model: ``eval`` against one server, then against two and three replicas of
it (``--base-url`` repeated), each a slot server of K slots in a child process.

The servers and the questions are ``bench/concurrency.py``'s (two model calls and one Search a
question, the real command line, ``--concurrency auto``). The figure is questions per second
of wall time, and its ratio to one server's (goal: near the number of replicas); the summary
says how many questions each replica served.

    python bench/replicas.py [--slots 4] [--questions 96] [--replicas 1,2,3] [--in-process]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import tempfile
from pathlib import Path
from typing import Any

from _common import add_in_process, questions_file, run_cli, start_servers
from concurrency import serve


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slots", type=int, default=4)
    parser.add_argument("--questions", type=int, default=96)
    parser.add_argument("--replicas", default="1,2,3")
    parser.add_argument("--prompt-ms", type=float, default=100.0)
    parser.add_argument("--token-ms", type=float, default=5.0)
    add_in_process(parser)
    args = parser.parse_args()
    counts = [int(n) for n in args.replicas.split(",")]
    timing = (args.slots, False, args.prompt_ms / 1000, args.token_ms / 1000)
    servers: list[tuple[Any, Any, str, str]] = []
    for _ in range(max(counts)):
        parent, child = multiprocessing.Pipe()
        process = start_servers(serve, args.in_process, child, *timing)
        llm_url, wiki_url = parent.recv()
        servers.append((parent, process, llm_url, wiki_url))
    print(f"{args.questions} questions, slot servers of {args.slots} slots")
    print(f"{'replicas':>8} {'wall s':>7} {'q/s':>6} {'× one':>6} {'failed':>6}  questions served")
    one = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        dataset = questions_file(Path(tmp) / "questions.jsonl", args.questions)
        home = Path(tmp) / "home"
        home.mkdir()
        (home / "config.toml").write_text("retry_backoff_s = 0.1\n", encoding="utf-8")
        for count in counts:
            folder = Path(tmp) / f"run-{count}"
            urls = [url for _, _, url, _ in servers[:count]]
            env = {
                "REACT_CLI_HOME": str(home),
                "REACT_CLI_MODEL": "slot-model",
                "REACT_CLI_WIKI": servers[0][3],
                "COLUMNS": "120",
            }
            args_cli = ["eval", str(dataset), "--out", str(folder)]
            for url in urls:
                args_cli += ["--base-url", url]
            wall = run_cli(args_cli, env)
            summary: dict[str, Any] = json.loads((folder / "summary.json").read_text("utf-8"))
            rate = summary["n"] / wall
            one = one or rate
            levels = summary.get("levels", {})
            served = [levels.get(f"replica {n}", {}).get("questions") for n in range(1, count + 1)]
            failed = summary["failed"] + args.questions - summary["n"]
            shown = "+".join(map(str, served)) if count > 1 else str(summary["n"])
            print(f"{count:>8} {wall:7.2f} {rate:6.2f} {rate / one:6.2f} {failed:>6}  {shown}")
    for parent, process, _, _ in servers:
        parent.send("stop")
        process.join(5)


if __name__ == "__main__":
    main()
