"""A stopped eval returns only once its questions in flight have ended: their calls are
cancelled (the request on the wire cut at once, however long its own limit) and their threads
joined, so nothing of the eval runs, prints or writes after the command is done."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from eval_fakes import react_plan
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, Reply
from inproc import HANG_S, Runner, servers_env

from react_cli.eval.events import EvalObserver
from react_cli.eval.rows import Row
from react_cli.eval.runner import EvalRun, claimed, shared_limits
from react_cli.eval.summary import EvalStatus, Summary
from react_cli.session import open_session
from react_cli.settings.settings import Settings

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


class StopAtLastRow(EvalObserver):
    """Stops its eval from outside, as a matrix stops its cells at Ctrl-C (``EvalRun.stop``),
    once every question has its row, before the eval's verdict."""

    def __init__(self, total: int) -> None:
        self.run: EvalRun | None = None
        self.total, self.rows = total, 0

    def result(self, row: Row, summary: Summary) -> None:
        self.rows += 1
        if self.rows == self.total and self.run is not None:
            self.run.stop()


def test_an_eval_stopped_once_every_question_has_its_row_finished(
    wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    """The stop cut nothing short, even of a question that failed (a request that timed out
    on a loaded machine): it finished, and ``--resume`` runs the failed one again."""
    dataset = tmp_path / "two.jsonl"
    rows = [{"question": q, "answer": "x"} for q in (REFUSED, HELD)]
    dataset.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")

    def reply(body: dict[str, Any]) -> Reply:
        if REFUSED in body["messages"][0]["content"]:
            return Reply(status=503)  # a failure the eval goes on after
        return Reply(text=" Known.\nAction 1: Finish[x]")

    with FakeOpenAI(reply) as llm:
        settings = Settings(model="m", base_url=llm.url, wiki=wiki.url, retries=0)
        plan = react_plan(settings, dataset, tmp_path / "run", concurrency=2)
        shared, used = shared_limits(plan)
        observer = StopAtLastRow(len(rows))
        with claimed(plan) as folder, open_session(settings, plan.prompts, shared=shared) as opened:
            observer.run = run = EvalRun(plan, opened, folder, None, used)
            status, _ = run.drive(observer)
            result = run.end(status, None)
    assert observer.rows == len(rows) and run.workers.stop.is_set()
    assert [r.failed for r in run.store.rows.values()].count(True) == 1
    assert result.status is EvalStatus.FINISHED
