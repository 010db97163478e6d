"""Several servers (issue 33): ``--base-url`` repeated makes replicas of one model. Each
question goes to the least busy replica and stays on it for all its calls; a replica that
fails is taken out and its questions go elsewhere; the summary records each replica and the
questions it served. One fast replica, one that answers every request 503, one slow."""

from __future__ import annotations

from pathlib import Path

import pytest
from eval_fakes import HOTPOT, HOTPOT_SCRIPTS, PerQuestion, question_of, rows_of, summary_of
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, Reply
from inproc import Runner, servers_env

from react_cli.infra.deadline import Deadline
from react_cli.infra.limiter import Limiter
from react_cli.llm.endpoint import EndpointFacts
from react_cli.llm.replicas import OUT_S, ReplicaSet

EXPECTED_EM = 2 / 6  # what one server gives these scripts (test_eval_cli)


def test_a_failing_and_a_slow_replica_leave_every_question_answered(
    cli: Runner, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    cli.config()
    out = tmp_path / "run"
    failing = PerQuestion({}, default=[Reply(status=503)])
    slow = PerQuestion(HOTPOT_SCRIPTS, delay_s=0.05)
    with (
        FakeOpenAI(PerQuestion(HOTPOT_SCRIPTS)) as fast,
        FakeOpenAI(failing) as down,
        FakeOpenAI(slow) as late,
    ):
        urls = [fast.url, down.url, late.url]
        args = ["eval", str(HOTPOT), "--out", str(out), "--max-steps", "3"]
        for url in urls:
            args += ["--base-url", url]
        result = cli(args, **servers_env(fast, wiki))
    assert result.code == 0, result.stderr
    rows = rows_of(out)
    assert len(rows) == 6 and not any(row["stop_reason"] == "llm_error" for row in rows)
    summary = summary_of(out)
    assert summary["em"] == pytest.approx(EXPECTED_EM, abs=1e-6) and summary["failed"] == 0
    levels = summary["levels"]
    replicas = [levels[f"replica {n}"] for n in (1, 2, 3)]
    assert [r["url"] for r in replicas] == urls
    assert sum(r["questions"] for r in replicas) == 6
    assert replicas[1]["questions"] == 0 and replicas[1]["failures"] >= 1
    assert levels["model"]["level"] == sum(r["level"] for r in replicas)
    # Each question stayed on the replica it was answered by: no question on both.
    asked = [{question_of(r.json) for r in server.requests} for server in (fast, late)]
    assert not asked[0] & asked[1]
    assert asked[0] | asked[1] == {row["question"] for row in rows}
    assert len(asked[0]) == replicas[0]["questions"] and len(asked[1]) == replicas[2]["questions"]
    # The questions the failing one was asked moved to another and were answered there.
    moved = {question_of(r.json) for r in down.requests}
    assert moved and moved <= asked[0] | asked[1]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_routing_takes_the_least_busy_replica_and_skips_one_taken_out() -> None:
    clock = Clock()
    replicas = ReplicaSet(
        ["http://a/v1", "http://b/v1"], lambda: EndpointFacts(Limiter(4)), clock=clock
    )
    a, b = replicas.replicas
    assert replicas.route() is a and replicas.route() is b  # a question each
    permit = b.facts.limiter.acquire(Deadline())
    assert replicas.route() is a  # b has a request in flight
    permit.release()
    replicas.take_out(a)
    assert replicas.route() is b and replicas.route() is b  # a is out
    clock.now += OUT_S
    assert replicas.route() is a  # back
    assert replicas.route(frozenset({1, 2})) is None
    replicas.leave(b, served=True)
    assert b.questions == 1 and b.active == 2 and a.failures == 1
    replicas.take_out(b)  # a question on b moves to a at its next call; one on a stays
    assert replicas.move(b) is a and replicas.move(a) is a
    assert (a.active, b.active) == (4, 1)


def test_replicas_are_shown_and_checked_without_their_credentials(cli: Runner) -> None:
    shown = cli(["config", "--base-url", "http://a:1/v1", "--base-url", "http://u:pw@b:2/v1?k=s"])
    assert shown.code == 0 and "'http://b:2/v1'" in shown.stdout and "pw" not in shown.stdout
    bad = cli(["config", "--base-url", "http://a:1/v1", "--base-url", "ftp://b/v1"])
    assert bad.code == 2 and "--base-url must be an http(s) URL" in bad.stderr
