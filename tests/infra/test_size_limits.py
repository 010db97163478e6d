"""Bounded memory: answers are measured decompressed while they stream, stored pages before
they are read, and past the limit they are a failed tool call (Wikipedia) or a malformed answer
(model), never a process that grows without end.

Memory is measured with ``tracemalloc`` (the peak of Python allocations during the run, zlib's
buffers included), not with the process size, so other tests cannot blur it.
"""

from __future__ import annotations

import gzip
import importlib
import json
import tracemalloc
from pathlib import Path

import pytest
from conftest import CliResult
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, scripted
from hostile_server import Answer, HostileServer, head
from inproc import Runner, one_error_line
from zim_fixtures import build_archive

from react_cli.wiki.base import MAX_ANSWER_BYTES

INFLATED_MB = 300
MEMORY_BOUND = 64 * 2**20  # far below what reading the inflated body whole would take
SEARCH_THEN_FINISH = (
    " I should search it.\nAction 1: Search[Big]",
    " It is too big to read.\nAction 2: Finish[big]",
)


def gzip_bomb(content: bytes = b"\0") -> bytes:
    """About 300 KB of gzip that inflates to 300 MB (one member per megabyte)."""
    member = gzip.compress(content * 2**20, compresslevel=9)
    return member * INFLATED_MB


@pytest.fixture(scope="module")
def bomb() -> bytes:
    return gzip_bomb()


@pytest.fixture
def cli(home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Runner:
    runner = Runner(home, monkeypatch, capsys)
    runner.config(timeout_s=10, wiki_timeout_s=10)  # reading 16 MB must not time out here
    return runner


LAZY_IMPORTS = (
    *("react_cli.session", "react_cli.llm.client", "react_cli.display.render"),
    *("react_cli.traces.trace", "react_cli.wiki.mediawiki", "react_cli.wiki.zim"),
    *("bs4", "lxml.etree"),
)


def peak_memory(cli: Runner, args: list[str], **env: str) -> tuple[CliResult, int]:
    """Run the command and return the peak of Python allocations while it ran. A usage error
    first and the modules a run imports lazily: the peak measures the run, not first imports."""
    cli(["wiki", "search", "x", "--wiki", "zim:/nonexistent"])
    for module in LAZY_IMPORTS:
        importlib.import_module(module)
    tracemalloc.start()
    try:
        result = cli(args, **env)
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_wikipedia_gzip_bomb_stops_at_the_limit(cli: Runner, bomb: bytes) -> None:
    assert len(bomb) < 400_000
    answer = Answer(
        head(
            Content_Type="application/json", Content_Encoding="gzip", Content_Length=str(len(bomb))
        )
        + bomb
    )
    with HostileServer(answer) as wiki, FakeOpenAI(scripted(*SEARCH_THEN_FINISH)) as llm:
        result, peak = peak_memory(
            cli,
            ["ask", "How big?", "--json"],
            OPENAI_BASE_URL=llm.url,
            REACT_CLI_MODEL="m",
            REACT_CLI_WIKI=wiki.url,
        )
    assert result.code == 0, result.stderr
    step = json.loads(result.stdout)["steps"][0]["actions"][0]
    assert step["observation"] == (
        f"Wikipedia is unavailable right now (the answer from 127.0.0.1:{wiki.port} is larger "
        f"than {MAX_ANSWER_BYTES:,} bytes); try again or Finish."
    )
    assert peak < MEMORY_BOUND


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "no-stream"])
def test_a_model_gzip_bomb_is_a_malformed_answer(
    cli: Runner, wiki: FakeMediaWiki, bomb: bytes, stream: bool
) -> None:
    kind = "text/event-stream" if stream else "application/json"
    answer = Answer(
        head(Content_Type=kind, Content_Encoding="gzip", Content_Length=str(len(bomb))) + bomb
    )
    with HostileServer(answer) as llm:
        result, peak = peak_memory(
            cli,
            ["ask", "How big?", *([] if stream else ["--no-stream"])],
            OPENAI_BASE_URL=llm.url + "/v1",
            REACT_CLI_MODEL="m",
            REACT_CLI_WIKI=wiki.url,
        )
    assert result.code == 1
    what = "a stream event larger than" if stream else "a body larger than"
    assert f"answered HTTP 200 with {what}" in one_error_line(result.stderr)
    assert cli.trace()["stop_reason"] == "llm_error"
    assert peak < MEMORY_BOUND


def big_archive(path: Path) -> Path:
    """An archive holding a page over the size limit (18 MB of HTML) and a small one."""
    body = "<p>Big is a big page.</p>" * (MAX_ANSWER_BYTES // 24)
    return build_archive(
        path,
        {
            "Big": f'<div id="mw-content-text">{body}</div>',
            "Small": '<div id="mw-content-text"><p>Small is small.</p></div>',
        },
    )


def test_a_zim_page_over_the_limit_is_not_read(cli: Runner, tmp_path: Path) -> None:
    archive = big_archive(tmp_path / "big.zim")
    with FakeOpenAI(scripted(*SEARCH_THEN_FINISH)) as llm:
        result, peak = peak_memory(
            cli,
            ["ask", "How big?", "--json", "--wiki", f"zim:{archive}"],
            OPENAI_BASE_URL=llm.url,
            REACT_CLI_MODEL="m",
        )
    assert result.code == 0, result.stderr
    step = json.loads(result.stdout)["steps"][0]["actions"][0]
    assert step["observation"] == (
        "Wikipedia is unavailable right now (the ZIM page for 'Big' is larger than "
        f"{MAX_ANSWER_BYTES:,} bytes); try again or Finish."
    )
    assert peak < MAX_ANSWER_BYTES // 2  # never read: not even once its size
    small = cli(["wiki", "search", "Small", "--wiki", f"zim:{archive}"])
    assert (small.code, small.stdout) == (0, "Small is small.\n")
