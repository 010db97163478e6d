"""End to end against a real OpenAI-compatible server (llama.cpp), skipped unless asked for.

    REACT_CLI_TEST_LLAMA_URL=http://127.0.0.1:8765/v1 pytest -s tests/llm/test_llama_e2e.py
    scripts/e2e-llama.sh            # the same, checking the server first

The model answers for real (``REACT_CLI_TEST_LLAMA_MODEL``, default ``gemma-3-270m``, a tiny
base model that miscounts steps, invents observations and rambles); Wikipedia is the recorded
fake started here, so nothing leaves loopback. Requests go through a recording proxy, so the
append-only assertion holds for the exact prompts the server received. Runs use react-cli's
DEFAULT settings (no --max-tokens: llama-cpp-python alone would answer 16 tokens), and check
that no thought was cut, that token counts the server did not report are shown and recorded
as estimates, and that the trace is clean. Each run prints one line of figures (steps, stop
reason, seconds per step, prompt tokens) with ``-s``.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import requests
from conftest import ROOT, cli_env
from fake_mediawiki import FakeMediaWiki

from react_cli.core.method import Method
from react_cli.core.records import StopReason
from react_cli.loop.text.cutter import cut_at_observation
from react_cli.loop.text.parser import kept_in_prompt
from react_cli.loop.text.protocol import STOP_SEQUENCES
from react_cli.traces.trace import load_trace

LLAMA_URL = os.environ.get("REACT_CLI_TEST_LLAMA_URL", "")
MODEL = os.environ.get("REACT_CLI_TEST_LLAMA_MODEL", "gemma-3-270m")
QUESTION = "Which magazine was started first, Arthur's Magazine or First for Women?"
MAX_STEPS = "4"
DEFAULT_MAX_TOKENS = 256

pytestmark = [
    pytest.mark.skipif(not LLAMA_URL, reason="set REACT_CLI_TEST_LLAMA_URL to a llama.cpp /v1 URL"),
    pytest.mark.timeout(900),
]


class RecordingProxy:
    """Forwards POSTs to the real server unchanged (streams included) and records each body."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.bodies: list[dict[str, Any]] = []
        self.url = ""
        self._server: ThreadingHTTPServer | None = None

    def __enter__(self) -> RecordingProxy:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet."""

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                proxy.bodies.append(json.loads(raw))
                path = self.path.removeprefix("/v1")
                headers = {"Content-Type": "application/json"}
                with requests.post(
                    proxy.upstream + path, data=raw, headers=headers, stream=True, timeout=600
                ) as answer:
                    self.send_response(answer.status_code)
                    self.send_header("Content-Type", answer.headers.get("Content-Type", ""))
                    self.send_header("Transfer-Encoding", "chunked")
                    self.send_header("Connection", "close")
                    self.end_headers()
                    try:
                        for block in answer.iter_content(chunk_size=None):
                            self.wfile.write(f"{len(block):X}\r\n".encode() + block + b"\r\n")
                        self.wfile.write(b"0\r\n\r\n")
                    except (BrokenPipeError, ConnectionResetError):
                        pass  # the client cut the stream at an invented Observation
                    except requests.exceptions.ChunkedEncodingError:
                        pass  # the server cut it (another request came): so does the proxy
                self.close_connection = True

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def prompts(self) -> list[str]:
        """The prompt text of every request, in order (chat: the one user message)."""
        return [
            body["messages"][0]["content"] if "messages" in body else body["prompt"]
            for body in self.bodies
        ]


def react_cli(
    args: list[str], env: dict[str, str], timeout: float
) -> subprocess.CompletedProcess[str]:
    """One command in a process of its own, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "react_cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture(scope="module")
