"""A stopped eval returns only once its questions in flight have ended: their calls are
cancelled (the request on the wire cut at once, however long its own limit) and their threads
joined, so nothing of the eval runs, prints or writes after the command is done."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, Reply
from inproc import HANG_S, Runner, servers_env

REFUSED = "Which question does the endpoint refuse?"
HELD = "Which question does the endpoint hold?"


def question_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "eval-question" and t.is_alive()]


def test_a_stopped_eval_cancels_and_joins_its_questions_in_flight(
    cli: Runner, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    dataset = tmp_path / "two.jsonl"
    rows = [{"question": q, "answer": "x"} for q in (REFUSED, HELD)]
    dataset.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    held, release = threading.Event(), threading.Event()

    def reply(body: dict[str, Any]) -> Reply:
        if HELD in body["messages"][0]["content"]:
            held.set()
            release.wait(HANG_S)  # answers only once the test is over
            return Reply(text=" Late.\nAction 1: Finish[x]")
        held.wait(HANG_S)  # the other question is on the wire: then the eval stops
        return Reply(status=401)

    cli.config(timeout_s=HANG_S)  # the held request's own limit would not end it
    out = tmp_path / "run"
    args = ["eval", str(dataset), "--concurrency", "2", "--out", str(out)]
    try:
        with FakeOpenAI(reply) as llm:
            result = cli(args, **servers_env(llm, wiki))
            running = question_threads()
            release.set()
    finally:
        release.set()
    assert result.code == 2, result.stderr  # the key was refused: the eval stops at once
    assert held.is_set() and running == []
    assert not (out / "results.jsonl").exists() or all(
        json.loads(line)["question"] != HELD
        for line in (out / "results.jsonl").read_text(encoding="utf-8").splitlines()
    )  # the question stopped in flight keeps no row
