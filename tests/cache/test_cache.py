"""The cache (``--cache``) through ``ask`` and ``eval``: a second run makes no request, its
hits are marked and cost nothing (what they would have cost kept apart); what is never cached;
the key; a corrupt, locked, tampered or planted file is a warning and a run without it (or a
miss), never a crash; ``cache stats|clear``."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from eval_fakes import HOTPOT, HOTPOT_SCRIPTS, PerQuestion, rows_of, summary_of
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, Reply, scripted
from inproc import GOOD_RUN, Runner, actions, servers_env
from tool_fakes import tool_call

from react_cli.cache import cache_path
from react_cli.cache.keys import digest
from react_cli.cache.model import CachedModel
from react_cli.cache.store import CacheStore
from react_cli.cache.wiki import CachedBackend
from react_cli.core.sources import Wiki, WikiKind
from react_cli.infra.deadline import NO_DEADLINE, Deadline
from react_cli.llm.base import CallKind, Completion, ModelRequest, Sampled
from react_cli.wiki.base import Article, SearchResult

DOWN = Reply(status=500)  # what the endpoint answers once it has answered a first run


class Switch:
    """Answers as ``replies`` does until ``down`` is set, then with a 500: a second run must
    need none of it (the same server: its URL is part of the key)."""

    def __init__(self, replies: PerQuestion) -> None:
        self.replies, self.down = replies, False

    def __call__(self, body: dict[str, object]) -> Reply:
        return DOWN if self.down else self.replies(body)


def ask(cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki, *args: str) -> dict[str, object]:
    result = cli.ask(llm, wiki, "--cache", "--json", *args)
    assert result.code == 0, result.stderr
    data: dict[str, object] = json.loads(result.stdout)
    return data


def test_a_second_ask_makes_no_request_and_its_hits_cost_nothing(
    cli: Runner, wiki: FakeMediaWiki
) -> None:
    with FakeOpenAI([*scripted(*GOOD_RUN), DOWN]) as llm:
        first = ask(cli, llm, wiki)
        paid = first["usage"]
        assert isinstance(paid, dict) and paid["total_tokens"] > 0
        asked = len(wiki.requests)
        second = ask(cli, llm, wiki)
        shown = cli.ask(llm, wiki, "--cache", "-v", "--no-trace")
    assert len(llm.requests) == 3 and len(wiki.requests) == asked  # nothing asked again
    assert second["answer"] == first["answer"] == "Arthur's Magazine"
    assert second["usage"] == {
        **paid,
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "total_tokens": 0,
    }
    sources = second["sources"]
    assert sources == first["sources"] and isinstance(sources, list)  # the same revisions
    assert sources[0]["revision"] is not None and "oldid=" in sources[0]["url"]
    steps = second["steps"]
    assert isinstance(steps, list) and all(s["cached"] is True for s in steps)
    saved = sum(s["cached_usage"]["total_tokens"] for s in steps)
    assert saved == paid["total_tokens"]  # kept apart, what they would have cost
    assert [a["details"].get("wiki_cached") for a in actions(second)] == [True, True, None]
    assert shown.code == 0 and "(model " in shown.stderr
    assert "· cached · Wikipedia cached)" in shown.stderr
    assert f"{saved:,} tokens cached" in shown.stderr
    assert "Arthur's Magazine" in shown.stdout


def test_native_tool_calls_come_back_from_the_cache_as_the_reply_sent_them(
    cli: Runner, wiki: FakeMediaWiki
) -> None:
    """``--protocol tools``: a hit gives back the reply's calls (and the assistant message the
    chat goes on with), so the second run takes the same steps without a request."""
    replies = [
        Reply(text="I search.", tool_calls=[tool_call("search", entity="Arthur's Magazine")]),
        Reply(text="Found.", tool_calls=[tool_call("finish", answer="Arthur's Magazine")]),
        DOWN,
    ]
    with FakeOpenAI(replies) as llm:
        first = ask(cli, llm, wiki, "--protocol", "tools")
        second = ask(cli, llm, wiki, "--protocol", "tools")
    assert len(llm.requests) == 2  # the second run asked nothing
    assert second["answer"] == first["answer"] == "Arthur's Magazine"
    steps, before = second["steps"], first["steps"]
    assert isinstance(steps, list) and isinstance(before, list)
    assert [a["action"] for a in actions(second)] == [a["action"] for a in actions(first)]
    assert all(s["cached"] is True for s in steps)
    assert [s["replies"] for s in steps] == [s["replies"] for s in before]


def test_a_second_eval_makes_no_request_and_writes_the_same_answers(
    cli: Runner, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    runs = []
    replies = Switch(PerQuestion(HOTPOT_SCRIPTS))
    with FakeOpenAI(replies) as llm:
        for number in range(2):
            out = tmp_path / f"run{number}"
            asked, made = len(wiki.requests), len(llm.requests)
            args = ["eval", str(HOTPOT), "--cache", "--max-steps", "3", "--out", str(out)]
            result = cli(args, **servers_env(llm, wiki))
            assert result.code == 0, result.stderr
            runs.append((out, len(llm.requests) - made, len(wiki.requests) - asked))
            replies.down = True
    (first, made, searched), (second, none, searched_again) = runs
    assert made > 0 and searched > 0 and none == 0 and searched_again == 0
    keep = ("index", "answer", "em", "f1", "stop_reason", "steps", "trace")
    assert [{k: r[k] for k in keep} for r in rows_of(first)] == [
        {k: r[k] for k in keep} for r in rows_of(second)
    ]
    before, after = summary_of(first), summary_of(second)
    assert (after["em"], after["f1"]) == (before["em"], before["f1"])
    assert after["total_tokens"] == 0 and after["cached_tokens"] == before["total_tokens"]
    assert "cached_tokens" not in before
    assert all(
        row["cached_tokens"] == row_before["tokens"]
        for row, row_before in zip(rows_of(second), rows_of(first), strict=True)
    )


def test_sampling_above_temperature_0_is_never_cached(cli: Runner, wiki: FakeMediaWiki) -> None:
    """CoT-SC's samples are drawn afresh every run; CoT's greedy call (temperature 0) is
    cached; a model run at a temperature is not."""
    methods = (["--method", "cot"], 1), (["--method", "cot-sc", "--samples", "2"], 2)
    for args, requests in methods:
        with FakeOpenAI([Reply(" Think.\nAnswer: yes")]) as llm:
            for _ in range(2):
                ask(cli, llm, wiki, *args)
        assert len(llm.requests) == requests, args
    with FakeOpenAI(scripted(GOOD_RUN[2])) as llm:
        for _ in range(2):
            ask(cli, llm, wiki, "--temperature", "0.5")
    assert len(llm.requests) == 2


def test_the_key_is_the_request_without_its_secret(cli: Runner, wiki: FakeMediaWiki) -> None:
    key = "sk-cache-secret-0123456789"
    with FakeOpenAI(scripted(GOOD_RUN[2])) as llm:
        ask(cli, llm, wiki, "--api-key", key)
        ask(cli, llm, wiki, "--api-key", "sk-another-key-9876543210")  # the same request
        assert len(llm.requests) == 1
        ask(cli, llm, wiki, "--max-tokens", "100")  # another body: another entry
        ask(cli, llm, wiki, "--no-stream")  # how it is carried is not the call
        assert len(llm.requests) == 2
    files = cache_path(cli.home).parent.iterdir()
    assert not any(key.encode() in path.read_bytes() for path in files)


def test_a_corrupt_cache_is_a_warning_and_a_run_without_it(
    cli: Runner, wiki: FakeMediaWiki
) -> None:
    path = cache_path(cli.home)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not a database at all" * 100)
    with FakeOpenAI(scripted(*GOOD_RUN)) as llm:
        result = cli.ask(llm, wiki, "--cache")
    assert result.code == 0 and result.stdout == "Arthur's Magazine\n"
    warning = [line for line in result.stderr.splitlines() if line.startswith("warning: ")]
    assert warning == [
        f"warning: the cache {path} cannot be used (file is not a database); running "
        "without it ('react-cli cache clear' starts it afresh)"
    ]
    stats = cli(["cache", "stats"])
    assert stats.code == 1 and stats.stderr.startswith("Error: the cache ")
    cleared = cli(["cache", "clear"])
    assert cleared.code == 0 and "cleared" in cleared.stdout and not path.exists()
    with FakeOpenAI(scripted(*GOOD_RUN)) as llm:
        again = cli.ask(llm, wiki, "--cache").stderr
    assert again.startswith("Sources:\n") and "warning" not in again  # only the answer's sources
    shown = cli(["cache", "stats", "--json"])
    stats_json = json.loads(shown.stdout)
    assert stats_json["entries"] == {"model": 3, "wiki": 2} and stats_json["exists"] is True
    assert "model calls" in cli(["cache", "stats"]).stdout


@pytest.mark.timeout(20)
def test_a_planted_fifo_or_link_is_never_opened(cli: Runner, wiki: FakeMediaWiki) -> None:
    path = cache_path(cli.home)
    path.parent.mkdir(parents=True)
    os.mkfifo(path)
    with FakeOpenAI(scripted(*GOOD_RUN)) as llm:
        result = cli.ask(llm, wiki, "--cache")
    assert result.code == 0 and "it is a FIFO, not a file" in result.stderr
    path.unlink()
    target = cli.home / "elsewhere.db"
    path.symlink_to(target)
    with FakeOpenAI(scripted(*GOOD_RUN)) as llm:
        result = cli.ask(llm, wiki, "--cache")
    assert result.code == 0 and "a symbolic link" in result.stderr and not target.exists()


NOTHING_ELSE = {"similar": [], "disambiguation": False}


def tamper(path: Path, change: str, *values: object) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute(change, values)


@pytest.mark.parametrize(
    ("kind", "value"),
    [
        ("model", "{}"),  # the wrong shape
        ("model", b"\xff\x00"),  # not JSON
        ("model", '{"completions": [{"text": 5}], "requests": 1}'),
        ("model", '{"completions": [{"text": "a"}], "requests": -1}'),
        ("model", '{"completions": [{"text": "a"}, {"text": "b"}], "requests": 1}'),
        ("model", json.dumps({"completions": [{"text": "a" * 1_000_001}], "requests": 1})),
        ("wiki", '{"article": {"title": 7, "text": ""}, "similar": [], "disambiguation": false}'),
        ("wiki", '{"article": null, "similar": [1], "disambiguation": false}'),
        ("wiki", '{"article": null, "similar": [], "disambiguation": "no"}'),
        ("wiki", json.dumps({"article": None, "similar": ["x"] * 501, "disambiguation": False})),
        *(
            ("wiki", json.dumps({"article": {"title": "t", "text": "", **where}, **NOTHING_ELSE}))
            for where in (
                {"revision": True},
                {"revision": -1},
                {"revision": [1]},
                {"url": 3},
                {"wiki": "en.wikipedia.org"},
                {"wiki": {"kind": 5}},
                {"sentences": "one. two."},
                {"sentences": [1, 2]},
            )
        ),
        ("model", json.dumps({"completions": [{"text": "a", "message": []}], "requests": 1})),
    ],
)
def test_an_entry_that_is_not_one_is_a_miss_and_dropped(
    tmp_path: Path, kind: str, value: str | bytes
) -> None:
    """Whatever a tampered file holds under a call's key: asked again, never trusted."""
    store = CacheStore(tmp_path / "c", 1 << 20, print)
    request = ModelRequest(CallKind.STEP, "prompt")
    model = Identified()
    cached: CachedModel | CachedBackend
    if kind == "model":
        cached = CachedModel(model, store)  # type: ignore[arg-type]
        key = digest("model", model.request_identity(request))
    else:
        backend = Pages()
        cached = CachedBackend(backend, {"backend": "test"}, store)
        key = digest("wiki", {"backend": "test", "entity": "Ed Wood"})
    store.put(key, kind, value.encode() if isinstance(value, str) else value)
    if isinstance(cached, CachedModel):
        assert cached.complete(request, deadline=NO_DEADLINE).text == "fresh"
        assert model.requests == [request]
    else:
        assert cached.search("Ed Wood", deadline=NO_DEADLINE).article == Article(
            "Ed Wood", "A film."
        )
        assert backend.searched == ["Ed Wood"]
    assert store.get(key) != (value.encode() if isinstance(value, str) else value)


