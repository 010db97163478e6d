"""Adaptive concurrency: ``eval`` with its defaults (``--concurrency auto``) against the best
fixed ``--concurrency``, on endpoints that serve K requests at once and queue the rest, and on
one that cuts a running stream when another request arrives (llama-cpp-python's server).

Each endpoint is ``tests/support/slot_server.py`` in a child process (with the recorded fake
Wikipedia): a request waits its turn for one of K slots, reads its prompt (``--prompt-ms``),
then writes ~45 tokens at ``--token-ms`` each, streamed or whole. Every question takes two
model calls (a Search, then Finish) and one Wikipedia search. The eval runs in this process
through the real command line (``react-cli eval DATASET --concurrency X``); throughput is
questions per second of wall time. For each endpoint the fixed levels tried are K/4 ... 4K;
the figure is auto's throughput over the best of them (goal ≥ 0.9), with no failed question.
With ``--repeat N`` each setting runs N times, interleaved, and its median run counts.

    python bench/concurrency.py [--endpoints queue1,queue4,queue16,cut] [--per-slot 24]
                                [--rule vegas|aimd|gradient2] [--only auto] [--repeat 3]

``--rule`` swaps the adaptive rule for another one (AIMD as Netflix's concurrency-limits has
it, or its Gradient2 with settings for short runs) to compare them on the same endpoints.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import sys
import tempfile
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from _common import add_in_process, questions_file, run_cli, start_servers
from eval_fakes import PerQuestion
from fake_mediawiki import FakeMediaWiki
from slot_server import SlotServer

from react_cli.infra import vegas

THOUGHT = (
    " I need to search {entity} to find out when it was started, then compare the year with"
    " the other magazine the question names."
)
ENDPOINTS = {"queue1": (1, False), "queue4": (4, False), "queue16": (16, False), "cut": (1, True)}


def serve(conn: Connection, slots: int, cut: bool, prompt_s: float, token_s: float) -> None:
    """Child process: the endpoint and the wiki; reports and resets counters on request."""
    entity = "Arthur's Magazine"
    model = PerQuestion(
        {},
        default=[
            THOUGHT.format(entity=entity) + f"\nAction 1: Search[{entity}]",
            " Arthur's Magazine was started in 1844, long before the other one was.\n"
            "Action 2: Finish[1844]",
        ],
    )
    server = SlotServer(model, slots=slots, cut=cut, prompt_s=prompt_s, token_s=token_s)
    with FakeMediaWiki.from_fixtures() as wiki, server as llm:
        conn.send((llm.url, wiki.url))
        while conn.recv() == "stats":
            conn.send({"cuts": llm.cuts, "requests": len(llm.requests), "most": llm.most})
            llm.cuts = llm.most = 0
            llm.requests.clear()


@dataclass
class Aimd:
    """Netflix's AIMDLimit: +1 while at least half used, ×0.9 on a drop or a slow answer."""

    level: int = 1
    max_level: int = 64
    timeout_s: float = 5.0

    def sample(self, sample: vegas.Sample) -> None:
        if sample.delay * sample.units > self.timeout_s:
            self.drop(sample.at)
        elif sample.inflight * 2 >= self.level:
            self.level = min(self.max_level, self.level + 1)

    def drop(self, at: float) -> None:
        self.level = max(1, min(self.level - 1, int(self.level * 0.9)))

    def restart(self, at: float) -> None:
        self.level = 1


@dataclass
class Gradient2:
    """Netflix's Gradient2Limit with settings for short runs (long window 30, min 1, queue 2)
    and a halving on drops: the long-term average delay against the short-term one."""

    level: int = 1
    max_level: int = 64
    _long: dict[str, float] = field(default_factory=dict)
    _value: float = 1.0

    def sample(self, sample: vegas.Sample) -> None:
        kind, delay, inflight = sample.kind, sample.delay, sample.inflight
        if delay <= 0:
            return
        long = self._long.get(kind, delay)
        long = long + (delay - long) / 30
        if long / delay > 2:
            long *= 0.9
        self._long[kind] = long
        if inflight < self.level / 2:
            return
        gradient = max(0.5, min(1.0, long / delay))
        new = self._value * gradient + 2
        self._value = max(1.0, min(self.max_level, self._value * 0.8 + new * 0.2))
        self.level = int(self._value)

    def drop(self, at: float) -> None:
        self._value = max(1.0, self._value / 2)
        self.level = int(self._value)

    def restart(self, at: float) -> None:
        self._long.clear()
        self._value, self.level = 1.0, 1


RULES = {"vegas": vegas.Vegas, "aimd": Aimd, "gradient2": Gradient2}


@dataclass
class Figures:
    setting: str
    wall_s: float
    questions: int
    failed: int
    level: str
    cuts: int
    most: int
    latency_s: float  # a question's, on average

    @property
    def rate(self) -> float:
        return self.questions / self.wall_s


