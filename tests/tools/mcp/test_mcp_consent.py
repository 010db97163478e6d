"""Consent for MCP servers' tools, through the real CLI without a terminal (in-process) against
the real SDK-written server (``support/mcp_server.py``: its tools marked read-only run freely,
its unmarked ``write_note`` needs consent): refused in both protocols over stdio and HTTP, the
run going on, in the trace, ``-v`` and ``--json``; ``replay --rerun`` calling nothing and
``--live-tools`` under today's rules; rules matching a tool by each of its names (as shown,
after its server's name, as a native function) from flags and the config file; ``eval``
refusing on its worker threads and counting refusals in its rows, summary and ``eval show``;
``react-cli tools``. On a terminal: ``cli/test_consent_pty.py``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from eval_fakes import PerQuestion
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, Reply, scripted
from inproc import FAST_CONFIG, Runner, actions, one_error_line, servers_env, toml_value
from mcp_fixtures import Servers
from tool_fakes import tool_call

pytest_plugins = ["mcp_zygotes"]  # servers: one zygote a run

QUESTION = "What do my notes say?"
REFUSED = (
    "The user did not allow write_note (it needs consent, and there was no terminal to ask): "
    "the call did not run. Do without it: use another tool, or finish with what you know."
)


@pytest.fixture
def note(tmp_path: Path) -> Path:
    """The file ``write_note`` writes: it must not exist after a refused call."""
    return tmp_path / "note.txt"


def config(cli: Runner, servers: Servers, *, stdio: bool = False, extra: str = "") -> None:
    """The config file: quick settings, the test server as ``notes``, and ``extra``."""
    reached = f"command = {toml_value(servers.argv)}" if stdio else f'url = "{servers.url}"'
    settings = "".join(f"{k} = {toml_value(v)}\n" for k, v in FAST_CONFIG.items())
    cli.config_text(f"{settings}tool_timeout_s = 10.0\n{extra}\n[mcp.notes]\n{reached}\n")


def text_run(note: Path) -> list[Reply]:
    call = json.dumps({"path": str(note), "text": "one"})
    return scripted(
        " Read.\nAction 1: echo[hi]",
        f" Write.\nAction 2: write_note[{call}]",
        " Done.\nAction 3: Finish[done]",
    )


def native_run(note: Path) -> list[Reply]:
    calls = [
        tool_call("echo", text="hi"),
        tool_call("write_note", path=str(note), text="one"),
        tool_call("finish", answer="done"),
    ]
    return [Reply(text="", tool_calls=[call]) for call in calls]


@pytest.mark.parametrize(("protocol", "stdio"), [("text", True), ("tools", False)])
def test_an_unmarked_tool_is_refused_without_a_terminal_and_a_read_only_one_runs(
    cli: Runner, wiki: FakeMediaWiki, servers: Servers, note: Path, protocol: str, stdio: bool
) -> None:
    config(cli, servers, stdio=stdio)
    replies = text_run(note) if protocol == "text" else native_run(note)
    path = cli.home / "run.json"
    with FakeOpenAI(replies) as llm:
        args = ("--protocol", protocol, "-v", "--json", "--trace", str(path))
        result = cli.ask(llm, wiki, *args, question=QUESTION)
    assert result.code == 0, result.stderr
    assert not note.exists()  # the server was never asked to write
    summary = json.loads(result.stdout)
    assert (summary["answer"], summary["refused_calls"]) == ("done", 1)
    steps = actions(summary)
    assert [step["observation"] for step in steps[:2]] == ["echo: hi", REFUSED]
    assert [step.get("refused") for step in steps] == [None, "no_terminal", None]
    assert "Observation 2: The user did not allow write_note" in result.stderr  # -v
    assert "refused: no terminal to ask" in result.stderr
    told = llm.requests[2].json
    assert told is not None and REFUSED in json.dumps(told)
    trace = json.loads(path.read_text(encoding="utf-8"))
    declared = {spec["name"]: spec for spec in trace["config"]["tools"]}
    assert declared["write_note"]["needs_consent"] is True
    assert "needs_consent" not in declared["echo"]  # its server marks it read-only
    started = servers.started()
    rerun = cli(["replay", str(path), "--rerun"])  # the recording answers: nothing is called
    assert (rerun.code, rerun.stdout) == (0, "done\n"), rerun.stderr
    assert servers.started() == started and not note.exists()
    live = cli(["replay", str(path), "--live-tools", "--allow-tool", "write_note"], **env(wiki))
    assert live.code == 1 and "+ wrote 3 characters to" in live.stdout  # today's rule: it ran
    assert note.read_text(encoding="utf-8") == "one\n"


def env(wiki: FakeMediaWiki) -> dict[str, str]:
    """A re-run's environment: the wiki (no model is called)."""
    return servers_env(wiki, wiki)


