"""Re-record the example traces in ``examples/traces/`` (run from the repository root).

Wikipedia is the test suite's fake MediaWiki server serving the recorded real pages in
``tests/fixtures/wiki``; the model is either the test suite's fake endpoint playing a scripted
clean run (and a hybrid method's samples and back-off), or a real OpenAI-compatible server
given with ``--base-url`` and ``-m``::

    python examples/record_traces.py
    python examples/record_traces.py --base-url http://127.0.0.1:8765/v1 -m gemma-3-270m
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "support"))

from eval_fakes import Q  # noqa: E402
from fake_mediawiki import FakeMediaWiki  # noqa: E402
from fake_openai import FakeOpenAI, Reply, scripted  # noqa: E402
from method_fakes import SCRIPTS, MethodsEndpoint  # noqa: E402
from tool_fakes import tool_call  # noqa: E402

OUT = Path("examples/traces")
QUESTION = "Which magazine was started first, Arthur's Magazine or First for Women?"
CLEAN_RUN = (
    " I need to search Arthur's Magazine and First for Women, and find which was started first.\n"
    "Action 1: Search[Arthur's Magazine]",
    " Arthur's Magazine was started in 1844. I need to search First for Women next.\n"
    "Action 2: Search[First for Women]",
    " First for Women was started in 1989. 1844 (Arthur's Magazine) < 1989 (First for Women),"
    " so Arthur's Magazine was started first.\nAction 3: Finish[Arthur's Magazine]",
)
FORK_STEP_2 = (
    " Arthur's Magazine ran from 1844 to 1846. Where was it published?\n"
    "Action 2: Lookup[published]",
    " It was published in Philadelphia. Now First for Women.\nAction 3: Search[First for Women]",
    " First for Women started in 1989, after 1844.\nAction 4: Finish[Arthur's Magazine]",
)
TOOLS_RUN = [  # the clean run as native tool calls, the two searches in one reply
    Reply(
        text="I need to search Arthur's Magazine and First for Women, and find which was "
        "started first.",
        tool_calls=[
            tool_call("search", entity="Arthur's Magazine"),
            tool_call("search", entity="First for Women"),
        ],
    ),
    Reply(
        text="Arthur's Magazine was started in 1844, First for Women in 1989: Arthur's "
        "Magazine was started first.",
        tool_calls=[tool_call("finish", answer="Arthur's Magazine")],
    ),
]
REAL_QUESTIONS = {
    "gemma-einstein": "In which country was Albert Einstein born?",
    "gemma-colorado-orogeny": "What is the elevation range for the area that the eastern sector "
    "of the Colorado orogeny extends into?",
}


def ask(target: Path, args: list[str], env: dict[str, str]) -> None:
    """One `react-cli ask` run, as a user makes it; its outcome is printed, not judged."""
    command = [sys.executable, "-m", "react_cli", "ask", "--trace", str(target), *args]
    done = subprocess.run(command, env=env, cwd=ROOT, stdout=subprocess.DEVNULL)
    print(f"{target}: exit {done.returncode}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", help="a real endpoint for the extra, messy traces")
    parser.add_argument("-m", "--model", default="gemma-3-270m")
    options = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "REACT_CLI_"))}
    with FakeMediaWiki.from_fixtures() as wiki:
        env["REACT_CLI_WIKI"] = wiki.url
        clean = OUT / "arthurs-magazine.json"
        with FakeOpenAI(scripted(*CLEAN_RUN)) as llm:
            ask(clean, ["-m", "scripted", "--base-url", llm.url, QUESTION], env)
        with FakeOpenAI(scripted(*FORK_STEP_2)) as llm:
            fork = ["--from-trace", str(clean), "--from-step", "2"]
            target = OUT / "arthurs-magazine-fork-step-2.json"
            ask(target, ["-m", "scripted", "--base-url", llm.url, *fork], env)
        with FakeOpenAI(TOOLS_RUN) as llm:
            target = OUT / "arthurs-magazine-tools.json"
            ask(
                target,
                ["-m", "scripted", "--base-url", llm.url, "--protocol", "tools", QUESTION],
                env,
            )
        with FakeOpenAI(MethodsEndpoint(SCRIPTS)) as llm:  # CoT-SC's 10/21: ReAct takes over
            target = OUT / "kiss-and-tell-cot-sc-react.json"
            method = ["--method", "cot-sc+react"]
            ask(target, ["-m", "scripted", "--base-url", llm.url, *method, Q[1]], env)
        if options.base_url:
            real = ["-m", options.model, "--base-url", options.base_url, "--api", "completions"]
            for name, question in REAL_QUESTIONS.items():
                ask(
                    OUT / f"{name}.json",
                    [*real, "--max-tokens", "96", "--max-steps", "4", question],
                    env,
                )


if __name__ == "__main__":
    main()
