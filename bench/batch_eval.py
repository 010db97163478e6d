"""``eval --batch`` against the scripted Batch API: waves, requests and cost against the same
eval run live.

``--questions`` ReAct questions, question i taking ``1 + i % --most-steps`` steps (a Search a
step, then Finish), answered by one script both ways: live by ``tests/support/fake_openai.py``,
in batches by ``tests/support/batch_server.py`` (each batch in progress for ``--polls`` looks),
with the recorded fake Wikipedia, all on threads of this process; both evals run through the
real command line with the same prices. The waves should be the longest run's calls, the
lines the live eval's requests, the cost half, and the rows the same.

    python bench/batch_eval.py [--questions 50] [--most-steps 5] [--polls 1]
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import run_cli
from batch_server import BatchServer
from eval_fakes import finish, prompt_of, question_of
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, Reply

ENTITIES = ("Arthur's Magazine", "First for Women", "Kiss and Tell", "Shirley Temple")
KEPT = ("index", "answer", "em", "f1", "stop_reason", "steps", "tokens")
_NUMBER = re.compile(r"magazine (\d+)")
_STEP = re.compile(r"Thought (\d+):$")


class Script:
    """Question i searches ``i % most`` times (another page each time), then finishes."""

    def __init__(self, most: int) -> None:
        self.most = most

    def __call__(self, body: dict[str, Any]) -> Reply:
        found = _NUMBER.search(question_of(body))
        steps = 1 + (int(found.group(1)) if found else 0) % self.most
        match = _STEP.search(prompt_of(body))
        step = int(match.group(1)) if match else 1
        if step >= steps:
            return Reply(text=finish("1844", step))
        entity = ENTITIES[(step - 1) % len(ENTITIES)]
        return Reply(text=f" I need to search {entity}.\nAction {step}: Search[{entity}]")


def dataset(path: Path, count: int) -> Path:
    rows = [{"question": f"When was magazine {i} started?", "answer": "1844"} for i in range(count)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def rows(folder: Path) -> list[dict[str, Any]]:
    lines = (folder / "results.jsonl").read_text(encoding="utf-8").splitlines()
    return sorted(({k: json.loads(line).get(k) for k in KEPT} for line in lines), key=str)


def summary(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    return data


def main_bench() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=50)
    parser.add_argument("--most-steps", type=int, default=5)
    parser.add_argument("--polls", type=int, default=1)
    args = parser.parse_args()
    script = Script(args.most_steps)
    with tempfile.TemporaryDirectory() as tmp, FakeMediaWiki.from_fixtures() as wiki:
        home = Path(tmp) / "home"
        home.mkdir()
        (home / "config.toml").write_text(
            'retries = 2\nretry_backoff_s = 0.01\n[prices]\n"fake" = { input = 0.15, '
            "output = 0.60 }\n",
            encoding="utf-8",
        )
        data = dataset(Path(tmp) / "questions.jsonl", args.questions)
        base = {"REACT_CLI_HOME": str(home), "REACT_CLI_MODEL": "fake", "REACT_CLI_WIKI": wiki.url}
        with FakeOpenAI(script) as llm:
            env = {**base, "OPENAI_BASE_URL": llm.url}
            live_s = run_cli(["eval", str(data), "--out", str(Path(tmp) / "live")], env)
            live_requests = len(llm.requests)
        with BatchServer(script, polls=args.polls) as server:
            env = {**base, "OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "sk-bench"}
            started = time.perf_counter()
            out = Path(tmp) / "batch"
            run_cli(["eval", str(data), "--out", str(out), "--batch", "--batch-poll", "0.05"], env)
            batch_s = time.perf_counter() - started
        live, batch = summary(Path(tmp) / "live"), summary(Path(tmp) / "batch")
        same = rows(Path(tmp) / "live") == rows(Path(tmp) / "batch")
        longest = max(row["steps"] for row in rows(Path(tmp) / "live"))
    print(f"questions: {args.questions} ReAct, 1 to {args.most_steps} steps each")
    print(f"live:  {live_requests} requests, cost {live['total_cost']:.6f}, {live_s:.2f} s")
    print(
        f"batch: {server.created} waves (longest run: {longest} calls), {server.lines} lines "
        f"in {server.uploads} files, {server.gets} polls, cost {batch['total_cost']:.6f}, "
        f"{batch_s:.2f} s"
    )
    print(f"batch / live cost: {batch['total_cost'] / live['total_cost']:.3f}")
    print(f"same rows (answers, scores, steps, tokens): {same}")


if __name__ == "__main__":
    main_bench()