def run_eval(
    dataset: Path, folder: Path, setting: str, llm_url: str, wiki_url: str, home: Path
) -> tuple[float, dict[str, Any]]:
    """One ``react-cli eval`` in this process; its wall time and summary."""
    env = {
        "REACT_CLI_HOME": str(home),
        "OPENAI_BASE_URL": llm_url,
        "REACT_CLI_MODEL": "slot-model",
        "REACT_CLI_WIKI": wiki_url,
        "COLUMNS": "120",
    }
    args = ["eval", str(dataset), "--out", str(folder), "--concurrency", setting]
    wall = run_cli(args, env)
    summary: dict[str, Any] = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    return wall, summary


def candidates(slots: int) -> list[int]:
    """The fixed levels tried for a K-slot endpoint: K/4, K/2, K, 2K, 4K (at least 1)."""
    return sorted({max(1, slots // 4), max(1, slots // 2), slots, 2 * slots, 4 * slots})


def bench_endpoint(name: str, args: argparse.Namespace, tmp: Path) -> list[Figures]:
    slots, cut = ENDPOINTS[name]
    parent, child = multiprocessing.Pipe()
    timing = (slots, cut, args.prompt_ms / 1000, args.token_ms / 1000)
    process = start_servers(serve, args.in_process, child, *timing)
    llm_url, wiki_url = parent.recv()
    questions = max(args.min_questions, args.per_slot * slots)
    dataset = questions_file(tmp / f"{name}.jsonl", questions)
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text("retry_backoff_s = 0.1\n", encoding="utf-8")
    settings = [str(level) for level in candidates(slots)] + ["auto"]
    if args.only:
        settings = [s for s in settings if s in args.only.split(",")]
    runs: dict[str, list[Figures]] = {setting: [] for setting in settings}
    for repeat in range(args.repeat):  # interleaved: a busy spell slows every setting alike
        for setting in settings:
            folder = tmp / f"{name}-{setting}-{repeat}"
            wall, summary = run_eval(dataset, folder, setting, llm_url, wiki_url, home)
            parent.send("stats")
            served = parent.recv()
            levels = summary.get("levels", {}).get("model", {})
            level = f"{levels.get('mean', '?')} (max {levels.get('highest', '?')})"
            if levels.get("streaming") == "stopped":
                level += ", unstreamed"
            failed = summary["failed"] + questions - summary["n"]
            served_at = (served["cuts"], served["most"], summary["avg_latency_s"] or 0.0)
            runs[setting].append(Figures(setting, wall, summary["n"], failed, level, *served_at))
    figures = [sorted(done, key=lambda f: f.wall_s)[len(done) // 2] for done in runs.values()]
    parent.send("stop")
    process.join(5)
    return figures


def main_bench() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--endpoints", default=",".join(ENDPOINTS))
    parser.add_argument("--per-slot", type=int, default=24, help="questions per slot")
    parser.add_argument("--min-questions", type=int, default=24)
    parser.add_argument("--prompt-ms", type=float, default=30.0)
    parser.add_argument("--token-ms", type=float, default=5.0)
    parser.add_argument("--rule", choices=sorted(RULES), default="vegas")
    parser.add_argument("--only", default="", help="settings to run, e.g. auto or 1,auto")
    parser.add_argument("--repeat", type=int, default=1, help="runs per setting (the median)")
    add_in_process(parser)
    args = parser.parse_args()
    vegas.Vegas = RULES[args.rule]  # type: ignore[misc]  # Limiter.auto builds this rule
    print(f"rule: {args.rule}  prompt {args.prompt_ms:g} ms  {args.token_ms:g} ms/token")
    print(
        f"{'endpoint':<9} {'setting':>7} {'wall s':>7} {'q/s':>6} {'failed':>6} "
        f"{'cuts':>5} {'most':>4} {'q lat s':>7}  level used"
    )
    worst = math.inf
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.endpoints.split(","):
            figures = bench_endpoint(name, args, Path(tmp))
            for f in figures:
                print(
                    f"{name:<9} {f.setting:>7} {f.wall_s:7.2f} {f.rate:6.2f} {f.failed:>6} "
                    f"{f.cuts:>5} {f.most:>4} {f.latency_s:7.2f}  {f.level}"
                )
            fixed = [f for f in figures if f.setting != "auto" and not f.failed]
            auto = [f for f in figures if f.setting == "auto"]
            if fixed and auto:
                best = max(fixed, key=lambda f: f.rate)
                ratio = auto[0].rate / best.rate
                worst = min(worst, ratio)
                print(
                    f"{name}: auto / best fixed ({best.setting}) = {ratio:.2f}, "
                    f"auto failed {auto[0].failed}"
                )
            sys.stdout.flush()
    if math.isfinite(worst):
        print(f"worst auto / best fixed: {worst:.2f} (goal >= 0.9)")


if __name__ == "__main__":
    main_bench()