def wiki() -> Iterator[FakeMediaWiki]:
    with FakeMediaWiki.from_fixtures() as server:
        yield server


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "no-stream"])
@pytest.mark.parametrize("api", ["completions", "chat"])
def test_ask_against_a_real_server(
    tmp_path: Path, wiki: FakeMediaWiki, api: str, stream: bool
) -> None:
    home = tmp_path / "home"
    trace_path = tmp_path / "trace.json"
    args = ["ask", QUESTION, "--api", api, "--max-steps", MAX_STEPS, "-v"]
    args += ["--trace", str(trace_path), "--json"] + ([] if stream else ["--no-stream"])
    with RecordingProxy(LLAMA_URL) as proxy:
        env = cli_env(
            home, OPENAI_BASE_URL=proxy.url, REACT_CLI_MODEL=MODEL, REACT_CLI_WIKI=wiki.url
        )
        proc = react_cli(args, env, timeout=800)

    # The run ends with an answer (0) or without one (1), never a crash, and leaves a trace.
    assert proc.returncode in (0, 1), proc.stderr
    assert "Traceback" not in proc.stderr
    trace = load_trace(trace_path)
    assert trace["stop_reason"] in set(StopReason)
    assert json.loads(proc.stdout)["stop_reason"] == trace["stop_reason"]
    errors = [line for line in proc.stderr.splitlines() if line.startswith("Error: ")]
    assert len(errors) == (proc.returncode == 1)
    if errors:
        assert errors[0].startswith("Error: no answer: ") and proc.stderr.endswith(errors[0] + "\n")
    steps = trace["steps"]
    assert steps and len(steps) <= int(MAX_STEPS)

    # Default settings: every call asks for 256 tokens, so no thought is cut and no extra
    # "Action k:" call is made for a cut one; no warning to raise --max-tokens.
    assert all(body["max_tokens"] == DEFAULT_MAX_TOKENS for body in proxy.bodies)
    assert not any(step["details"].get("max_tokens_reached") for step in steps)
    assert "warning:" not in proc.stderr

    # Tokens the server did not report are estimated, recorded and shown as estimates; a run
    # never shows 0 tokens. llama-cpp-python reports no usage when streaming.
    usage = trace["usage"]
    assert usage["total_tokens"] > 0 and all(s["usage"]["total_tokens"] > 0 for s in steps)
    if stream:
        assert usage["estimated"] is True
    shown = (
        f"~{usage['total_tokens']:,} tokens (estimated)"
        if usage["estimated"]
        else (f"{usage['total_tokens']:,} tokens")
    )
    summary_line = [line for line in proc.stderr.splitlines() if line.startswith("stop: ")]
    assert len(summary_line) == 1 and f" · {shown} · " in summary_line[0]
    assert " 0 tokens" not in proc.stderr

    # A clean trace: every step has a thought or an action, no kept Observation, and text the
    # parser ignored (invented next steps) stays in raw, shown only as "(ignored)".
    for step in steps:
        assert step["thought"] or step["action"]
        assert "\nObservation" not in kept_in_prompt(step["raw"])

    # No kept model text carries an invented Observation line.
    for step in steps:
        for text in (step["raw"], step["followup_raw"] or ""):
            assert cut_at_observation(text) == text

    # Append-only: each request's prompt starts with the previous one, and where the model's
    # output held an action, with the previous prompt plus exactly the kept model text.
    prompts = proxy.prompts()
    assert len(prompts) == sum(1 + (s["followup_raw"] is not None) for s in steps)
    assert prompts[0].endswith(f"Question: {QUESTION}\nThought 1:")
    for before, after in itertools.pairwise(prompts):
        assert after.startswith(before)
    main = 0  # index of the request that opened each step
    for step in steps:
        followup = step["followup_raw"] is not None
        assert proxy.bodies[main]["stop"] == list(STOP_SEQUENCES)
        assert prompts[main].endswith(f"Thought {step['index']}:")
        following = main + 1 + followup
        if not followup and step["action"] and following < len(prompts):
            assert prompts[following].startswith(prompts[main] + kept_in_prompt(step["raw"]))
        if followup:
            assert proxy.bodies[main + 1]["stop"] == ["\n"]
        main = following

    duration = trace["duration_s"]
    tokens = [s["usage"]["prompt_tokens"] for s in steps]
    print(
        f"\nE2E api={api} stream={stream} exit={proc.returncode} stop={trace['stop_reason']} "
        f"steps={len(steps)} requests={len(prompts)} s/step={duration / len(steps):.2f} "
        f"latency={[round(s['latency_s'], 2) for s in steps]} prompt_tokens={tokens} "
        f"prompt_chars={[len(p) for p in prompts]} answer={trace['answer']!r}"
    )


HOTPOT_FIRST6 = ROOT / "tests" / "fixtures" / "eval" / "hotpotqa_dev_first6.json"
SAMPLES = "3"


