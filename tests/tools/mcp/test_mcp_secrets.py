"""Secrets and tools, through the real CLI with real SDK-written servers (issue 29): no
credential of the user's reaches a tool server's environment unless ``pass_env`` names it;
none on a server's command line, headers or URL is stored or shown; every text a tool sends
back (a Python function's result or exception, an MCP server's result, resource, listing,
schema, error and start-up words) is redacted before the model, the trace, ``--json`` or the
terminal see it.

Every planted secret is searched for in every byte the command wrote (stdout, stderr, the
trace, an eval folder) and every request the model received, in the forms a message may spell
it. The servers are ``support/mcp_server.py``'s, forked by the run's zygote
(``mcp_zygotes.servers``); its ``get_env`` shows its whole environment as the reference
"everything" server's ``get-env`` does, ``reached`` its command line or its HTTP request.
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest
from eval_fakes import PerQuestion
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, Reply, scripted
from inproc import FAST_CONFIG, CliResult, Runner, actions, one_error_line, servers_env, toml_value
from mcp_fixtures import Servers
from tool_fakes import tool_call

from react_cli.settings.mcp import McpServer, masked_command
from react_cli.settings.secrets import known_secrets
from react_cli.settings.settings import Settings
from react_cli.tools.mcp.environment import server_environment

pytest_plugins = ["mcp_zygotes"]  # servers: one zygote a run
KEY = "sk-run-api-key-0123456789"
PLANTED = {  # the user's environment: credentials by name, and by value
    "GITHUB_TOKEN": "ghp_planted0123456789abcdef",
    "ANTHROPIC_API_KEY": "sk-ant-planted-0123456789",
    "AWS_SECRET_ACCESS_KEY": "aws/planted+secret/0123456789",
    "DB_PASSWORD": "db-pass-planted-4242",
    "BACKUP_URL": "https://backup:url-pass-planted-88@backup.example/",
    "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9/c?token=otlp-token-planted-99",
}
KEPT = {"NOTES_HOME": "/tmp/notes-kept", "TOKENIZERS_PARALLELISM": "false"}
LISTED_SECRET = "sk-listed-in-a-tool-0042"  # mcp_server.py's vault tool's listing holds it
QUESTION = "What do my notes say?"


def config(cli: Runner, extra: str = "", **values: object) -> None:
    settings = {**FAST_CONFIG, "tool_timeout_s": 10.0, "max_observation_chars": 50_000, **values}
    lines = "".join(f"{key} = {toml_value(value)}\n" for key, value in settings.items())
    cli.config_text(lines + extra)


def forms(secret: str) -> set[str]:
    """``secret`` as written, in JSON, as ``repr`` and percent-encoded: how a message holds it."""
    from urllib.parse import quote

    return {secret, json.dumps(secret)[1:-1], repr(secret)[1:-1], quote(secret, safe="")}


def leaked(secrets: Iterable[str], *texts: str) -> list[str]:
    """Each secret some text holds, in any of its forms."""
    return sorted({s for s in secrets for f in forms(s) for t in texts if f in t})


def written(result: CliResult, *folders: Path) -> list[str]:
    """Every byte a command wrote: stdout, stderr and each file of ``folders``."""
    files = [p for folder in folders for p in folder.rglob("*") if p.is_file()]
    return [result.stdout, result.stderr, *(p.read_text(encoding="utf-8") for p in files)]


def sent(llm: FakeOpenAI) -> str:
    return "\n".join(json.dumps(r.json, ensure_ascii=False) for r in llm.requests)


def test_a_server_gets_no_credential_of_the_environment_unless_pass_env_names_it(
    cli: Runner, wiki: FakeMediaWiki, servers: Servers
) -> None:
    """The server dumps its whole environment (``get_env``) and shows named variables
    (``env``): no planted credential is there, by name or by value; ``NOTES_HOME`` and
    ``TOKENIZERS_PARALLELISM`` are; with ``pass_env`` the server gets ``GITHUB_TOKEN``, and
    what it says of it comes back masked."""
    names = ",".join([*PLANTED, "OPENAI_API_KEY", *KEPT])
    script = [" All.\nAction 1: get_env[x]", f" Some.\nAction 2: env[{names}]", " Done.\nFinish[x]"]
    env = {**PLANTED, **KEPT, "OPENAI_API_KEY": KEY}
    outcomes = []
    for pass_env in ([], ["GITHUB_TOKEN"]):
        table = f"[mcp.notes]\ncommand = {toml_value(servers.argv)}\npass_env = {pass_env}\n"
        config(cli, table)
        with FakeOpenAI(scripted(*script)) as llm:
            argv = ["ask", QUESTION, "--json", "-v", "--no-otel"]
            result = cli(argv, **servers_env(llm, wiki), **env)
        assert result.code == 0, result.stderr
        steps = actions(json.loads(result.stdout))
        dumped, named = steps[0]["observation"], steps[1]["observation"]
        secrets = [*PLANTED.values(), KEY]
        assert leaked(secrets, *written(result, cli.home / "traces"), sent(llm)) == []
        assert '"NOTES_HOME": "/tmp/notes-kept"' in dumped and "TOKENIZERS" in dumped
        outcomes.append((dumped, named))
        for path in (cli.home / "traces").glob("*.json"):
            path.unlink()
    (alone, shown), (passed, shown_passed) = outcomes
    assert not [name for name in [*PLANTED, "OPENAI_API_KEY"] if name in alone]
    assert shown == (
        "; ".join(f"{name}=<unset>" for name in [*PLANTED, "OPENAI_API_KEY"])
        + "; NOTES_HOME=/tmp/notes-kept; TOKENIZERS_PARALLELISM=false"
    )
    assert '"GITHUB_TOKEN": "***"' in passed  # it got the token; what it says is masked
    assert shown_passed.startswith("GITHUB_TOKEN=***; ANTHROPIC_API_KEY=<unset>; ")


ARGS = {  # a server's own arguments that hold a credential, and the secret in each
    "--token": "tok-on-the-command-line-1",
    "--header": "Authorization: Bearer hdr-on-the-command-line-2",
    "--api-key=": "ak-on-the-command-line-3",
    "GITHUB_TOKEN=": "kv-on-the-command-line-4",
    "https://bot:": "upw-on-the-command-line-5@h.example/x?token=qt-on-the-command-line-6",
}
ARG_SECRETS = [
    "tok-on-the-command-line-1",
    "hdr-on-the-command-line-2",
    "ak-on-the-command-line-3",
    "kv-on-the-command-line-4",
    "upw-on-the-command-line-5",
    "qt-on-the-command-line-6",
]


def _argv(servers: Servers) -> list[str]:
    extra = [
        "--token",
        ARGS["--token"],
        "--header",
        ARGS["--header"],
        "--api-key=" + ARGS["--api-key="],
        "GITHUB_TOKEN=" + ARGS["GITHUB_TOKEN="],
        "https://bot:" + ARGS["https://bot:"],
    ]
    return [*servers.argv, *extra]


def test_credentials_on_a_command_line_are_masked_where_stored_and_redacted_when_echoed(
    cli: Runner, wiki: FakeMediaWiki, servers: Servers, tmp_path: Path
) -> None:
    """``--mcp`` with a token, a header, ``key=value`` forms and a URL with user information
    and a query token: the server echoes its command line into an observation; the trace's
    origin, ``--json``, the prompts, ``react-cli tools``, ``config`` and an eval's
    ``summary.json`` hold none of it."""
    config(cli)
    command = shlex.join(_argv(servers))
    with FakeOpenAI(scripted(" Who?\nAction 1: reached[x]", " Done.\nFinish[x]")) as llm:
        result = cli.ask(llm, wiki, "--mcp", command, "--json", "-v", question=QUESTION)
    assert result.code == 0, result.stderr
    echoed = json.loads(result.stdout)["steps"][0]["actions"][0]["observation"]
    assert "mcp_launch.py" in echoed and "--token *** --header Authorization: Bearer ***" in echoed
    masked = f"{servers.command} --token '***' --header 'Authorization: Bearer ***' "
    masked += "'--api-key=***' 'GITHUB_TOKEN=***' https://h.example/x"
    origins = {s["origin"].get("command") for s in cli.trace()["config"]["tools"]}
    assert masked in origins
    listed = cli(["tools", "--mcp", command])
    shown_config = cli(["config", "--json", "--mcp", command])
    assert listed.code == 0 and f"MCP server demo: {masked}; demo 1.2.3" in listed.stdout
    dataset = tmp_path / "one.jsonl"
    dataset.write_text(json.dumps({"question": QUESTION, "answer": "x"}) + "\n", encoding="utf-8")
    script = PerQuestion({QUESTION: [" Who?\nAction 1: reached[x]", " Done.\nFinish[x]"]})
    with FakeOpenAI(script) as evaluated:
        args = ["eval", str(dataset), "--out", str(tmp_path / "ev"), "--mcp", command]
        ran = cli(args, **servers_env(evaluated, wiki))
    assert ran.code == 0, ran.stderr
    summary = json.loads((tmp_path / "ev" / "summary.json").read_text(encoding="utf-8"))
    assert summary["config"]["mcp"] == [masked]
    everything = [
        *written(result),
        sent(llm),
        listed.stdout,
        shown_config.stdout,
        *written(ran, tmp_path / "ev"),
        sent(evaluated),
    ]
    assert leaked(ARG_SECRETS, *everything) == []


def test_a_config_entry_s_arguments_headers_and_url_are_never_shown(
    cli: Runner, wiki: FakeMediaWiki, servers: Servers
) -> None:
    """``[mcp]`` entries: a command list with a password, a header and a ``key=value`` token;
    a URL with a query token and credential headers (an ``Authorization`` whose token alone
    may be echoed). Both servers echo how they were reached; ``tools``, ``config`` and the
    run hold none of it."""
    url = f"{servers.url}?access_token=url-token-in-config-7"
    argv = [*servers.argv, "--password", "pw-in-config-8", "-H", "X-Auth: hd-in-config-9"]
    table = (
        f"[mcp.notes]\ncommand = {toml_value([*argv, 'API_TOKEN=kv-in-config-10'])}\n"
        f'[mcp.docs]\nurl = "{url}"\n'
        'headers = { X-Api-Key = "hk-in-config-11", Authorization = "Bearer bt-in-config-12" }\n'
    )
    config(cli, table)
    listed, as_json = cli(["tools"]), cli(["tools", "--json"])
    shown = cli(["config", "--json"])
    assert listed.code == 0 and as_json.code == 0, listed.stderr + as_json.stderr
    masked = f"{servers.command} --password '***' -H 'X-Auth: ***' 'API_TOKEN=***'"
    assert f"MCP server notes: {masked}; demo 1.2.3" in listed.stdout
    assert f"MCP server docs: {servers.url}; demo 1.2.3" in listed.stdout
    script = [
        " How?\nAction 1: reached[x]",
        " And?\nAction 2: docs.reached[x]",
        " Done.\nFinish[x]",
    ]
    with FakeOpenAI(scripted(*script)) as llm:
        result = cli.ask(llm, wiki, "--json", question=QUESTION)
    assert result.code == 0, result.stderr
    stdio, http = (action["observation"] for action in actions(json.loads(result.stdout))[:2])
    assert "--password *** -H X-Auth: *** API_TOKEN=***" in stdio
    assert '"x-api-key": "***"' in http and '"authorization": "***"' in http
    assert "/mcp?***" in http  # the server saw the query; what it says of it is masked
    secrets = [
        "url-token-in-config-7",
        "pw-in-config-8",
        "hd-in-config-9",
        "kv-in-config-10",
        "hk-in-config-11",
        "bt-in-config-12",
    ]
    everything = [listed.stdout, as_json.stdout, shown.stdout, *written(result), sent(llm)]
    assert leaked(secrets, *everything, *written(result, cli.home / "traces")) == []


def test_a_server_that_fails_to_start_is_one_error_line_without_its_secrets(
    cli: Runner, wiki: FakeMediaWiki, llm: FakeOpenAI
) -> None:
    """A server that prints its ``env`` token, a ``pass_env`` key, the token on its command
    line and its whole environment as it fails: its last words, quoted in the error line,
    are redacted."""
    code = (
        "import os, sys; e = os.environ; print('boom', file=sys.stderr); "
        "print(e['NOTES_TOKEN'], e['GITHUB_TOKEN'], e['OPENAI_API_KEY'], sys.argv[-1], "
        "file=sys.stderr); sys.exit(3)"
    )
    command = [sys.executable, "-S", "-c", code, "--token", "argv-token-at-start-11"]
    table = (
        f"[mcp.notes]\ncommand = {toml_value(command)}\n"
        'env = { NOTES_TOKEN = "env-token-at-start-12" }\n'
        'pass_env = ["GITHUB_TOKEN", "OPENAI_API_KEY"]\n'
    )
    config(cli, table)
    llm.requests.clear()
    env = {**servers_env(llm, wiki), "GITHUB_TOKEN": PLANTED["GITHUB_TOKEN"], "OPENAI_API_KEY": KEY}
    result = cli(["ask", QUESTION], **env)
    assert result.code == 2 and llm.requests == []
    line = one_error_line(result.stderr)
    assert "exited (status 3) before answering initialize; it said: *** *** *** ***" in line
    secrets = ["argv-token-at-start-11", "env-token-at-start-12", PLANTED["GITHUB_TOKEN"], KEY]
    assert leaked(secrets, result.stderr, result.stdout) == []


TOOLS_FILE = '''
import os
from react_cli import tool


@tool
def getenv(variable: str) -> str:
    """The value of an environment variable."""
    return os.environ.get(variable, "<unset>")


@tool
def fail(variable: str) -> str:
    """Raise an exception that quotes an environment variable."""
    raise RuntimeError(f"cannot use {os.environ[variable]}")
'''


@pytest.mark.parametrize("protocol", ["text", "tools"])
def test_python_tools_results_and_exceptions_pass_the_redactor(
    cli: Runner, wiki: FakeMediaWiki, tmp_path: Path, protocol: str
) -> None:
    """An ``env`` tool of the user's own reads the API key, a token and a planted URL's
    password; another raises with one: the observations, the trace, ``--json``, ``-v`` and the
    model's next requests hold none."""
    tools = tmp_path / "tools.py"
    tools.write_text(TOOLS_FILE, encoding="utf-8")
    config(cli)
    calls = [("getenv", "OPENAI_API_KEY"), ("getenv", "BACKUP_URL"), ("fail", "GITHUB_TOKEN")]
    if protocol == "text":
        script = [f" Look.\nAction {i}: {n}[{a}]" for i, (n, a) in enumerate(calls, 1)]
        replies = [Reply(text=text) for text in [*script, " Done.\nAction 4: Finish[x]"]]
        args = []
    else:
        replies = [Reply(text="", tool_calls=[tool_call(n, variable=a)]) for n, a in calls]
        replies.append(Reply(text="", tool_calls=[tool_call("finish", answer="x")]))
        args = ["--protocol", "tools"]
    env = {"OPENAI_API_KEY": KEY, **PLANTED}
    with FakeOpenAI(replies) as llm:
        argv = ["ask", QUESTION, "--tools-from", str(tools), "--json", "-v", "--no-otel", *args]
        result = cli(argv, **servers_env(llm, wiki), **env)
    assert result.code == 0, result.stderr
    steps = actions(json.loads(result.stdout))
    assert [step["observation"] for step in steps[:3]] == [
        "***",
        "***",  # the whole URL is the secret (its password too)
        "Fail failed: RuntimeError: cannot use ***",
    ]
    secrets = [KEY, PLANTED["GITHUB_TOKEN"], "url-pass-planted-88"]
    assert leaked(secrets, *written(result, cli.home / "traces"), sent(llm)) == []


