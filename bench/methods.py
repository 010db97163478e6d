"""Model calls and tokens per question of each of the paper's methods, on a scripted endpoint.

Each method is evaluated alone over the six HotpotQA questions of ``tests/fixtures/eval``
(the scripted endpoint of ``tests/support/method_fakes.py``: every kind of call answered, CoT-SC's
samples varied, ReAct answering at step 1, 2 or 8, or never), then all seven in one
``eval --methods all`` pass, which runs each building block of a question once. Calls are
counted on the server; tokens are the endpoint's (4 characters a token).

Usage: python bench/methods.py [--samples 21] [--n answer|refuse|ignore] [--limit 6]
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from _common import run_eval  # (makes tests/ importable too)
from eval_fakes import HOTPOT
from fake_mediawiki import FakeMediaWiki
from fake_openai import N_MODES, FakeOpenAI
from method_fakes import SCRIPTS, MethodsEndpoint

from react_cli.core.method import Method
from react_cli.eval.plan import EvalRequest
from react_cli.eval.summary import Summary


class Servers:
    """One fake Wikipedia and one scripted endpoint for every eval; each eval gets the script
    afresh (its samples handed out from the first again)."""

    def __init__(self, n: str) -> None:
        self.wiki = FakeMediaWiki.from_fixtures().start()
        self.endpoint = MethodsEndpoint(SCRIPTS)
        self.llm = FakeOpenAI(lambda body: self.endpoint(body), n=n).start()

    def close(self) -> None:
        self.llm.stop()
        self.wiki.stop()

    def one_eval(self, folder: Path, methods: str, samples: int, limit: int) -> tuple[Summary, int]:
        """An eval of ``methods`` into ``folder``: its summary and the requests it made."""
        self.endpoint, before = MethodsEndpoint(SCRIPTS), len(self.llm.requests)
        flags = {"model": "m", "base_url": self.llm.url, "wiki": self.wiki.url, "samples": samples}
        run_eval(EvalRequest(dataset=HOTPOT, limit=limit, out=folder, methods=methods, flags=flags))
        return _summary(folder), len(self.llm.requests) - before


def _summary(folder: Path) -> Summary:
    from react_cli.eval.files import SUMMARY, read_summary

    summary = read_summary(folder / SUMMARY)
    assert summary is not None
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=21)
    parser.add_argument("--n", choices=N_MODES, default="answer", help="how the endpoint treats n")
    parser.add_argument("--limit", type=int, default=6, help="questions (of the six)")
    args = parser.parse_args()
    servers = Servers(args.n)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["REACT_CLI_HOME"] = tmp  # no config file of the user's
        alone: dict[str, tuple[float, float, float]] = {}
        for method in Method:
            folder = Path(tmp) / str(method)
            summary, requests = servers.one_eval(folder, str(method), args.samples, args.limit)
            figures = summary.figures  # a method alone: the eval's own figures are its
            alone[str(method)] = (
                requests / figures.n,
                figures.avg_tokens or 0.0,
                figures.em or 0.0,
            )
        shared, requests = servers.one_eval(Path(tmp) / "all", "all", args.samples, args.limit)
    servers.close()
    questions = shared.figures.n
    table = dict(shared.methods)
    print(f"{questions} questions, {args.samples} samples, n {args.n}")
    head = f"{'method':<14} {'EM':>6} {'calls/q':>8} {'tokens/q':>9}"
    print(f"{head}   in one pass: calls/q (shared work counted for each method using it)")
    for method in Method:
        calls, tokens, em = alone[str(method)]
        cells = dict(table[str(method)])
        print(
            f"{method.label:<14} {em:>6.3f} {calls:>8.2f} {tokens:>9,.0f}   "
            f"{float(cells['avg_calls']):>6.2f}"
        )
    separate = sum(calls for calls, _, _ in alone.values())
    print(f"all seven one by one: {separate:.2f} calls/q")
    print(f"all seven in one pass (--methods all): {requests / questions:.2f} calls/q")


if __name__ == "__main__":
    main()
