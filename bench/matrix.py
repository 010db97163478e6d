"""A matrix eval's wall time against the ideal: 2 models × 2 protocols (4 cells) × N questions.

Two scripted endpoints (one per model, each named by its ``[models.NAME]`` entry) with a fixed
latency L per call, and the fake MediaWiki, run in a child process (``--in-process``: on a
thread, for a smoke test); ``react-cli eval -m a -m b --protocol text,tools --concurrency C``
runs in this process as the command line runs it. Every question takes two model calls (Search,
then Finish) in both protocols. The cells run at once and the two cells of a model share its
endpoint's C requests at once, so the ideal is the busier endpoint's calls × L / C; running the
cells one after the other would take the sum over cells (twice that here). The run's time is
``matrix.json``'s ``wall_s`` (from the cells' start to their end); the command's adds planning
and the table.

    python bench/matrix.py [--questions 50] [--latency 0.1] [--concurrency 8]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import tempfile
from dataclasses import replace
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from _common import add_in_process, questions_file, run_cli, start_servers
from eval_fakes import finish, search
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, Reply
from method_fakes import MethodsEndpoint, Script
from tool_fakes import ProtocolsEndpoint, tools_script

CALLS_PER_QUESTION = 2
SCRIPT = Script(
    react=[search("Arthur's Magazine"), finish("1844", 2)],
    act=[" Finish[1844]"],
    standard=" 1844",
    cot=" 1844",
    samples=[" 1844"],
)


class Slow:
    """Every reply of ``inner`` after ``latency`` seconds (the server answers on a thread)."""

    def __init__(self, inner: ProtocolsEndpoint, latency: float) -> None:
        self.inner, self.latency = inner, latency

    def __call__(self, body: dict[str, Any]) -> Reply:
        return replace(self.inner(body), delay_s=self.latency)


def endpoint(questions: list[str], latency: float) -> Slow:
    tools = {question: tools_script(SCRIPT) for question in questions}
    return Slow(ProtocolsEndpoint(MethodsEndpoint({}, SCRIPT), tools), latency)


def serve(conn: Connection, questions: list[str], latency: float) -> None:
    """Child process: both models' endpoints and the wiki; their URLs, then the calls each got."""
    with (
        FakeMediaWiki.from_fixtures() as wiki,
        FakeOpenAI(endpoint(questions, latency)) as a,
        FakeOpenAI(endpoint(questions, latency)) as b,
    ):
        conn.send((a.url, b.url, wiki.url))
        conn.recv()
        conn.send((len(a.requests), len(b.requests)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=50)
    parser.add_argument("--latency", type=float, default=0.1, help="seconds per model call")
    parser.add_argument("--concurrency", type=int, default=8, help="requests at once per endpoint")
    add_in_process(parser)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        dataset = questions_file(Path(tmp) / "questions.jsonl", args.questions)
        questions = [json.loads(line)["question"] for line in dataset.read_text().splitlines()]
        parent, child = multiprocessing.Pipe()
        servers = start_servers(serve, args.in_process, child, questions, args.latency)
        a_url, b_url, wiki_url = parent.recv()
        (home / "config.toml").write_text(
            f'[models.a]\nbase_url = "{a_url}"\n[models.b]\nbase_url = "{b_url}"\n',
            encoding="utf-8",
        )
        out = Path(tmp) / "matrix"
        command = ["eval", str(dataset), "-m", "a", "-m", "b", "--protocol", "text,tools"]
        command += ["--concurrency", str(args.concurrency), "--out", str(out)]
        env = {"REACT_CLI_HOME": str(home), "REACT_CLI_WIKI": wiki_url, "COLUMNS": "120"}
        wall = run_cli(command, env)
        parent.send("stop")
        calls = parent.recv()
        servers.join()
        matrix = json.loads((out / "matrix.json").read_text(encoding="utf-8"))
        summaries = [
            json.loads((out / cell["folder"] / "summary.json").read_text(encoding="utf-8"))
            for cell in matrix["cells"]
        ]
    assert matrix["status"] == "finished", matrix["status"]
    assert all(s["n"] == args.questions and s["em"] == 1.0 for s in summaries), summaries
    assert list(calls) == [2 * CALLS_PER_QUESTION * args.questions] * 2, calls
    ideal = max(calls) * args.latency / args.concurrency
    cells = len(summaries)
    print(f"cells: {cells}  questions per cell: {args.questions}  calls: {sum(calls)}")
    print(f"latency: {args.latency * 1000:.0f} ms  concurrency: {args.concurrency} per endpoint")
    run = float(matrix["wall_s"])
    print(f"command: {wall:.3f} s (with planning and the table)")
    print(f"run: {run:.3f} s  ideal: {ideal:.3f} s  cells in turn: {2 * ideal:.3f} s")
    print(f"run / ideal: {run / ideal:.3f} (goal <= 1.2)")


if __name__ == "__main__":
    main()
