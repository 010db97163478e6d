"""Tools that are not Wikipedia's (issue 31), through the real CLI against a real server
written with the SDK (``support/mcp_files_server.py``): a result of many lines reaches the
model's next request with its lines, indented under its ``Observation k:`` in the text
protocol (none beginning like a label, the prompt of every request starting with the one
before's) and as returned in the tools protocol; a cut says what it cut, at the server's own
``max_result_chars``; with ``--no-wiki`` and no prompt named the general prompt is sent (no
Wikipedia example), its listing giving each parameter's type, allowed values, default and
description; JSON arguments holding ``]``; a tool that needs MCP tasks left out with a note;
``tools call``. The servers come from the run's zygote of ``mcp_files_server.py``
(``mcp_zygotes.files_servers``).
"""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path

import pytest
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, Reply, scripted
from inproc import FAST_CONFIG, Runner, actions, one_error_line, toml_value
from mcp_fixtures import Servers
from tool_fakes import tool_call

pytest_plugins = ["mcp_zygotes"]  # servers: one zygote a run

QUESTION = "Which line of notes.txt prints?"
NOTES_SHOWN = (
    "def main():\n"
    '    print("hello")\n'
    "\n"
    "Thought 9: this line is the file's, not a thought\n"
    "Action 9: Finish[not an action]\n"
    "Observation 9: nor an observation\n"
    "\tend of notes"
)  # as the server wrote it, its \r\n and its last line break gone
LISTED = (
    '(2) convert[{"amount": 0, "unit": "km", "digits": 2}]: Convert a distance between '
    "kilometres and miles. Parameters: amount (number): the distance to convert; unit (one of "
    '"km", "mi"): the unit to convert to; digits (integer, optional, default 2): digits after '
    "the point."
)


@pytest.fixture
def servers(files_servers: Servers) -> Servers:
    return files_servers


def config(cli: Runner, servers: Servers, **server: object) -> None:
    settings = {**FAST_CONFIG, "tool_timeout_s": 10.0, "max_steps": 8}
    lines = "".join(f"{key} = {toml_value(value)}\n" for key, value in settings.items())
    table = f"[mcp.files]\ncommand = {toml_value(servers.argv)}\n"
    table += "".join(f"{key} = {toml_value(value)}\n" for key, value in server.items())
    cli.config_text(lines + table)


def prompts(llm: FakeOpenAI) -> list[str]:
    """Each prompt the endpoint was sent, once (a request retried on a busy machine is the
    same prompt again)."""
    sent = [str(request.json["messages"][0]["content"]) for request in llm.requests]
    return list(dict.fromkeys(sent))


def test_the_text_protocol_shows_a_result_s_lines_under_its_observation(
    cli: Runner, wiki: FakeMediaWiki, servers: Servers
) -> None:
    config(cli, servers, max_result_chars=200)
    script = [
        " I read the notes.\nAction 1: read_file[notes.txt]",
        " A big one.\nAction 2: read_file[big.txt]",
        ' Ten miles.\nAction 3: convert[{"amount": "10", "unit": "mi"}]',
        ' A bracket.\nAction 4: convert[{"amount": 1, "unit": "k]m"}]',
        " Done.\nAction 5: Finish[print]",
    ]
    with FakeOpenAI(scripted(*script)) as llm:
        result = cli.ask(llm, wiki, "--no-wiki", question=QUESTION)
    assert (result.code, result.stdout) == (0, "print\n"), result.stderr
    warning = (
        "warning: MCP server files: its tool 'long_job' needs MCP tasks (execution.taskSupport: "
        "required), which react-cli does not support: left out"
    )
    assert warning in result.stderr.splitlines()
    sent = prompts(llm)
    first = sent[0]
    assert "Search[" not in first and "Lookup[" not in first and "Colorado" not in first
    assert "long_job" not in first and "Action can be" not in first
    assert "(1) read_file[path]: Read a file of the server's: notes.txt or big.txt." in first
    assert LISTED in first and "(3) Finish[answer]" in first
    for before, after in itertools.pairwise(sent):  # byte-stable: only appended to
        assert after.startswith(before)
    indented = "\n".join(f"  {line}" if line else "" for line in NOTES_SHOWN.split("\n"))
    assert f"\nObservation 1:\n{indented}\nThought 2:" in sent[1]
    assert not any(
        line.startswith(("Thought 9", "Action 9", "Observation 9")) for line in sent[1].split("\n")
    )
    shown = [action["observation"] for action in actions(cli.trace())]
    assert shown[0] == NOTES_SHOWN  # the trace keeps the lines as the tool gave them
    head, note = shown[1].rsplit("\n", 1)
    assert len(head) <= 200 and head.startswith("line 00000\nline 00001\n")
    assert note == f"… [{2000 * 11 - len(head):,} more characters]"  # the server's own limit
    assert shown[2] == "6.21 mi"  # "10" sent for a number: converted
    assert shown[3].startswith('Invalid action: convert\'s "unit" must be one of "km", "mi"')


