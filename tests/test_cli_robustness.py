"""What a demanding user meets around a run: broken files, unwritable places, Ctrl-C at odd
moments. Each ends with one ``Error:`` line, the documented exit code and no traceback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import CliResult
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, scripted
from inproc import Runner, one_error_line

QUESTION = "Which magazine was started first, Arthur's Magazine or First for Women?"
GOOD_RUN = (
    " I need to search Arthur's Magazine.\nAction 1: Search[Arthur's Magazine]",
    " Arthur's Magazine was started in 1844.\nAction 2: Finish[Arthur's Magazine]",
)


@pytest.fixture
def cli(home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Runner:
    return Runner(home, monkeypatch, capsys)


@pytest.fixture
def llm() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(scripted(*GOOD_RUN)) as server:
        yield server


def ask(cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki, *args: str, **env: str) -> CliResult:
    return cli(
        ["ask", QUESTION, *args],
        OPENAI_BASE_URL=llm.url,
        REACT_CLI_MODEL="test-model",
        REACT_CLI_WIKI=wiki.url,
        **env,
    )


def test_config_file_that_is_not_utf8_is_a_usage_error(
    cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki
) -> None:
    (cli.home / "config.toml").write_bytes(b'model = "\xff\xfe"\n')
    result = ask(cli, llm, wiki)
    assert result.code == 2
    assert "config file" in one_error_line(result.stderr) and "UTF-8" in result.stderr
    assert not llm.requests
