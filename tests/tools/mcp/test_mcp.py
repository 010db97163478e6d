"""Tools from real MCP servers (``support/mcp_server.py``, written with the SDK), through the
real CLI: over stdio (a process each run starts and stops) and over streamable HTTP (one
server in a thread for the module), in both protocols; a tool that raises, refuses, hangs past
``tool_timeout_s``, answers 10 MB or escape sequences, kills its server (started again once,
then stopped for good); a server that never
answers ``initialize``; the environment a stdio server sees; ``eval`` sharing one server;
Ctrl-C and ``--timeout`` stopping the servers; ``replay --rerun`` offline. Then the room's
parts on hostile input, without the SDK's server: settings that name servers, the environment a
stdio server gets, listings made into declarations, results into text, and the stdio transport
against processes that misbehave (an endless line, a process that ignores its closed stdin and
``SIGTERM``). One file: the SDK is imported once.

A process that imports the SDK costs half a second of CPU: the servers come from the run's one
(``mcp_zygotes.servers``, a zygote that forks each stdio server a run starts, and serves HTTP).
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import mcp_types
import pytest
from eval_fakes import PerQuestion
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, Reply, scripted
from hostile import cli_fuzz
from hypothesis import given
from hypothesis import strategies as st
from inproc import FAST_CONFIG, Runner, actions, one_error_line, servers_env, toml_value
from mcp_fixtures import Servers
from tool_fakes import tool_call

from react_cli.core.errors import UsageError
from react_cli.infra.redaction import Redactor
from react_cli.settings.mcp import McpServer, mcp_servers
from react_cli.tools.mcp.environment import server_environment
from react_cli.tools.mcp.tools import declaration, listed, result_text, tool_name
from react_cli.tools.mcp.transport import Link, stdio_streams
from react_cli.tools.origin import OriginKind, ToolOrigin

pytest_plugins = ["mcp_zygotes"]  # servers: one zygote a run

QUESTION = "What do my notes say about Paris?"
KEY = "sk-test-0123456789abcdef"


def config(cli: Runner, extra: str = "", **values: object) -> None:
    settings = {**FAST_CONFIG, "tool_timeout_s": 10.0, **values}
    lines = "".join(f"{key} = {toml_value(value)}\n" for key, value in settings.items())
    cli.config_text(lines + extra)


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def no_bridge_left() -> bool:
    return not [t for t in threading.enumerate() if t.name == "react-cli-mcp"]


def interrupt_once(marker: Path) -> threading.Thread:
    """Ctrl-C (SIGINT to the main thread) once the server's hang tool has written ``marker``."""

    def wait_then_interrupt() -> None:
        until = time.monotonic() + 30
        while not marker.exists() and time.monotonic() < until:
            time.sleep(0.01)
        signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)

    thread = threading.Thread(target=wait_then_interrupt, daemon=True)
    thread.start()
    return thread


def test_a_stdio_server_in_the_text_protocol_until_ctrl_c(
    cli: Runner, wiki: FakeMediaWiki, servers: Servers, tmp_path: Path
) -> None:
    marker = tmp_path / "hanging"
    table = f'[mcp.notes]\ncommand = {toml_value(servers.argv)}\nenv = {{ EXTRA = "1" }}\n'
    config(cli, table, max_steps=10)
    script = [
        " Echo.\nAction 1: echo[hi]",
        " My notes.\nAction 2: notes.search[Paris]",
        " Boom.\nAction 3: boom[x]",
        " Colours.\nAction 4: escape[red]",
        " Everything.\nAction 5: big[10000000]",
        " Secrets?\nAction 6: env[OPENAI_API_KEY,COPY_OF_KEY,NOTES_HOME,EXTRA]",
        f" Wait.\nAction 7: hang[{marker}]",
    ]
    watcher = interrupt_once(marker)
    env = {"OPENAI_API_KEY": KEY, "COPY_OF_KEY": KEY, "NOTES_HOME": "/tmp/notes"}
    with FakeOpenAI(scripted(*script)) as llm:
        result = cli(["ask", QUESTION], **servers_env(llm, wiki), **env)
    watcher.join()
    assert result.code == 130 and "interrupted" in result.stderr, result.stderr
    prompt = llm.requests[0].json["messages"][0]["content"]
    assert "Action can be 18 types" in prompt and "(3) echo[text]: Echo the text" in prompt
    assert "(5) notes.search[query]: Search the notes" in prompt  # Search is Wikipedia's
    trace = cli.trace()
    assert trace["stop_reason"] == "interrupted"
    shown = [action["observation"] for action in actions(trace)]
    assert shown[:4] == [
        "echo: hi",
        "notes about Paris",
        "boom failed: Error executing tool boom",  # the SDK withholds a crash's message
        "red done",  # escape sequences and control characters removed
    ]
    assert shown[4].startswith("lorem ipsum dolor")
    head, note = shown[4].split("\n")  # 10 MB cut at max_observation_chars, the cut said
    assert len(head) <= 2000 and "END" not in head and note == "… [9,998,007 more characters]"
    assert shown[5] == (
        "OPENAI_API_KEY=<unset>; COPY_OF_KEY=<unset>; NOTES_HOME=/tmp/notes; EXTRA=1"
    )
    assert trace["steps"][2]["actions"][0]["error"] == "Error executing tool boom"
    notes = [spec for spec in trace["config"]["tools"] if spec["name"] == "notes.search"]
    assert notes[0]["origin"] == {
        "kind": "mcp",
        "server": "notes",
        "command": servers.command,
        "server_name": "demo",
        "server_version": "1.2.3",
    }
    pid = int(marker.read_text(encoding="utf-8"))
    assert gone(pid) and no_bridge_left()  # stopped by the Ctrl-C's end of the run
    assert KEY not in json.dumps(trace)