def test_a_server_s_listing_schema_and_resource_pass_the_redactor(
    cli: Runner, wiki: FakeMediaWiki, servers: Servers
) -> None:
    """The vault tool's description and its argument's schema hold the run's key, and its
    result an embedded resource quoting it: the declarations the model is sent, the trace,
    ``--json`` and ``react-cli tools`` hold none of it."""
    config(cli)
    replies = [
        Reply(text="", tool_calls=[tool_call("vault", key="k")]),
        Reply(text="", tool_calls=[tool_call("finish", answer="x")]),
    ]
    with FakeOpenAI(replies) as llm:
        args = ("--protocol", "tools", "--mcp", servers.command, "--json", "--api-key")
        result = cli.ask(llm, wiki, *args, LISTED_SECRET, question=QUESTION)
    assert result.code == 0, result.stderr
    declared = {t["function"]["name"]: t["function"] for t in llm.requests[0].json["tools"]}
    assert declared["vault"]["description"].startswith("Opens the vault with the key ***")
    schema = declared["vault"]["parameters"]["properties"]["key"]
    assert schema["description"] == "not ***"
    steps = actions(json.loads(result.stdout))
    assert steps[0]["observation"] == "the vault's key: ***"
    listed = cli(["tools", "--json", "--mcp", servers.command], OPENAI_API_KEY=LISTED_SECRET)
    assert listed.code == 0 and '"vault"' in listed.stdout
    found = leaked([LISTED_SECRET], *written(result, cli.home / "traces"), sent(llm), listed.stdout)
    assert found == []


