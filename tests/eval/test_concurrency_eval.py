"""Requests at once, through the real client and eval: a server that cuts a running stream
when another request arrives (llama-cpp-python's) is asked again without streaming, once per
cut, and streamed to no more; overloads halve the level (the model's and Wikipedia's); the
summary records the levels, the progress bar shows them; old summaries still resume."""

from __future__ import annotations

import json
from pathlib import Path

from eval_fakes import HOTPOT, PerQuestion, finish, search, summary_of
from fake_mediawiki import FakeMediaWiki, Fault
from fake_openai import FakeOpenAI, Reply, scripted
from inproc import Runner, retry_notices, servers_env
from slot_server import SlotServer

from react_cli.core.records import RetryWait
from react_cli.eval.summary import Summary
from react_cli.infra.deadline import NO_DEADLINE
from react_cli.infra.limiter import Limiter
from react_cli.infra.retry import RetryPolicy
from react_cli.llm.base import CallKind, ModelRequest
from react_cli.llm.client import OpenAIClient
from react_cli.llm.endpoint import EndpointFacts
from react_cli.wiki import open_backend

SCRIPT = PerQuestion({}, default=[search("Arthur's Magazine"), finish("1844", 2)])
QUICK = RetryPolicy(retries=2, backoff_factor=0.01, backoff_jitter_s=0.0)


def test_a_server_that_cuts_streams_is_asked_again_unstreamed(
    cli: Runner, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    """Two questions at once: each first stream is cut by the other's request (the server
    holds a stream until another request comes, whatever the machine's speed); each is asked
    again at once without streaming, and nothing more is streamed."""
    out = tmp_path / "run"
    with SlotServer(SCRIPT, slots=1, cut=True, hold_s=5.0) as llm:
        args = ["eval", str(HOTPOT), "--limit", "2", "--concurrency", "2", "--out", str(out)]
        result = cli(args, **servers_env(llm, wiki))
    assert result.code == 0, result.stderr
    assert llm.cuts == 2
    streamed = [bool(body.get("stream")) for body in llm.requests]
    assert streamed[:2] == [True, True] and not any(streamed[2:])
    assert len(llm.requests) == 2 + 2 * 2  # two cut streams, then two calls per question
    assert retry_notices(result.stderr) == []  # what was learnt is no retry (issue 32)
    notes = [line for line in result.stderr.splitlines() if line.startswith("note: ")]
    assert notes == [
        f"note: {llm.url} ends a stream when another request arrives (llama-cpp-python's "
        "server does): not streaming to it from now on"
    ]
    assert "the stream was cut" not in result.stderr  # no retry waited for a cut
    summary = summary_of(out)
    assert summary["n"] == 2 and summary["failed"] == 0
    model = summary["levels"]["model"]
    assert model == {**model, "mode": "fixed", "level": 2, "streaming": "stopped"}
    assert "model ×2 unstreamed" in result.stderr  # the progress bar's last state
    traces = [json.loads(p.read_text()) for p in sorted((out / "traces").glob("*.json"))]
    assert [t["steps"][0]["retries"] for t in traces] == [1, 1]


def client(url: str, facts: EndpointFacts, **kwargs: object) -> OpenAIClient:
    return OpenAIClient(base_url=url, model="m", policy=QUICK, facts=facts, **kwargs)  # type: ignore[arg-type]


def test_overloads_halve_the_endpoints_level_once_each() -> None:
    facts = EndpointFacts(limiter=Limiter.auto(64, start=16))
    waits: list[RetryWait] = []
    replies = [Reply(status=429, headers={"Retry-After": "0"}), Reply(status=503), *scripted("ok")]
    with FakeOpenAI(replies) as fake:
        answer = client(fake.url, facts, on_retry=waits.append).complete(
            ModelRequest(CallKind.STEP, "p"), deadline=NO_DEADLINE
        )
    assert answer.text == "ok" and answer.retries == 2
    assert facts.limiter.level == 4  # 16, halved twice (two overloads, one request each)
    assert [wait.reason for wait in waits] == ["HTTP 429", "HTTP 503"]


def test_a_timeout_halves_the_level() -> None:
    facts = EndpointFacts(limiter=Limiter.auto(64, start=8))
    with FakeOpenAI([Reply("late", delay_s=1.0), *scripted("ok")]) as fake:
        answer = client(fake.url, facts, timeout_s=0.1).complete(
            ModelRequest(CallKind.STEP, "p"), deadline=NO_DEADLINE
        )
    assert answer.text == "ok" and facts.limiter.level == 4


def test_wikipedia_overloads_halve_the_hosts_level(wiki: FakeMediaWiki) -> None:
    limiter = Limiter.auto(8, start=8)
    backend = open_backend(wiki.url, policy=QUICK, limiter=limiter)
    wiki.faults += [Fault(status=429, headers={"Retry-After": "0"})]
    wiki.faults += [Fault(api_error="maxlag", headers={"Retry-After": "0"})]
    found = backend.search("Arthur's Magazine", deadline=NO_DEADLINE)
    assert found.article is not None and found.retries == 2
    assert limiter.stats().lowest == 2  # 8, halved for the 429 and again for maxlag


def test_old_summaries_resume_with_their_fixed_concurrency(
    cli: Runner, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    """A summary from before ``auto`` (a number, no levels) still loads, and its eval goes on
    at that number; ``auto`` recorded resumes as auto."""
    out = tmp_path / "run"
    with FakeOpenAI(SCRIPT) as llm:
        first = ["eval", str(HOTPOT), "--limit", "2", "--out", str(out), "--concurrency", "3"]
        assert cli(first, **servers_env(llm, wiki)).code == 0
        summary = summary_of(out)
        assert summary["config"]["concurrency"] == 3 and "max_concurrency" not in summary["config"]
        del summary["levels"]  # as an eval of an earlier version wrote it
        (out / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
        assert Summary.from_json(summary).levels == ()
        resumed = cli(["eval", "--resume", str(out), "--limit", "3"], **servers_env(llm, wiki))
        assert resumed.code == 0, resumed.stderr
        assert summary_of(out)["config"]["concurrency"] == 3
        assert summary_of(out)["levels"]["model"]["mode"] == "fixed"
        other = tmp_path / "auto"
        cli(["eval", str(HOTPOT), "--limit", "1", "--out", str(other)], **servers_env(llm, wiki))
        again = cli(["eval", "--resume", str(other), "--limit", "2"], **servers_env(llm, wiki))
        assert again.code == 0
        assert summary_of(other)["config"]["concurrency"] == "auto"
        assert summary_of(other)["levels"]["model"]["mode"] == "auto"