def test_a_stdio_server_in_the_tools_protocol_that_dies_is_started_again_once(
    cli: Runner, wiki: FakeMediaWiki, servers: Servers, tmp_path: Path
) -> None:
    config(cli)
    calls = [
        tool_call("concat", a="x", b="y"),
        tool_call("refuse", text="fly"),
        tool_call("pid", text="x"),
        tool_call("die", code="3"),
        tool_call("pid", text="again"),
        tool_call("die", code="3"),
        tool_call("echo", text="anyone?"),
    ]
    replies = [Reply(text="", tool_calls=[call]) for call in calls]
    trace_path = tmp_path / "died.json"
    with FakeOpenAI(replies) as llm:
        args = ["--protocol", "tools", "--mcp", servers.command, "--trace", str(trace_path)]
        started = servers.started()
        result = cli.ask(llm, wiki, *args, question=QUESTION)
    assert result.code == 1, result.stderr
    warning, error = result.stderr.splitlines()
    assert warning == (
        "warning: MCP server demo stopped (it closed its output); started again (once: if it "
        "stops again, the calls to it fail)"
    )
    assert error == (
        "Error: no answer: the MCP server stopped (it closed its output) "
        "(2 failed tool calls in a row)"
    )
    assert servers.started() == started + 2  # once, then once again: no more
    declared = [tool["function"]["name"] for tool in llm.requests[0].json["tools"]]
    assert declared[:4] == ["search", "lookup", "echo", "concat"] and "demo_search" in declared
    trace = json.loads(trace_path.read_text(encoding="utf-8"))
    shown = [action["observation"] for action in actions(trace)]
    assert shown[:2] == ["xy", "refuse failed: Error executing tool refuse: cannot fly"]
    stopped = "the MCP server stopped (it closed its output)"
    assert shown[3] == f"die failed: {stopped}" and shown[5:] == [
        f"die failed: {stopped}",
        f"echo failed: {stopped}",
    ]
    assert shown[4] != shown[2]  # another process answered
    assert [bool(action["details"].get("unavailable")) for action in actions(trace)] == [
        False,
        False,
        False,
        True,
        False,
        True,
        True,
    ]
    assert gone(int(shown[2])) and gone(int(shown[4])) and no_bridge_left()

    started = servers.started()
    rerun = cli(["replay", "--rerun", str(trace_path)])  # offline: the recording answers
    assert rerun.code == 0 and "reproduced the recorded run: no answer" in rerun.stderr
    assert servers.started() == started
    live = cli(["replay", "--rerun", "--live-tools", str(trace_path)], **servers_env(llm, wiki))
    assert live.code == 2
    assert "its tool echo (MCP server demo (" in one_error_line(live.stderr)
    assert "give --mcp with its server (a trace starts none by itself)" in live.stderr