def test_an_older_trace_s_unmasked_command_line_is_masked_when_shown(
    cli: Runner, wiki: FakeMediaWiki, servers: Servers, tmp_path: Path
) -> None:
    """A trace an older react-cli wrote recorded ``--header 'Authorization: Bearer X'``
    whole: the error line of ``replay --live-tools`` naming the server shows it masked."""
    config(cli)
    path = tmp_path / "run.json"
    with FakeOpenAI(scripted(" Echo.\nAction 1: echo[hi]", " Done.\nFinish[x]")) as llm:
        result = cli.ask(llm, wiki, "--mcp", servers.command, "--trace", str(path))
        assert result.code == 0, result.stderr
        trace = json.loads(path.read_text(encoding="utf-8"))
        old = f"{servers.command} --header 'Authorization: Bearer old-trace-token-13'"
        for spec in trace["config"]["tools"]:
            if spec.get("origin", {}).get("kind") == "mcp":
                spec["origin"]["command"] = old
        path.write_text(json.dumps(trace), encoding="utf-8")
        live = cli(["replay", "--rerun", "--live-tools", str(path)], **servers_env(llm, wiki))
    assert live.code == 2
    line = one_error_line(live.stderr)
    assert "--header 'Authorization: Bearer ***'" in line and "old-trace-token-13" not in line