def test_rules_match_a_server_s_tool_by_each_of_its_names_from_flags_and_config(
    cli: Runner, wiki: FakeMediaWiki, servers: Servers, note: Path
) -> None:
    def ask(*args: str, extra: str = "") -> tuple[FakeOpenAI, dict[str, Any]]:
        config(cli, servers, extra=extra)
        with FakeOpenAI(text_run(note)) as llm:
            result = cli.ask(llm, wiki, *args, question=QUESTION)
        assert result.code == 0, result.stderr
        return llm, cli.trace()

    ask("--allow-tool", "NOTES.write_note")  # after its server's name, in any case
    assert note.read_text(encoding="utf-8") == "one\n"
    ask(extra='[tools]\nallow = ["write_*"]\n')  # as shown, a glob in the config file
    assert note.read_text(encoding="utf-8") == "one\none\n"
    llm, trace = ask("--allow-tool", "notes.*", extra='[tools]\ndeny = ["write_note"]\n')
    assert "write_note[" not in json.dumps(llm.requests[0].json)  # deny wins: never shown
    assert trace["steps"][1]["error"] == "parse_error"  # no such tool for the model
    llm, trace = ask("--deny-tool", "notes.*")  # every tool of the server
    names = [spec["name"] for spec in trace["config"]["tools"]]
    assert names == ["Search", "Lookup", "Finish"]
    assert trace["steps"][0]["error"] == "parse_error"  # echo is gone too
    llm, trace = ask("--deny-tool", "notes_search")  # its native function name
    names = [spec["name"] for spec in trace["config"]["tools"]]
    assert "notes.search" not in names and "echo" in names and "write_note" in names
    assert note.read_text(encoding="utf-8") == "one\none\n"  # neither denied run wrote


def test_an_eval_refuses_on_its_workers_and_counts_refusals(
    cli: Runner, wiki: FakeMediaWiki, servers: Servers, note: Path, tmp_path: Path
) -> None:
    dataset = tmp_path / "two.jsonl"
    questions = ["Who is one?", "Who is two?"]
    lines = [json.dumps({"question": q, "answer": "done"}) for q in questions]
    dataset.write_text("\n".join(lines) + "\n", encoding="utf-8")
    config(cli, servers)
    write = json.dumps({"path": str(note), "text": "one"})
    scripts: dict[str, list[str | Reply]] = {
        questions[0]: [f" Write.\nAction 1: write_note[{write}]", " Done.\nAction 2: Finish[done]"],
        questions[1]: [" Read.\nAction 1: echo[hi]", " Done.\nAction 2: Finish[done]"],
    }
    out = tmp_path / "eval"
    with FakeOpenAI(PerQuestion(scripts)) as llm:
        args = ["eval", str(dataset), "--out", str(out), "--concurrency", "2"]
        result = cli(args, **servers_env(llm, wiki))
    assert result.code == 0, result.stderr
    assert not note.exists()
    rows = {
        row["question"]: row
        for row in map(json.loads, (out / "results.jsonl").read_text().splitlines())
    }
    assert rows[questions[0]]["refused_calls"] == 1 and "refused_calls" not in rows[questions[1]]
    assert {row["em"] for row in rows.values()} == {1.0}  # the runs went on to their answer
    trace = json.loads((out / rows[questions[0]]["trace"]).read_text(encoding="utf-8"))
    assert trace["steps"][0]["actions"][0]["refused"] == "no_terminal"
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["refused_calls"] == 1
    shown = cli(["eval", "show", str(out)])
    assert shown.code == 0 and "refused tool calls" in shown.stdout, shown.stderr
    again = tmp_path / "allowed"
    with FakeOpenAI(PerQuestion(scripts)) as llm:
        args = ["eval", str(dataset), "--out", str(again), "--allow-tool", "write_note"]
        assert cli(args, **servers_env(llm, wiki)).code == 0
    assert note.read_text(encoding="utf-8") == "one\n"
    assert "refused_calls" not in json.loads((again / "summary.json").read_text())
    # a folder gives no consent: --resume is told the rules again, and refuses others
    with FakeOpenAI(PerQuestion(scripts)) as llm:
        resumed = cli(["eval", "--resume", str(again)], **servers_env(llm, wiki))
        assert resumed.code == 2 and not llm.requests
        said = one_error_line(resumed.stderr)
        assert "was run with another --allow-tool set (write_note ≠ none)" in said
        args = ["eval", "--resume", str(again), "--allow-tool", "write_note"]
        assert cli(args, **servers_env(llm, wiki)).code == 0


def test_tools_lists_the_server_s_consent(cli: Runner, servers: Servers) -> None:
    config(cli, servers, extra='[tools]\nallow = ["notes.write*"]\n')
    listed = {t["name"]: t for t in json.loads(cli(["tools", "--json", "--no-wiki"]).stdout)}
    assert (listed["echo"]["needs_consent"], listed["echo"]["rule"]) == (False, None)
    write = listed["write_note"]
    assert (write["needs_consent"], write["rule"], write["pattern"]) == (
        True,
        "allow",
        "notes.write*",
    )
    shown = cli(["tools", "--deny-tool", "write_note"]).stdout
    line = next(line for line in shown.splitlines() if line.startswith("write_note["))
    assert "MCP server notes  denied (write_note)  Append the text" in line  # deny wins