def test_an_eval_shares_one_stdio_server(
    cli: Runner, wiki: FakeMediaWiki, servers: Servers, tmp_path: Path
) -> None:
    dataset = tmp_path / "two.jsonl"
    questions = ["Who is one?", "Who is two?"]
    rows = [json.dumps({"question": q, "answer": "x"}) for q in questions]
    dataset.write_text("\n".join(rows) + "\n", encoding="utf-8")
    config(cli)
    script = [" Ask it.\nAction 1: pid[me]", " Done.\nAction 2: Finish[x]"]
    out = tmp_path / "eval"
    with FakeOpenAI(PerQuestion({q: list(script) for q in questions})) as llm:
        args = ["eval", str(dataset), "--out", str(out), "--concurrency", "2"]
        started = servers.started()
        result = cli([*args, "--mcp", servers.command], **servers_env(llm, wiki))
    assert result.code == 0, result.stderr
    rows_read = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    traces = [json.loads((out / row["trace"]).read_text(encoding="utf-8")) for row in rows_read]
    pids = {trace["steps"][0]["actions"][0]["observation"] for trace in traces}
    assert len(traces) == 2 and len(pids) == 1  # both questions called one server
    assert servers.started() == started + 1
    assert gone(int(pids.pop())) and no_bridge_left()
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["config"]["mcp"] == [servers.command]  # as shown: nothing secret in it
    with FakeOpenAI(PerQuestion({q: list(script) for q in questions})) as llm:
        resumed = cli(["eval", "--resume", str(out)], **servers_env(llm, wiki))
    assert resumed.code == 2 and not llm.requests  # the server was not given again
    assert "was run with another set of MCP servers" in one_error_line(resumed.stderr)


def test_a_chat_starts_its_server_once_for_every_question_and_stops_it(
    cli: Runner, wiki: FakeMediaWiki, servers: Servers
) -> None:
    config(cli)
    questions = ["Who is one?", "Who is two?"]
    script = [" Ask it.\nAction 1: pid[me]", " Done.\nAction 2: Finish[x]"]
    started = servers.started()
    with FakeOpenAI(PerQuestion({q: list(script) for q in questions})) as llm:
        stdin = "".join(f"{q}\n" for q in questions)
        result = cli(["chat", "--mcp", servers.command], stdin, **servers_env(llm, wiki))
    assert (result.code, result.stdout) == (0, "x\nx\n"), result.stderr
    traces = [json.loads(p.read_text(encoding="utf-8")) for p in (cli.home / "traces").iterdir()]
    pids = {trace["steps"][0]["actions"][0]["observation"] for trace in traces}
    assert len(traces) == 2 and len(pids) == 1  # both questions called one server
    assert servers.started() == started + 1
    assert gone(int(pids.pop())) and no_bridge_left()  # stopped when the chat ended


def test_a_streamable_http_server_in_the_text_protocol(
    cli: Runner, wiki: FakeMediaWiki, servers: Servers
) -> None:
    config(cli, tool_timeout_s=0.2)
    url = servers.url.replace("http://", "http://reader:pa55word@")
    script = (
        " Wait.\nAction 1: hang[x]",
        " Echo.\nAction 2: echo[hi]",
        " Boom.\nAction 3: boom[x]",
        ' Join.\nAction 4: concat[{"a": "x", "b": "y"}]',
        " Done.\nAction 5: Finish[xy]",
    )
    with FakeOpenAI(scripted(*script)) as llm:
        result = cli.ask(llm, wiki, "--mcp", url, question=QUESTION)
    assert (result.code, result.stdout) == (0, "xy\n"), result.stderr
    path = next((cli.home / "traces").glob("*.json"))
    live = ["replay", "--rerun", "--live-tools", "--mcp", servers.url, str(path)]
    again = cli(live, **servers_env(llm, wiki))  # the server called again, named again
    assert (again.code, again.stdout) == (0, "xy\n"), again.stderr
    trace = cli.trace()
    assert [action["observation"] for action in actions(trace)[:4]] == [
        "hang failed: no answer within 0.2 s",
        "echo: hi",
        "boom failed: Error executing tool boom",
        "xy",
    ]
    origin = next(s for s in trace["config"]["tools"] if s["name"] == "echo")["origin"]
    assert origin == {
        "kind": "mcp",
        "server": "demo",
        "url": servers.url,
        "server_name": "demo",
        "server_version": "1.2.3",
    }
    assert "pa55word" not in json.dumps(trace) + result.stderr and no_bridge_left()
    from opentelemetry import trace as otel  # the SDK's spans go to the global provider:

    assert type(otel.get_tracer_provider()).__name__ == "ProxyTracerProvider"  # never set


