"""A short eval's start: the default ``eval`` (``--concurrency auto``) against the best fixed
``--concurrency`` on endpoints of 1, 4 and 16 slots, 48 questions, about 0.5 s a call.

The endpoints and the eval are ``bench/concurrency.py``'s (a slot server in a child process,
two model calls and one Search a question, the real command line), with a short eval's
figures: 48 questions whatever the slots, 300 ms to read a prompt and 5 ms a token (0.4–0.5 s
a call). The figure is auto's wall time over the best fixed level's (goal ≤ 1.25), and each
setting's over the ideal (calls × call time / slots).

    python bench/slow_start.py [--endpoints queue1,queue4,queue16] [--repeat 1] [--questions 48]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import concurrency
from _common import add_in_process

QUESTIONS = 48


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--endpoints", default="queue1,queue4,queue16")
    parser.add_argument("--repeat", type=int, default=1, help="runs per setting (the median)")
    parser.add_argument("--only", default="", help="settings to run, e.g. auto or 16,auto")
    parser.add_argument("--questions", type=int, default=QUESTIONS)
    parser.add_argument("--prompt-ms", type=float, default=300.0)
    parser.add_argument("--token-ms", type=float, default=5.0)
    add_in_process(parser)
    args = parser.parse_args()
    settings = argparse.Namespace(
        per_slot=0,
        min_questions=args.questions,
        prompt_ms=args.prompt_ms,
        token_ms=args.token_ms,
        only=args.only,
        repeat=args.repeat,
        in_process=args.in_process,
    )
    call_s = (args.prompt_ms + 40 * args.token_ms) / 1000
    print(f"{args.questions} questions, ~{call_s:.2f} s a call")
    print(f"{'endpoint':<9} {'setting':>7} {'wall s':>7} {'/ ideal':>7} {'failed':>6}  level used")
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.endpoints.split(","):
            slots = concurrency.ENDPOINTS[name][0]
            ideal = max(args.questions * 2 * call_s / slots, 1e-3)
            figures = concurrency.bench_endpoint(name, settings, Path(tmp))
            for f in figures:
                print(
                    f"{name:<9} {f.setting:>7} {f.wall_s:7.2f} {f.wall_s / ideal:7.2f} "
                    f"{f.failed:>6}  {f.level}"
                )
            fixed = [f for f in figures if f.setting != "auto" and not f.failed]
            auto = [f for f in figures if f.setting == "auto"]
            if fixed and auto:
                best = min(fixed, key=lambda f: f.wall_s)
                ratio = auto[0].wall_s / best.wall_s
                worst = max(worst, ratio)
                print(f"{name}: auto / best fixed ({best.setting}) = {ratio:.2f} wall time")
            sys.stdout.flush()
    if worst:
        print(f"worst auto / best fixed: {worst:.2f} (goal <= 1.25)")


if __name__ == "__main__":
    main()
