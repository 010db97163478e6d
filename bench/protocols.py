"""Calls, prompt tokens and completion tokens per question: ``--protocol text`` vs ``tools``.

Both protocols answer the six HotpotQA questions of ``tests/fixtures/eval`` (ReAct) from the
same script on the scripted endpoint of ``tests/support/tool_fakes.py`` (the text steps of
``method_fakes``, and the same steps as native tool calls), so the figures differ only by what
each protocol sends. Tokens are the endpoint's, 4 characters a token (declared tools counted);
"first call" is the prompt of each question's first request, the paper's 6-shot prompt for text,
the instruction, the question and the three tool declarations for tools (target: at most 300).

Usage: python bench/protocols.py [--limit 6]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path
from statistics import fmean

from _common import run_eval  # (makes tests/ importable too)
from eval_fakes import HOTPOT, Q
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, _usage
from method_fakes import SCRIPTS, MethodsEndpoint
from tool_fakes import ProtocolsEndpoint, tools_script

from react_cli.eval.plan import EvalRequest

PROTOCOLS = ("text", "tools")


def question_of(body: dict[str, object]) -> str:
    text = json.dumps(body.get("messages") or body.get("prompt"))
    return next((q for q in Q if json.dumps(q)[1:-1] in text), "")


def one_eval(llm: FakeOpenAI, wiki: FakeMediaWiki, folder: Path, protocol: str, limit: int) -> None:
    flags = {"model": "m", "base_url": llm.url, "wiki": wiki.url, "protocol": protocol}
    run_eval(EvalRequest(dataset=HOTPOT, limit=limit, out=folder, flags=flags))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=6, help="questions (of the six)")
    args = parser.parse_args()
    tools = {question: tools_script(script) for question, script in SCRIPTS.items()}
    wiki = FakeMediaWiki.from_fixtures().start()
    llm = FakeOpenAI(ProtocolsEndpoint(MethodsEndpoint(SCRIPTS), tools)).start()
    figures: dict[str, dict[str, float]] = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            os.environ["REACT_CLI_HOME"] = tmp  # no config file of the user's
            for protocol in PROTOCOLS:
                before = len(llm.requests)
                one_eval(llm, wiki, Path(tmp) / protocol, protocol, args.limit)
                bodies = [r.json for r in llm.requests[before:] if r.json]
                per: dict[str, list[dict[str, int]]] = {}
                for body in bodies:
                    per.setdefault(question_of(body), []).append(_usage(body, []))
                rows = (Path(tmp) / protocol / "results.jsonl").read_text().splitlines()
                completion = [json.loads(row)["usage"]["completion_tokens"] for row in rows]
                print(f"--protocol {protocol}")
                print(f"  {'question':<48} {'calls':>5} {'prompt':>8} {'first call':>10}")
                for question, usages in per.items():
                    prompt = sum(u["prompt_tokens"] for u in usages)
                    print(
                        f"  {question[:48]:<48} {len(usages):>5} {prompt:>8,} "
                        f"{usages[0]['prompt_tokens']:>10,}"
                    )
                figures[protocol] = {
                    "calls": len(bodies) / len(per),
                    "prompt": fmean(sum(u["prompt_tokens"] for u in us) for us in per.values()),
                    "completion": fmean(completion),
                    "first": fmean(us[0]["prompt_tokens"] for us in per.values()),
                }
    finally:
        llm.stop()
        wiki.stop()
    print()
    for protocol, f in figures.items():
        print(
            f"{protocol:<6} per question: {f['calls']:.2f} calls · {f['prompt']:,.0f} prompt tokens"
            f" · {f['completion']:,.0f} completion tokens · first call {f['first']:,.0f} prompt"
            " tokens"
        )
    ratio = figures["tools"]["prompt"] / figures["text"]["prompt"]
    print(f"tools / text prompt tokens per question: {ratio:.2f}")


if __name__ == "__main__":
    main()
