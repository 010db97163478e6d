"""What a llama.cpp server's prompt cache saves react-cli: prompt tokens processed with and
without prefix reuse, for the prompts of a real eval.

A few HotpotQA questions (``tests/fixtures/eval``) are evaluated against the server at
``--url`` (``--api completions``, one at a time, the recorded fake Wikipedia) through a proxy
that keeps every prompt. Those prompts are then sent again with ``max_tokens`` 1, twice: in
the order react-cli sent them (the server reuses the longest prefix it holds: the few-shot
block, and the question's last prompt) and each behind a line of its own (nothing reused).
Tokens processed are the server's own count where it reports one (llama.cpp's
``timings.prompt_n``), else the prompt's tokens past the prefix it shares with the one before
(the server's tokenizer, ``/extras/tokenize`` or ``/tokenize``), which is what
llama-cpp-python's server reuses; the wall times of both passes confirm it.

    python bench/prompt_cache.py --url http://127.0.0.1:8767/v1 [--questions 3] [--model NAME]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import requests
from _common import TESTS, run_cli
from fake_mediawiki import FakeMediaWiki

DATASET = TESTS / "fixtures" / "eval" / "hotpotqa_dev_first6.json"


class Recorder:
    """Forwards JSON POSTs to ``upstream`` and keeps each body's prompt."""

    def __init__(self, upstream: str) -> None:
        self.upstream, self.prompts = upstream.rstrip("/"), []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                """Quiet."""

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                body = json.loads(raw)
                recorder.prompts.append(body.get("prompt") or body["messages"][0]["content"])
                url = recorder.upstream + self.path.removeprefix("/v1")
                answer = requests.post(url, data=raw, timeout=600, headers=JSON)
                self.send_response(answer.status_code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer.content)))
                self.end_headers()
                self.wfile.write(answer.content)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


JSON = {"Content-Type": "application/json"}


def tokens(root: str, text: str) -> list[int] | None:
    """The server's tokens of ``text`` (llama-cpp-python's or llama.cpp's endpoint)."""
    for path, field in (("/extras/tokenize", "input"), ("/tokenize", "content")):
        try:
            answer = requests.post(root + path, json={field: text}, timeout=60)
        except requests.RequestException:
            continue
        if answer.ok:
            found = answer.json().get("tokens")
            if isinstance(found, list):
                return [t if isinstance(t, int) else t.get("id", 0) for t in found]
    return None


def shared(one: list[int], other: list[int]) -> int:
    count = 0
    for a, b in zip(one, other, strict=False):
        if a != b:
            break
        count += 1
    return count


def replay(url: str, model: str, prompts: list[str]) -> tuple[float, list[dict[str, Any]]]:
    """Each prompt for one token; the wall time and every answer."""
    answers, started = [], time.perf_counter()
    for prompt in prompts:
        body = {"model": model, "prompt": prompt, "max_tokens": 1, "temperature": 0}
        answers.append(requests.post(url + "/completions", json=body, timeout=600).json())
    return time.perf_counter() - started, answers


def processed(root: str, prompts: list[str], answers: list[dict[str, Any]]) -> tuple[int, int]:
    """(prompt tokens sent, tokens the server processed) over an in-order pass."""
    sent = done = 0
    before: list[int] = []
    for prompt, answer in zip(prompts, answers, strict=True):
        timings = answer.get("timings") or {}
        usage = answer.get("usage") or {}
        if "prompt_n" in timings:
            done += int(timings["prompt_n"])
            sent += int(timings["prompt_n"]) + int(timings.get("cache_n", 0))
            continue
        ids = tokens(root, prompt) or []
        total = int(usage.get("prompt_tokens") or len(ids))
        sent += total
        done += total - min(total, shared(before, ids))
        before = ids
    return sent, done


def main_bench() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True, help="the llama.cpp server's /v1 URL")
    parser.add_argument("--model", default="gemma-3-270m")
    parser.add_argument("--questions", type=int, default=3)
    parser.add_argument("--max-steps", type=int, default=4)
    args = parser.parse_args()
    url, root = args.url.rstrip("/"), args.url.rstrip("/").removesuffix("/v1")
    recorder = Recorder(url)
    with tempfile.TemporaryDirectory() as tmp, FakeMediaWiki.from_fixtures() as wiki:
        env = {
            "REACT_CLI_HOME": str(Path(tmp) / "home"),
            "OPENAI_BASE_URL": recorder.url,
            "REACT_CLI_MODEL": args.model,
            "REACT_CLI_WIKI": wiki.url,
        }
        command = ["eval", str(DATASET), "--limit", str(args.questions), "--api", "completions"]
        command += ["--no-stream", "--concurrency", "1", "--max-steps", str(args.max_steps)]
        eval_s = run_cli([*command, "--out", str(Path(tmp) / "eval")], env)
    recorder.server.shutdown()
    prompts = recorder.prompts
    reused_s, answers = replay(url, args.model, prompts)
    sent, done = processed(root, prompts, answers)
    fresh = [f"#{time.time_ns()}-{n}\n{prompt}" for n, prompt in enumerate(prompts)]
    fresh_s, _ = replay(url, args.model, fresh)
    print(f"eval: {args.questions} questions, {len(prompts)} calls, {eval_s:.1f} s")
    print(f"prompt tokens sent: {sent:,}")
    print(f"processed with prefix reuse: {done:,} ({done / max(1, sent):.1%} of sent)")
    print(f"processed without prefix reuse: {sent:,}")
    print(
        f"prompt pass, 1 token each: {reused_s:.2f} s with reuse, {fresh_s:.2f} s without "
        f"({fresh_s / max(reused_s, 1e-9):.1f}x)"
    )


if __name__ == "__main__":
    main_bench()