def test_a_hit_keeps_where_the_text_came_from(tmp_path: Path) -> None:
    """The wiki, revision, URL and the page's own sentence list come back with the text, so a
    hit's sources cite the same revision and number the same sentences (HotpotQA's ids)."""
    article = Article(
        "Ed Wood",
        "A film. Made in 1994.",
        wiki=Wiki(WikiKind.ZIM, archive="hotpot.zim", uuid="0123", date="2026-11-30"),
        revision="A/Ed_Wood",
        url=None,
        sentences=("A film.", " Made in 1994."),
    )

    class Rich(Pages):
        def search(self, entity: str, *, deadline: Deadline) -> SearchResult:
            self.searched.append(entity)
            return SearchResult(article)

    backend = Rich()
    cached = CachedBackend(backend, {"backend": "test"}, CacheStore(tmp_path / "c", 1 << 20, print))
    assert cached.search("Ed Wood", deadline=NO_DEADLINE).article == article
    hit = cached.search("Ed Wood", deadline=NO_DEADLINE)
    assert hit.cached and hit.article == article and backend.searched == ["Ed Wood"]
    assert hit.article is not None and hit.article.sentences == article.sentences


class Identified:
    """A model that says what identifies a call, as the HTTP client does; answers "fresh"."""

    temperature = 0.0

    def __init__(self) -> None:
        self.requests: list[ModelRequest] = []

    def complete(
        self, request: ModelRequest, *, deadline: Deadline, on_text: object = None
    ) -> Completion:
        self.requests.append(request)
        return Completion("fresh")

    def sample(self, request: ModelRequest, **kwargs: Any) -> Sampled:
        raise AssertionError("not sampled here")

    def request_identity(self, request: ModelRequest, **kwargs: Any) -> dict[str, Any]:
        return {"prompt": request.prompt}


