"""What spans cost an ``ask``, with a collector that answers, refuses or hangs.

``react-cli ask`` runs in this process (the real ``cli.main``) against the fake model and
MediaWiki of ``tests/`` (three model calls, two Searches), N times per collector: none (spans
off), a live OTLP receiver (``tests/support/otlp_receiver.py``), a port nothing listens on
(refused), and a socket that accepts connections but never answers (hanging). Each figure is
the command's median wall time and its difference to spans off: a refused collector costs at
most the exporter's retry within ``otel_timeout_s``, a hanging one at most ``otel_timeout_s``,
both after the answer is printed.

    python bench/otel_collectors.py [--runs 5] [--timeout 0.5]
"""

from __future__ import annotations

import argparse
import io
import socket
import statistics
import tempfile
import time
from contextlib import ExitStack, redirect_stderr, redirect_stdout
from pathlib import Path

from _common import environment  # (and makes the test helpers importable)
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, scripted
from inproc import GOOD_RUN, QUESTION
from otlp_receiver import OtlpReceiver

from react_cli.cli import main as react_cli


def ask(env: dict[str, str]) -> tuple[float, str]:
    """One ``ask`` with ``env`` set; its wall time and stderr."""
    out, err = io.StringIO(), io.StringIO()
    started = time.perf_counter()
    with environment(env), redirect_stdout(out), redirect_stderr(err):
        try:
            react_cli(["ask", "--no-trace", QUESTION])
        except SystemExit as exc:
            assert exc.code in (0, None), err.getvalue()
    assert out.getvalue() == "Arthur's Magazine\n", err.getvalue()
    return time.perf_counter() - started, err.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=0.5, help="otel_timeout_s")
    args = parser.parse_args()
    with ExitStack() as stack, tempfile.TemporaryDirectory() as home:
        wiki = stack.enter_context(FakeMediaWiki.from_fixtures())
        receiver = stack.enter_context(OtlpReceiver())
        refused = socket.socket()
        refused.bind(("127.0.0.1", 0))
        refused_port = refused.getsockname()[1]
        refused.close()
        hanging = stack.enter_context(socket.socket())
        hanging.bind(("127.0.0.1", 0))
        hanging.listen(64)  # connections complete in the backlog; nothing ever answers
        Path(home, "config.toml").write_text(f"otel_timeout_s = {args.timeout}\n")
        collectors = {
            "off": None,
            "live": receiver.url,
            "refused": f"http://127.0.0.1:{refused_port}",
            "hanging": f"http://127.0.0.1:{hanging.getsockname()[1]}",
        }
        medians: dict[str, float] = {}
        for name, endpoint in collectors.items():
            times, warnings = [], set()
            for _ in range(args.runs):
                with FakeOpenAI(scripted(*GOOD_RUN)) as llm:
                    env = {
                        "REACT_CLI_HOME": home,
                        "OPENAI_BASE_URL": llm.url,
                        "REACT_CLI_MODEL": "bench",
                        "REACT_CLI_WIKI": wiki.url,
                        "REACT_CLI_OTEL": "1" if endpoint else "0",
                        "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint or "",
                    }
                    seconds, stderr = ask(env)
                times.append(seconds)
                warnings.add(stderr.strip())
            medians[name] = statistics.median(times)
            extra = medians[name] - medians["off"]
            said = " | ".join(sorted(w for w in warnings if w)) or "no warning"
            figure = f"median {medians[name] * 1000:7.1f} ms  (+{extra * 1000:6.1f} ms)"
            print(f"{name:8} {figure}  {said}")
        print(f"spans received by the live collector: {len(receiver.spans)}")
        print(f"otel_timeout_s: {args.timeout:g}  runs per collector: {args.runs}")


if __name__ == "__main__":
    main()