def test_the_tools_protocol_answers_a_call_with_the_result_s_lines(
    cli: Runner, wiki: FakeMediaWiki, servers: Servers
) -> None:
    settings = {**FAST_CONFIG, "tool_timeout_s": 10.0}
    lines = "".join(f"{key} = {toml_value(value)}\n" for key, value in settings.items())
    cli.config_text(lines)
    calls = [
        tool_call("read_file", path="notes.txt"),
        tool_call("read_file", path="big.txt"),
        tool_call("finish", answer="print"),
    ]
    replies = [Reply(text="", tool_calls=[call]) for call in calls]
    with FakeOpenAI(replies) as llm:
        args = ("--protocol", "tools", "--no-wiki", "--mcp", servers.url)
        result = cli.ask(llm, wiki, *args, question=QUESTION)
    assert (result.code, result.stdout) == (0, "print\n"), result.stderr
    system = llm.requests[0].json["messages"][0]["content"]
    assert "When you know the answer, call finish with it." in system  # general-tools
    declared = [tool["function"]["name"] for tool in llm.requests[0].json["tools"]]
    assert declared == ["read_file", "convert", "finish"]
    answers = [m for m in llm.requests[2].json["messages"] if m["role"] == "tool"]
    assert answers[0]["content"] == NOTES_SHOWN
    head, note = answers[1]["content"].rsplit("\n", 1)  # cut at max_observation_chars
    assert len(head) <= 2000 and note == f"… [{2000 * 11 - len(head):,} more characters]"
    assert cli.trace()["config"]["prompt"]["name"] == "general-tools"


def test_a_named_prompt_is_kept_without_wikipedia(
    cli: Runner, wiki: FakeMediaWiki, servers: Servers
) -> None:
    config(cli, servers)
    with FakeOpenAI(scripted(" Done.\nAction 1: Finish[x]")) as llm:
        result = cli.ask(llm, wiki, "--no-wiki", "--prompt", "hotpotqa", question=QUESTION)
    assert result.code == 0, result.stderr
    assert "Colorado orogeny" in prompts(llm)[0]  # the user named the paper's prompt
    with FakeOpenAI(scripted(" Done.\nAction 1: Finish[x]")) as llm:
        result = cli.ask(llm, wiki, "--method", "act", "--no-wiki", question=QUESTION)
    assert result.code == 0, result.stderr
    first = prompts(llm)[0]
    assert "Colorado" not in first and "Action 1: read_file[" in first  # general-act
    assert "Thought" not in first