def eval_through_proxy(
    tmp_path: Path, wiki: FakeMediaWiki, args: list[str], timeout: float
) -> tuple[subprocess.CompletedProcess[str], RecordingProxy, float]:
    """``react-cli ARGS`` (an eval) against the real server through the recording proxy: it
    exits 0 without a traceback; the process, the proxy and the wall time."""
    with RecordingProxy(LLAMA_URL) as proxy:
        servers = {"OPENAI_BASE_URL": proxy.url, "REACT_CLI_WIKI": wiki.url}
        env = cli_env(tmp_path / "home", REACT_CLI_MODEL=MODEL, **servers)
        started = time.monotonic()
        proc = react_cli(args, env, timeout=timeout)
        wall = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return proc, proxy, wall


def test_every_method_against_a_real_server(tmp_path: Path, wiki: FakeMediaWiki) -> None:
    """``eval --methods all`` on 3 HotpotQA questions: each method to a clean end, ``n``
    asked once and (llama-cpp-python ignores it) never again; one line of figures each."""
    out = tmp_path / "eval"
    args = ["eval", str(HOTPOT_FIRST6), "--limit", "3", "--methods", "all", "--out", str(out)]
    args += ["--api", "completions", "--concurrency", "1", "--samples", SAMPLES]
    args += ["--max-steps", MAX_STEPS]
    _, proxy, wall = eval_through_proxy(tmp_path, wiki, args, timeout=1500)
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    methods = summary["methods"]
    assert list(methods) == [m.value for m in Method] and summary["status"] == "finished"
    assert all(figures["n"] == 3 and figures["failed"] == 0 for figures in methods.values())
    asked_n = [body["n"] for body in proxy.bodies if "n" in body]
    assert asked_n == [int(SAMPLES)]  # asked once; the server answered one choice: remembered
    assert summary["calls_made"] == len(proxy.bodies)
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    for row in rows:
        for method, result in row["methods"].items():
            trace = load_trace(out / result["trace"])
            assert trace["method"] == method and trace["stop_reason"] in set(StopReason)
            if method in ("cot-sc", "cot-sc+react", "react+cot-sc") and trace.get("samples"):
                assert len(trace["samples"]) == int(SAMPLES)
    print(f"\nE2E methods: 3 questions, {len(proxy.bodies)} requests, wall {wall:.0f} s")
    for method, figures in methods.items():
        print(
            f"E2E {method:<13} EM={figures['em']:.3f} calls={figures.get('calls', 0)} "
            f"tokens={figures['tokens']} time={figures['avg_latency_s'] * 3:.1f} s"
        )


HOTPOT_FIRST10 = ROOT / "tests" / "fixtures" / "eval" / "hotpotqa_dev_first10.json"
CUT_RETRY = "the stream was cut off"  # a retry after a cut stream, waited for
STREAMS_STOPPED = "ends a stream when another request arrives"  # said once, then no stream


def test_ten_questions_every_method_with_the_defaults(tmp_path: Path, wiki: FakeMediaWiki) -> None:
    """Issue 20's case: ``eval --methods all`` with the defaults (``--concurrency auto``) on
    10 questions, against a server that cuts a running stream when another request arrives:
    no question fails, and no cut is waited for and retried again and again; prints the
    figures (wall time, requests, the levels the limiter used, each method's EM)."""
    out = tmp_path / "eval"
    args = ["eval", str(HOTPOT_FIRST10), "--methods", "all", "--out", str(out)]
    args += ["--api", "completions"]  # the README's advice for a base model; all else default
    proc, proxy, wall = eval_through_proxy(tmp_path, wiki, args, timeout=3000)
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["status"] == "finished" and summary["n"] == 10 and summary["failed"] == 0
    assert all(figures["failed"] == 0 for figures in summary["methods"].values())
    notices = [line for line in proc.stderr.splitlines() if line.startswith("retrying in ")]
    assert not [line for line in notices if CUT_RETRY in line], notices
    assert sum(STREAMS_STOPPED in line for line in notices) <= 1
    streamed = [bool(body.get("stream")) for body in proxy.bodies]
    levels = summary["levels"]
    print(
        f"\nE2E 10 questions, --methods all, defaults: wall {wall:.0f} s, "
        f"{len(proxy.bodies)} requests ({sum(streamed)} streamed), "
        f"{len(notices)} retry notices, levels {json.dumps(levels)}"
    )
    for notice in notices:
        print(f"E2E notice: {notice}")
    for method, figures in summary["methods"].items():
        print(
            f"E2E {method:<13} EM={figures['em']:.3f} failed={figures['failed']} "
            f"calls={figures.get('calls', 0)} s/question={figures['avg_latency_s']:.1f}"
        )