def test_a_streamable_http_server_in_the_tools_protocol_within_the_run_s_time(
    cli: Runner, wiki: FakeMediaWiki, servers: Servers
) -> None:
    config(cli)
    replies = [
        Reply(text="Join.", tool_calls=[tool_call("concat", a="x", b="y")]),
        Reply(text="Wait.", tool_calls=[tool_call("hang", text="x")]),
    ]
    with FakeOpenAI(replies) as llm:
        args = ("--protocol", "tools", "--mcp", servers.url, "--timeout", "0.5")
        result = cli.ask(llm, wiki, *args, question=QUESTION)
    assert result.code == 1 and "the time limit (0.5 s) was reached" in result.stderr
    concat = next(t for t in llm.requests[0].json["tools"] if t["function"]["name"] == "concat")
    assert concat["function"]["parameters"]["required"] == ["a", "b"]
    steps = actions(cli.trace())
    assert steps[0]["observation"] == "xy"
    assert steps[1]["observation"].startswith("hang failed: no answer within 0.")  # the run's
    assert no_bridge_left()


def test_tools_lists_a_server_s_tools(cli: Runner, servers: Servers) -> None:
    secret = '{ Authorization = "Bearer s3cret-t0ken" }'
    table = f'[mcp.docs]\nurl = "{servers.url}"\nheaders = {secret}\n'
    config(cli, table)
    shown = cli(["tools"])
    assert shown.code == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[2].split() == [
        "echo[text]",
        "MCP",
        "server",
        "docs",
        "no",
        "consent",  # marked read-only
        "Echo",
        "the",
        "text",
        "back.",
    ]
    note = next(line for line in lines if line.startswith("write_note["))
    assert "MCP server docs  needs consent  Append the text" in note  # unmarked
    assert lines[-3].startswith("Finish[answer]") and "docs.search[query]" in shown.stdout
    assert lines[-1] == f"MCP server docs: {servers.url}; demo 1.2.3"
    listed = json.loads(cli(["tools", "--json", "--no-wiki"]).stdout)
    assert [t["name"] for t in listed][:3] == ["echo", "concat", "search"]  # no clash now
    shown_config = cli(["config", "--json"]).stdout
    assert json.loads(shown_config)["settings"]["mcp"]["value"] == [f"docs: {servers.url}"]
    assert "s3cret" not in shown.stdout + shown_config and no_bridge_left()


