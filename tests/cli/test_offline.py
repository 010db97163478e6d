"""A first run with no key and no network (issue 32), through the CLI: the archive built from
the HotpotQA sample shipped inside react-cli, ``ask`` and ``eval`` over it against a local
model endpoint (a fake: no real model runs in tests), no host name looked up but this
machine's; and what an unreachable Wikipedia or endpoint says, at once: a name under
``.invalid`` (which never resolves: not even asked of DNS) and a closed loopback port."""

from __future__ import annotations

import json
import socket

import pytest
from eval_fakes import PerQuestion, finish, rows_of, search, summary_of
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, scripted
from inproc import Runner, one_error_line
from lookups import Lookups, beyond_loopback

from react_cli.eval.catalog import SAMPLE_FILE

SAMPLE = json.loads(SAMPLE_FILE.read_text(encoding="utf-8"))
FIRST = SAMPLE[0]["question"]  # Were Scott Derrickson and Ed Wood of the same nationality?
SCRIPT = {
    FIRST: [
        search("Scott Derrickson"),
        " He is American. Now Ed Wood.\nAction 2: Search[Ed Wood]",
        finish("yes", 3),
    ]
}
WIKI_HINT = (
    "offline or behind a firewall? answer from an archive: --wiki zim:NAME ('react-cli wiki "
    "get NAME' downloads one, 'react-cli wiki build-zim' builds one)"
)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_the_whole_offline_path_a_newcomer_follows(cli: Runner) -> None:
    asked = Lookups.start()
    built = cli(["wiki", "build-zim", "hotpotqa-sample"])
    assert built.code == 0, built.stderr
    archive = cli.home / "zim" / "hotpotqa-sample.zim"
    assert built.stdout == f"{archive}: 100 articles; use --wiki zim:hotpotqa-sample\n"
    with FakeOpenAI(PerQuestion(SCRIPT)) as llm:
        env = {"OPENAI_BASE_URL": llm.url, "REACT_CLI_MODEL": "gemma-3-270m"}
        asked_one = cli(["ask", FIRST, "--wiki", "zim:hotpotqa-sample", "-v"], **env)
        out = cli.home / "first-eval"
        args = ["eval", "hotpotqa-sample", "--wiki", "zim:hotpotqa-sample", "--limit", "3"]
        evaluated = cli([*args, "--out", str(out)], **env)
    assert asked_one.code == 0 and asked_one.stdout == "yes\n", asked_one.stderr
    assert "Observation 1: Scott Derrickson (born July 16, 1966) is an American director" in (
        asked_one.stderr
    )
    assert "[1] Scott Derrickson — hotpotqa-sample.zim: Scott_Derrickson" in asked_one.stderr
    assert evaluated.code == 0, evaluated.stderr
    rows = rows_of(out)
    assert [row["index"] for row in rows] == [0, 1, 2] and rows[0]["em"] == 1.0
    summary = summary_of(out)
    assert summary["dataset"]["path"] == str(SAMPLE_FILE) and summary["n"] == 3
    assert beyond_loopback(asked) == []  # no name looked up but this machine's


def test_the_sample_can_be_built_anywhere_and_named_by_its_path(cli: Runner) -> None:
    out = cli.home / "elsewhere.zim"
    result = cli(["wiki", "build-zim", str(SAMPLE_FILE), str(out)])
    assert result.code == 0 and result.stdout.endswith(f"use --wiki zim:{out}\n")


@pytest.mark.parametrize(
    "wiki",
    ["https://wikipedia.react-cli-test.invalid", f"http://127.0.0.1:{closed_port()}"],
    ids=["name-that-never-resolves", "closed-port"],
)
def test_an_unreachable_wikipedia_fails_at_once_with_the_offline_hint(
    cli: Runner, wiki: str
) -> None:
    cli.config_text("")  # a new user's settings: 4 retries, none of them spent here
    asked = Lookups.start()
    steps = [search("Scott Derrickson"), search("Ed Wood", 2), finish("yes", 3)]
    with FakeOpenAI(scripted(*steps)) as llm:
        result = cli(
            ["ask", FIRST], OPENAI_BASE_URL=llm.url, REACT_CLI_MODEL="m", REACT_CLI_WIKI=wiki
        )
    assert result.code == 1
    line = one_error_line(result.stderr)  # no retry notice before it
    reason = "cannot resolve the host name" if "invalid" in wiki else "connection refused"
    assert reason in line and line.endswith(f"{WIKI_HINT} (2 failed tool calls in a row)")
    assert beyond_loopback(asked) == []  # .invalid is never asked of DNS
    observations = json.dumps([request.json for request in llm.requests])
    assert "offline or behind a firewall" not in observations  # the hint is the user's only
    assert "Wikipedia is unavailable right now" in observations


def test_an_unreachable_endpoint_fails_at_once_with_the_offline_hint(
    cli: Runner, wiki: FakeMediaWiki
) -> None:
    cli.config_text("")
    asked = Lookups.start()
    url = "https://llm.react-cli-test.invalid/v1"
    result = cli(["ask", FIRST], OPENAI_BASE_URL=url, REACT_CLI_MODEL="m", REACT_CLI_WIKI=wiki.url)
    assert result.code == 1
    assert one_error_line(result.stderr) == (
        f"Error: no answer: cannot reach {url}/chat/completions: cannot resolve the host name; "
        "offline or behind a firewall? a model server on this machine needs no network: "
        "--base-url http://127.0.0.1:8080/v1"
    )
    assert beyond_loopback(asked) == []


def test_wiki_search_offline_says_the_same(cli: Runner) -> None:
    result = cli(["wiki", "search", "--wiki", "https://wikipedia.react-cli-test.invalid", "x"])
    assert result.code == 1
    assert one_error_line(result.stderr).endswith(WIKI_HINT)