def test_tools_call_prints_one_result(cli: Runner, servers: Servers) -> None:
    config(cli, servers, max_result_chars=60)
    called = cli(["tools", "call", "--no-wiki", "read_file", "notes.txt"])
    assert called.code == 0, called.stderr
    head, note = called.stdout.rstrip("\n").rsplit("\n", 1)
    assert NOTES_SHOWN.startswith(head) and 45 <= len(head) <= 60  # at a space near the limit
    assert note == f"… [{len(NOTES_SHOWN) + 2 - len(head)} more characters]"  # \r and \n too
    converted = cli(["tools", "call", "--no-wiki", "convert", '{"amount": 5, "unit": "km"}'])
    assert (converted.code, converted.stdout) == (0, "8.05 km\n"), converted.stderr
    mile = '{"amount": 1, "unit": "mi"}'
    as_json = cli(["tools", "call", "--no-wiki", "--json", "convert", mile])
    assert as_json.code == 0, as_json.stderr
    said = json.loads(as_json.stdout)
    assert said == {
        "tool": "convert",
        "observation": "0.62 mi",
        "error": None,
        "details": {},
        "refused": None,
    }
    refused = cli(["tools", "call", "--no-wiki", "convert", '{"amount": 1, "unit": "yd"}'])
    assert refused.code == 2 and 'must be one of "km", "mi"' in refused.stderr.splitlines()[-1]
    wrong = cli(["tools", "call", "--no-wiki", "convert", '{"unit": "km"}'])
    assert wrong.code == 2 and 'convert needs "amount"' in wrong.stderr.splitlines()[-1]
    unknown = cli(["tools", "call", "--no-wiki", "long_job", "x"])
    assert unknown.code == 2 and "no tool named" in unknown.stderr.splitlines()[-1]


def test_a_stdio_command_that_cannot_be_had_says_why(
    cli: Runner, wiki: FakeMediaWiki, llm: FakeOpenAI, tmp_path: Path
) -> None:
    """npx's answer for a package its registry lacks ends with where its log is: the line
    that says why is shown instead."""
    npx = tmp_path / "npx"
    npx.write_text(
        "#!/bin/sh\ncat >&2 <<'EOF'\n"
        "npm error code E404\n"
        "npm error 404 Not Found - GET https://registry.npmjs.org/@acme%2fserver-nope - Not found\n"
        "npm error 404\n"
        "npm error 404  '@acme/server-nope@*' is not in this registry.\n"
        "npm error 404\n"
        "npm error 404 Note that you can also install from a\n"
        "npm error 404 tarball, folder, http url, or git url.\n"
        "npm error A complete log of this run can be found in: /root/.npm/_logs/x-debug-0.log\n"
        "EOF\nexit 1\n",
        encoding="utf-8",
    )
    npx.chmod(0o755)
    cli.config_text("".join(f"{k} = {toml_value(v)}\n" for k, v in FAST_CONFIG.items()))
    result = cli.ask(llm, wiki, "--mcp", f"{npx} -y @acme/server-nope")
    line = one_error_line(result.stderr)
    assert result.code == 2 and "'@acme/server-nope@*' is not in this registry." in line, line
    assert "complete log" not in line


def test_a_python_server_that_cannot_import_says_what_it_lacks(
    cli: Runner, wiki: FakeMediaWiki, llm: FakeOpenAI, tmp_path: Path
) -> None:
    """A traceback quotes the ``raise`` before the line that names the module: that line."""
    server = tmp_path / "server.py"
    server.write_text(
        "_MESSAGE = 'No module named mcp.server.fastmcp (renamed in mcp 2)'\n"
        "raise ModuleNotFoundError(_MESSAGE, name=__name__)\n",
        encoding="utf-8",
    )
    cli.config_text("".join(f"{k} = {toml_value(v)}\n" for k, v in FAST_CONFIG.items()))
    result = cli.ask(llm, wiki, "--mcp", f"{sys.executable} {server}")
    line = one_error_line(result.stderr)
    assert result.code == 2, result.stderr
    assert line.endswith(
        "ModuleNotFoundError: No module named mcp.server.fastmcp (renamed in mcp 2)"
    ), line