def _silent_port() -> socket.socket:
    """A port that accepts connections and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    return listener


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


NOT_STARTED = {
    "never-initializes": (
        f"{shlex.quote(sys.executable)} -c 'import sys; sys.stdin.read()'",
        "did not answer initialize within 0.1 s (tool_timeout_s)",
    ),
    "exits": (
        f"{shlex.quote(sys.executable)} -c 'import sys; sys.exit(\"no notes folder\")'",
        "exited (status 1) before answering initialize; it said: no notes folder",
    ),
    "no-such-command": ("react-cli-no-such-server --flag", "cannot be started: No such file"),
    "refused": (f"http://127.0.0.1:{_closed_port()}/mcp", "did not answer: "),
    "silent": ("SILENT", "did not answer initialize within 0.1 s (tool_timeout_s)"),
    "unbalanced": ("python 'server.py", '--mcp: the command "python \'server.py" cannot be split'),
}


@pytest.mark.parametrize("kind", NOT_STARTED)
def test_a_server_that_does_not_start_is_one_error_line_before_the_run(
    cli: Runner, wiki: FakeMediaWiki, llm: FakeOpenAI, kind: str
) -> None:
    given, said = NOT_STARTED[kind]
    config(cli, tool_timeout_s=0.1 if "within" in said else 10.0)  # a limit it must hit, or not
    llm.requests.clear()
    with _silent_port() as silent:
        given = given.replace("SILENT", f"http://127.0.0.1:{silent.getsockname()[1]}/mcp")
        result = cli.ask(llm, wiki, "--mcp", given)
    assert result.code == 2 and said in one_error_line(result.stderr), result.stderr
    assert llm.requests == [] and no_bridge_left()


def test_without_the_sdk_one_error_line_names_the_install(
    cli: Runner, wiki: FakeMediaWiki, llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)
    result = cli.ask(llm, wiki, "--mcp", "python server.py")
    assert result.code == 2
    assert one_error_line(result.stderr) == (
        "Error: MCP servers need the 'mcp' extra: pip install 'react-cli[mcp]'"
    )


BAD_TABLES: dict[str, Any] = {
    "both": ('[mcp.x]\ncommand = "a"\nurl = "http://h/mcp"\n', "give a command (stdio) or a url"),
    "unknown": ('[mcp.x]\ncomand = "a"\n', "unknown key(s) comand (did you mean command?)"),
    "name": ('[mcp."a b"]\ncommand = "a"\n', "a server's name is letters, digits"),
    "headers": ('[mcp.x]\ncommand = "a"\nheaders = { A = "b" }\n', "headers go with a url"),
    "pass_env": ('[mcp.x]\ncommand = "a"\npass_env = ["A B"]\n', "pass_env is a list of"),
}


@pytest.mark.parametrize("kind", BAD_TABLES)
def test_a_wrong_mcp_table_is_one_error_line(cli: Runner, kind: str) -> None:
    table, said = BAD_TABLES[kind]
    config(cli, table)
    result = cli(["tools"])
    assert result.code == 2 and said in one_error_line(result.stderr), result.stderr


# --- the parts, on hostile input ----------------------------------------------------------------


ORIGIN = ToolOrigin(OriginKind.MCP, server="notes")
NO_SECRET = Redactor()


def test_a_command_line_is_recorded_without_what_looks_like_a_credential() -> None:
    (server,) = mcp_servers(
        None,
        ["notes-server --token abc123 --api-key=xyz987 --dir ~/notes https://u:pw@h/x?k=1"],
        "config.toml",
    )
    notes = os.path.expanduser("~/notes")  # a word starting with ~, as a shell would
    assert server.reached() == (
        f"notes-server --token '***' '--api-key=***' --dir {shlex.quote(notes)} https://h/x"
    )
    assert server.name is None and server.transport == "stdio"


def test_named_servers_are_on_unless_disabled_and_given_by_name() -> None:
    table = {
        "notes": {"command": ["python", "notes.py"], "env": {"NOTES": "~/n"}},
        "docs": {"url": "https://docs.example/mcp", "enabled": False, "headers": {"A": "b"}},
    }
    assert [s.name for s in mcp_servers(table, [], "c")] == ["notes"]
    chosen = mcp_servers(table, ["docs", "notes", "http://127.0.0.1:1/mcp"], "c")
    assert [s.name for s in chosen] == ["notes", "docs", None]
    assert chosen[1].describe() == "docs: https://docs.example/mcp" and chosen[1].secrets() == ["b"]
    with pytest.raises(UsageError, match="is not a usable URL"):
        mcp_servers(None, ["http://"], "c")


def test_a_stdio_server_gets_the_environment_without_the_secrets() -> None:
    environ = {
        "OPENAI_API_KEY": "sk-0123456789",
        "MY_COPY": "sk-0123456789",
        "OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer t",
        "LANG": "C.UTF-8",
        "SHORT": "sk",
    }
    server = McpServer("notes", command=("x",), env=(("EXTRA", "1"),))
    env = server_environment(server, environ, ["sk-0123456789", "sk", None])
    assert env == {"LANG": "C.UTF-8", "SHORT": "sk", "EXTRA": "1"}  # "sk": too short to mask
    passing = McpServer("notes", command=("x",), pass_env=("OPENAI_API_KEY",))
    assert "OPENAI_API_KEY" in server_environment(passing, environ, ["sk-0123456789"])


def tool(name: str, schema: Any, description: str | None = "Does it.") -> mcp_types.Tool:
    return mcp_types.Tool(name=name, description=description, input_schema=schema)


def test_listed_names_become_names_the_model_can_write() -> None:
    assert tool_name("get weather!") == "get_weather"
    assert tool_name("123abc") == "t123abc" and tool_name("[]") is None
    assert tool_name("x" * 100) == "x" * 64
    tools = [tool("a b", {}), tool("a_b", {}), tool("", {}), tool("ok", {})]
    notes: list[str] = []
    assert [name for name, _ in listed(tools, NO_SECRET, notes.append)] == ["a_b", "ok"]  # once
    assert notes == [
        "its tool 'a_b' has the name of another of its tools: left out",
        "its tool '' has no name a model can write: left out",
    ]


def test_a_listing_becomes_a_declaration_or_is_left_out() -> None:
    one = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    spec = declaration(tool("find", one, "Find\x1b[31m it.\nNow."), "find", ORIGIN, NO_SECRET)
    assert spec is not None and spec.parameters is None and spec.argument == "q"
    assert spec.description == "Find it. Now."
    number = {"type": "object", "properties": {"n": {"type": "integer"}}}
    made = declaration(tool("count", number, None), "count", ORIGIN, NO_SECRET)
    assert made is not None and made.parameters == {**number, "required": []}
    assert made.description == "calls count on the MCP server notes."
    assert made.arguments('{"n": 3}') == {"n": 3}
    huge = {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(5000)}}
    assert declaration(tool("huge", huge), "huge", ORIGIN, NO_SECRET) is None
    assert (
        declaration(tool("odd", {"type": "object", "properties": []}), "odd", ORIGIN, NO_SECRET)
        is None
    )
    bad = {"type": "object", "properties": {"a": {}}, "required": "a"}
    assert declaration(tool("bad", bad), "bad", ORIGIN, NO_SECRET) is None


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)
SCHEMA_KEYS = st.sampled_from(["properties", "required", "additionalProperties", "type", "x"])


@cli_fuzz(40)
@given(st.dictionaries(SCHEMA_KEYS, JSON, max_size=4))
def test_any_schema_makes_a_declaration_or_none(schema: dict[str, Any]) -> None:
    made = declaration(tool("t", {"type": "object", **schema}), "t", ORIGIN, NO_SECRET)
    assert made is None or isinstance(made.schema, dict)


def test_a_result_s_text() -> None:
    result = mcp_types.CallToolResult(
        content=[
            mcp_types.TextContent(type="text", text="first"),
            mcp_types.ImageContent(type="image", data="AA==", mime_type="image/png"),
            mcp_types.TextContent(type="text", text="second"),
        ]
    )
    assert result_text(result) == "first\n[image image/png]\nsecond"
    structured = mcp_types.CallToolResult(content=[], structured_content={"result": 42})
    assert result_text(structured) == '{"result": 42}'


def _run(argv: list[str], link: Link, **limits: Any) -> list[object]:
    """What a session would read from a process: its first message, or none when the
    transport ends first (within 5 s); then the transport stops the process."""
    got: list[object] = []

    async def main() -> None:
        async with stdio_streams(tuple(argv), {}, None, link, **limits) as (read, _):
            with anyio.move_on_after(5):
                async for item in read:
                    got.append(item)
                    break

    anyio.run(main)
    return got


def test_an_endless_line_ends_the_connection_not_the_memory() -> None:
    link = Link()
    code = "import sys, time; sys.stdout.write('x' * 300000); sys.stdout.flush(); time.sleep(30)"
    got = _run([sys.executable, "-c", code], link, max_message_bytes=100_000, stop_wait_s=0.05)
    assert got == [] and link.broken == "it sent a message larger than 97.6562 KiB"


def test_a_process_that_ignores_stdin_and_sigterm_is_killed() -> None:
    link = Link()
    code = (
        "import signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        "print('not json', flush=True); print('oops', file=sys.stderr, flush=True); time.sleep(30)"
    )
    started = time.monotonic()
    got = _run([sys.executable, "-c", code], link, stop_wait_s=0.05, kill_wait_s=0.05)
    assert time.monotonic() - started < 5 and link.returncode == -9
    assert len(got) == 1 and isinstance(got[0], ValueError)  # a bad line is told, not fatal
    assert link.last_words() == "oops"


def test_a_json_answer_larger_than_the_limit_is_refused() -> None:
    import httpx2

    from react_cli.tools.mcp.transport import _Bounded

    def answer(request: httpx2.Request) -> httpx2.Response:
        body = b"[" + b"1," * 1000 + b"1]"
        return httpx2.Response(200, headers={"content-type": "application/json"}, content=body)

    async def main() -> None:
        link = Link()
        transport = _Bounded(httpx2.MockTransport(answer), 1000, link)
        async with httpx2.AsyncClient(transport=transport) as client:
            with pytest.raises(httpx2.ReadError):
                await client.post("http://127.0.0.1/mcp", json={})
        assert link.broken == "it sent an answer larger than 1000 bytes"

    anyio.run(main)
