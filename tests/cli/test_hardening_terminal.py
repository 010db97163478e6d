"""Every text from a file or a server reaches the terminal cleaned, on every command (issue 18,
class 11): ``eval compare`` printed ``config.methods`` from ``summary.json`` raw, so a hostile
eval folder could clear the screen, retitle the terminal or write the clipboard (OSC 52).

Hostile text (escape sequences of every kind around a visible mark, and text hypothesis draws
from ``hostile.text``) is planted in every string of a trace, an eval folder's summary and
rows, a config file, a prompt file, the home directory's name, a Wikipedia page, a response
header the ``--debug`` log shows and a model id; every command that reads them runs, and
neither stdout nor stderr holds a control character.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_mediawiki import FakeMediaWiki, Fault
from fake_openai import FakeOpenAI, Reply
from hostile import cli_fuzz, text
from hypothesis import given
from inproc import Runner

pytest_plugins = ["share_evals"]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "traces"
MARK = "EVIL-MARK"
ESCAPES = "\x1b]52;c;ZXZpbA==\x07\x1b[2J\x1b]0;owned\x1b\\\x9b31m\u202e\x07\x1b[?1049h\x1bc"
# Characters no output may hold: C0 (but line feed and tab), DEL, C1, bidi and zero-width ones.
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")
# Fields whose value is one of a set: a hostile one makes the file unreadable, not shown.
KEEP = frozenset(
    {"version", "id", "created", "updated", "stop_reason", "api", "status", "format", "kind"}
    | {"branch", "sha256", "base_url", "wiki", "action", "trace", "path", "error_kind"}
)


def planted(value: Any, hostile: str) -> Any:
    """``value`` with ``hostile`` added to every string in it (but those of ``KEEP``)."""
    if isinstance(value, str):
        return value + hostile
    if isinstance(value, list):
        return [planted(item, hostile) for item in value]
    if isinstance(value, dict):
        return {k: v if k in KEEP else planted(v, hostile) for k, v in value.items()}
    return value


def assert_clean(args: list[str], out: str, err: str) -> None:
    for stream, written in (("stdout", out), ("stderr", err)):
        found = CONTROL.search(written)
        assert found is None, f"{args}: {stream} holds {found.group()!r}: {written!r:.300}"


@pytest.fixture(scope="module")
def model() -> Iterator[FakeOpenAI]:
    with FakeOpenAI([Reply("unused")], models=(f"gpt{ESCAPES}-{MARK}",)) as server:
        yield server


@cli_fuzz(2)
@given(drawn=text)
def test_no_command_shows_a_control_character_from_a_file_or_server(
    cli: Runner,
    eval_a: Path,
    eval_b: Path,
    wiki: FakeMediaWiki,
    model: FakeOpenAI,
    tmp_path_factory: pytest.TempPathFactory,
    drawn: str,
) -> None:
    hostile = f"{ESCAPES}{MARK}{drawn}{ESCAPES}"
    root = tmp_path_factory.mktemp("hostile")
    trace = root / "run.json"
    document = json.loads((EXAMPLES / "arthurs-magazine.json").read_text(encoding="utf-8"))
    trace.write_text(json.dumps(planted(document, hostile)), encoding="utf-8")
    folder = root / "eval"
    shutil.copytree(eval_a, folder)
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    summary["methods"] = {"react": {"n": 6, "em": 0.5}, "mine": {"n": 6, "em": 0.5}}
    (folder / "summary.json").write_text(json.dumps(planted(summary, hostile)), encoding="utf-8")
    rows = (folder / "results.jsonl").read_text(encoding="utf-8").splitlines()
    planted_rows = [json.dumps(planted(json.loads(row), hostile)) for row in rows]
    (folder / "results.jsonl").write_text("\n".join(planted_rows) + "\n", encoding="utf-8")
    prompt = root / "prompt.txt"
    prompt.write_text(f"Answer{hostile}\nQuestion: {{question}}\n", encoding="utf-8")
    home = root / f"home{ESCAPES}"
    home.mkdir()
    cli.config(model=hostile, prompt=hostile)
    page = wiki.pages["Arthur's Magazine"]
    wiki.pages["Arthur's Magazine"] = page + hostile
    wiki.faults.append(Fault(headers={"X-Echo": "\x1b]52;c;ZXZpbA==\x07\x9b31m"}, delay_s=0))
    shown = {  # each command, its exit code, and whether what it shows holds the mark
        ("replay", str(trace)): (0, True),
        ("replay", str(trace), "--json"): (0, True),
        ("replay", str(trace), "--format", "markdown"): (0, True),
        ("replay", str(trace), "--format", "html"): (0, True),
        ("replay", str(trace), "--rerun"): (1, True),  # the observations differ: a diff
        ("traces", "-n", "1"): (0, False),
        ("eval", "show", str(folder), "--wrong"): (0, True),
        ("eval", "compare", str(folder), str(folder), "--list", "flips"): (0, True),
        ("eval", "compare", str(folder), str(folder), "--json"): (0, True),
        ("config",): (0, True),
        ("prompts", "show", str(prompt)): (0, True),
        ("wiki", "search", "Arthur's Magazine", "--debug"): (0, True),
        ("models", "--base-url", model.url): (0, True),
    }
    try:
        for command, (code, marked) in shown.items():
            args = list(command)
            result = cli(args, REACT_CLI_WIKI=wiki.url)
            assert "Traceback" not in result.stderr, result.stderr
            assert_clean(args, result.stdout, result.stderr)
            assert result.code == code, (args, result.stderr)
            assert not marked or MARK in result.stdout + result.stderr, args
        for args in (["config", "path"], ["traces"]):
            result = cli(args, REACT_CLI_HOME=str(home))
            assert_clean(args, result.stdout, result.stderr)
            assert "home" in result.stdout + result.stderr
    finally:
        wiki.pages["Arthur's Magazine"] = page