class Pages:
    searched: list[str]

    def __init__(self) -> None:
        self.searched = []

    def search(self, entity: str, *, deadline: Deadline) -> SearchResult:
        self.searched.append(entity)
        return SearchResult(Article(entity, "A film."))


def test_a_tampered_text_is_cut_again_as_a_reply_would_be(cli: Runner, wiki: FakeMediaWiki) -> None:
    with FakeOpenAI([*scripted(*GOOD_RUN), DOWN]) as llm:
        ask(cli, llm, wiki)
        invented = GOOD_RUN[0] + "\nObservation 1: Arthur's Magazine is from 2020."
        tamper(
            cache_path(cli.home),
            "UPDATE entries SET value = CAST(json_set(value, '$.completions[0].text', ?) AS BLOB)"
            " WHERE json_extract(value, '$.completions[0].text') = ?",
            invented,
            GOOD_RUN[0],
        )
        steps = ask(cli, llm, wiki)["steps"]
    assert isinstance(steps, list) and "2020" not in json.dumps(steps)


def test_a_locked_cache_is_a_warning_and_no_entry(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite3"
    warnings: list[str] = []
    store = CacheStore(path, 1 << 20, warnings.append, busy_timeout_s=0.05)
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")  # another process writing, for longer than the timeout
    store.put("k", "model", b"{}")
    assert len(warnings) == 1 and "database is locked" in warnings[0]
    assert not store.usable and store.get("k") is None
    other.execute("ROLLBACK")
    other.close()


def test_least_recently_used_entries_go_first(tmp_path: Path) -> None:
    ticks = iter(range(1, 10**6))
    store = CacheStore(tmp_path / "c", 1 << 20, print, clock=lambda: float(next(ticks)))
    for number in range(20):
        store.put(f"k{number}", "wiki", bytes(1000))
    assert store.get("k0") is not None  # used again: the most recent
    store.max_bytes = 10_000  # cache_max_mb lowered
    store.evict()
    kept = [f"k{n}" for n in range(20) if store.get(f"k{n}") is not None]
    assert "k0" in kept and "k1" not in kept
    assert sum(store.stats().bytes.values()) <= 9_000