def test_the_one_policy_of_what_a_server_is_not_given() -> None:
    """The rule by name and by value, unit by unit: what docs/tools.md lists as withheld."""
    environ = {
        **PLANTED,
        **KEPT,
        "GIT_AUTHOR_NAME": "Ada",
        "KEYBOARD_LAYOUT": "dvorak",
        "OPENAI_API_KEY": KEY,
        "OTEL_EXPORTER_OTLP_HEADERS": "x-team=team-header-value",
        "MY_COPY": KEY,
        "SSH_AUTH_SOCK": "/run/user/1/ssh",
        "DISABLE_AUTH": "true",
        "SERVICE_URL": "https://service.example/api?page=2",
    }
    settings = Settings(api_key=KEY)
    secrets = known_secrets(settings, environ)
    server = server_environment(McpServer("notes", command=("x",)), environ, secrets)
    kept = ["NOTES_HOME", "TOKENIZERS_PARALLELISM", "GIT_AUTHOR_NAME", "KEYBOARD_LAYOUT"]
    assert sorted(server) == sorted([*kept, "SERVICE_URL"])
    assert "team-header-value" in secrets and "url-pass-planted-88" in secrets
    assert "true" not in secrets and "/run/user/1/ssh" not in secrets  # no value to mask


def test_what_a_command_line_shows_and_holds() -> None:
    shown, secrets = masked_command(
        [
            "srv",
            "--auth-token",
            "t1-secret",
            "-H",
            "X-Custom: c2-secret",
            "--env=API_KEY=k3-secret",
            "--url=https://u:p4-secret@h/x",
            "Cookie: c5-secret",
            "--author",
            "Ada",
            "--no-auth",
            "--port",
            "8080",
        ]
    )
    assert shown == [
        "srv",
        "--auth-token",
        "***",
        "-H",
        "X-Custom: ***",
        "--env=API_KEY=***",
        "--url=https://h/x",
        "Cookie: ***",
        "--author",
        "Ada",
        "--no-auth",
        "--port",
        "8080",
    ]
    for secret in ("t1-secret", "c2-secret", "k3-secret", "p4-secret", "c5-secret"):
        assert secret in secrets
    assert "Ada" not in secrets and "8080" not in secrets
