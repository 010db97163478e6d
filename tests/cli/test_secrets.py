"""A planted API key and URL password never leave in any form, on any path a run can take.

Every byte react-cli writes is searched: stdout and stderr (``--json``, ``-v`` and ``--debug``
all on), the trace, an eval folder, and every request the fake model received (the prompt
carries the observations, so a Wikipedia error quoting its URL would reach the model). The
servers fail, or answer well while echoing the request they were sent (an endpoint its
``Authorization`` header, a wiki page its URL), streamed in pieces that split the secrets;
credentials react-cli did not choose (a ``~/.netrc`` entry) are echoed too. The
secrets are chosen to look different in every escape (quotes, a backslash, ``%``, ``/``, ``&``,
``<``, non-ASCII in the password), and the search looks for each form computed here, not by the
redactor under test: as written, ``repr``, JSON, percent- and form-encoding, HTML, the UTF-8
bytes' ``repr``, and the base64 of a Basic ``Authorization`` header.
"""

from __future__ import annotations

import base64
import html
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest
from conftest import CliResult
from fake_mediawiki import ECHO, FakeMediaWiki, Fault
from fake_openai import FakeOpenAI, Reply, scripted
from hostile_server import Answer, HostileServer, Received, echo_line, head
from inproc import HANG_S, Runner, one_error_line

KEY = "sk-\"Te'st\\%2F/&<k>+ey-0123456789"
USER, PASSWORD = "bot", "p@ss/w0rd\"é'\\x"
WIKI_TOKEN, MODEL_TOKEN = "WIKI-query-token-55555", "MODEL-query-token-77777"
NETRC_USER, NETRC_PASSWORD = "netrc-bot", "пароль-from-netrc-4242"  # outside Latin-1 too
USERINFO = f"{USER}:{quote(PASSWORD, safe='')}"
SEARCH = " I should search it.\nAction 1: Search[Arthur's Magazine]"
FINISH = " Then I answer.\nAction 2: Finish[1844]"


def forms(secret: str) -> set[str]:
    """Every spelling of ``secret`` a message, log or file might hold."""
    spelled = {
        secret,
        repr(secret)[1:-1],
        ascii(secret)[1:-1],
        json.dumps(secret)[1:-1],
        json.dumps(secret, ensure_ascii=False)[1:-1],
        quote(secret, safe=""),
        quote(secret),
        quote_plus(secret),
        html.escape(secret),
        repr(secret.encode())[2:-1],
    }
    return {form for form in spelled if len(form) >= 6}


FORBIDDEN = (
    forms(KEY)
    | forms(PASSWORD)
    | forms(f"{USER}:{PASSWORD}")
    | forms(WIKI_TOKEN)
    | forms(MODEL_TOKEN)
    | forms(NETRC_PASSWORD)
    | {base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()}
    | {base64.b64encode(f"{NETRC_USER}:{NETRC_PASSWORD}".encode()).decode()}
)


def wiki_with_secrets(url: str) -> str:
    return url.replace("http://", f"http://{USERINFO}@") + f"?token={WIKI_TOKEN}"


def model_with_secrets(url: str) -> str:
    """(Not credentials too: requests would send them instead of the key, as Basic auth.)"""
    return f"{url}?token={MODEL_TOKEN}"


def echo(*secrets: str) -> str:
    """What a hostile server answers: the secrets it was sent, in several escapes."""
    spelled = [form for s in secrets for form in (s, repr(s), json.dumps(s), quote(s))]
    return "echo: " + " | ".join(spelled)


MODEL_ECHO = echo(KEY, MODEL_TOKEN, f"http://127.0.0.1/v1/chat/completions?token={MODEL_TOKEN}")
WIKI_ECHO = echo(PASSWORD, f"{USER}:{PASSWORD}", USERINFO, WIKI_TOKEN)


@dataclass
class Servers:
    model: FakeOpenAI
    wiki_url: str
    wiki_requests: Callable[[], list[str]]
    args: tuple[str, ...] = ()


Scenario = Callable[[ExitStack], Servers]


def _fake_wiki(stack: ExitStack, *faults: Fault) -> tuple[str, Callable[[], list[str]]]:
    wiki = stack.enter_context(FakeMediaWiki.from_fixtures())
    wiki.faults.extend(faults)
    return wiki.url, lambda: [json.dumps(r) for r in wiki.requests]


def _hostile_wiki(stack: ExitStack, answer: Answer) -> tuple[str, Callable[[], list[str]]]:
    wiki = stack.enter_context(HostileServer(answer))
    return wiki.url, lambda: [r.head.decode("latin-1") for r in wiki.requests]


def _model(stack: ExitStack, *replies: Reply) -> FakeOpenAI:
    return stack.enter_context(FakeOpenAI(list(replies)))


def model_fails(reply: Callable[[], Reply], *args: str) -> Scenario:
    def build(stack: ExitStack) -> Servers:
        return Servers(_model(stack, reply()), *_fake_wiki(stack), args=args)

    return build


def echoing_wiki(stack: ExitStack) -> tuple[str, Callable[[], list[str]]]:
    """The recorded wiki, its pages ending with the request they answer (URL and headers)."""
    wiki = stack.enter_context(FakeMediaWiki.from_fixtures())
    wiki.pages = {title: f"{text} {ECHO}" for title, text in wiki.pages.items()}
    return wiki.url, lambda: [json.dumps(r) for r in wiki.requests]


def echoing_refusal(stack: ExitStack) -> tuple[str, Callable[[], list[str]]]:
    """A wiki answering 401 with the request it refused as its text."""

    def respond(request: Received) -> Answer:
        method, path = request.head.decode("latin-1").split(" ")[:2]
        echo = echo_line(method, path, request.headers.items())
        return Answer(head("401 Unauthorized", Content_Type="text/plain") + echo.encode())

    wiki = stack.enter_context(HostileServer(respond=respond))
    return wiki.url, lambda: [r.head.decode("latin-1") for r in wiki.requests]


def wiki_fails(wiki: Callable[[ExitStack], tuple[str, Callable[[], list[str]]]]) -> Scenario:
    def build(stack: ExitStack) -> Servers:
        return Servers(_model(stack, *scripted(SEARCH, FINISH)), *wiki(stack))

    return build


def refused_model(stack: ExitStack) -> Servers:
    model = _model(stack, Reply("unused"))
    model.stop()
    return Servers(model, *_fake_wiki(stack))


def refused_wiki(stack: ExitStack) -> Servers:
    with HostileServer(Answer(b"")) as closed:
        pass
    return Servers(_model(stack, *scripted(SEARCH, FINISH)), closed.url, list)


MAXLAG = {"error": {"code": "maxlag", "info": WIKI_ECHO}}
ECHO_ANSWER = f" You sent {ECHO}.\nAction 1: Finish[{ECHO}]"
SCENARIOS: dict[str, Scenario] = {
    "model-401-json": model_fails(
        lambda: Reply(status=401, body=json.dumps({"error": {"message": MODEL_ECHO}}))
    ),
    "model-500-text": model_fails(lambda: Reply(status=500, body=MODEL_ECHO)),
    "model-200-malformed": model_fails(lambda: Reply(body=MODEL_ECHO)),
    "model-refused": refused_model,
    "model-timeout": model_fails(lambda: Reply("x", delay_s=5)),
    "wiki-refused": refused_wiki,
    "wiki-403-text": wiki_fails(
        lambda s: _hostile_wiki(
            s, Answer(head("403 Forbidden", Content_Type="text/plain") + WIKI_ECHO.encode())
        )
    ),
    "wiki-maxlag-echo": wiki_fails(
        lambda s: _hostile_wiki(
            s,
            Answer(
                head(Content_Type="application/json", Retry_After="0") + json.dumps(MAXLAG).encode()
            ),
        )
    ),
    "wiki-timeout": wiki_fails(lambda s: _fake_wiki(s, *[Fault(delay_s=5)] * 4)),
    "model-200-echo": model_fails(lambda: Reply(ECHO_ANSWER)),
    "model-200-echo-unstreamed": model_fails(lambda: Reply(ECHO_ANSWER), "--no-stream"),
    "wiki-200-echo": wiki_fails(echoing_wiki),
    "wiki-401-echo": wiki_fails(echoing_refusal),
}
# A failed model call ends the run (2: the endpoint refused the key); a failed Search is an
# observation, and the model answers anyway.
EXIT_CODES = {
    name: 2 if name == "model-401-json" else 1 if name.startswith("model") else 0
    for name in SCENARIOS
} | {"model-200-echo": 0, "model-200-echo-unstreamed": 0}


@pytest.fixture
def cli(cli: Runner) -> Runner:
    cli.config(retries=1, timeout_s=0.2, wiki_timeout_s=0.2)  # one retry: its log lines too
    return cli


@contextmanager
def servers(scenario: Scenario) -> Iterator[Servers]:
    with ExitStack() as stack:
        yield scenario(stack)


def everything_written(result: CliResult, *folders: Path) -> str:
    files = [p for folder in folders if folder.exists() for p in sorted(folder.rglob("*"))]
    contents = [p.read_bytes().decode("utf-8", "replace") for p in files if p.is_file()]
    return "\n".join([result.stdout, result.stderr, *contents])


def assert_no_secret(text: str, where: str) -> None:
    leaked = sorted(form for form in FORBIDDEN if form in text)
    assert not leaked, f"{where} holds {leaked}"


def sent_to_model(model: FakeOpenAI) -> str:
    """The request bodies (the URL and the Authorization header carry secrets by design)."""
    return "\n".join(
        json.dumps(r.json) + json.dumps(r.json, ensure_ascii=False) for r in model.requests
    )


@pytest.mark.parametrize("name", SCENARIOS)
def test_ask_never_shows_a_secret(cli: Runner, name: str) -> None:
    with servers(SCENARIOS[name]) as up:
        result = cli(
            ["ask", "When?", "--json", "-v", "--debug", "--api-key", KEY, *up.args],
            OPENAI_BASE_URL=model_with_secrets(up.model.url),
            REACT_CLI_MODEL="m",
            REACT_CLI_WIKI=wiki_with_secrets(up.wiki_url),
        )
        wiki_saw = "\n".join(up.wiki_requests())
    assert "Traceback" not in result.stderr
    assert result.code == EXIT_CODES[name], result.stderr
    assert ("Error: " in result.stderr) == (result.code != 0)
    assert_no_secret(everything_written(result, cli.home / "traces"), "the output or the trace")
    assert_no_secret(sent_to_model(up.model), "what the model was sent")
    for form in forms(KEY):
        assert form not in wiki_saw  # the key is the model endpoint's, never Wikipedia's
    if up.model.requests:  # the secrets did go where they belong
        assert up.model.requests[0].headers["authorization"] == f"Bearer {KEY}"
        assert up.model.requests[0].path.endswith(f"?token={MODEL_TOKEN}")


NETRC_BASIC = "Basic " + base64.b64encode(f"{NETRC_USER}:{NETRC_PASSWORD}".encode()).decode()
NETRC_SCENARIOS: dict[str, Scenario] = {
    "model-401-echo": model_fails(lambda: Reply(status=401, body=ECHO)),
    "model-200-echo": model_fails(lambda: Reply(ECHO_ANSWER)),
    "wiki-401-echo": wiki_fails(echoing_refusal),
    "wiki-200-echo": wiki_fails(echoing_wiki),
}


@pytest.mark.parametrize("name", NETRC_SCENARIOS)
def test_credentials_from_netrc_never_show(cli: Runner, tmp_path: Path, name: str) -> None:
    """requests adds a ``~/.netrc`` entry's Basic credentials by itself: react-cli sends them
    in UTF-8 (requests would fail on a password outside Latin-1) and masks them when echoed.
    The model endpoint gets them when it has no API key (a key wins), the wiki always."""
    netrc = tmp_path / "netrc"
    netrc.write_text(f"machine 127.0.0.1 login {NETRC_USER} password {NETRC_PASSWORD}\n")
    keyless = name.startswith("model")
    with servers(NETRC_SCENARIOS[name]) as up:
        result = cli(
            ["ask", "When?", "--json", "-v", "--debug", *([] if keyless else ["--api-key", KEY])],
            NETRC=str(netrc),
            OPENAI_BASE_URL=model_with_secrets(up.model.url),
            REACT_CLI_MODEL="m",
            REACT_CLI_WIKI=f"{up.wiki_url}?token={WIKI_TOKEN}",
        )
        sent = up.model.requests[0].headers["authorization"] if keyless else up.wiki_requests()
    assert "Traceback" not in result.stderr
    assert result.code == (2 if name == "model-401-echo" else 0), result.stderr
    assert NETRC_BASIC in (sent if keyless else "\n".join(sent))  # sent, and so echoed
    assert_no_secret(everything_written(result, cli.home / "traces"), "the output or the trace")
    assert_no_secret(sent_to_model(up.model), "what the model was sent")


def questions_left_running() -> None:
    """Wait for the questions a stopped eval left in flight (``eval.stop``: the command does
    not wait for them; a process's exit ends them) to end: their next model call is refused."""
    until = time.monotonic() + HANG_S
    while any(t.name == "eval-question" for t in threading.enumerate()):
        assert time.monotonic() < until, "a question of the eval never ended"
        time.sleep(0.01)


def test_eval_never_shows_a_secret(cli: Runner, tmp_path: Path) -> None:
    dataset = Path(__file__).resolve().parents[1] / "fixtures" / "eval" / "hotpotqa_dev_first6.json"
    out = tmp_path / "run"
    scenario = SCENARIOS["model-401-json"]
    with servers(scenario) as up:
        result = cli(
            ["eval", str(dataset), "--out", str(out), "--limit", "2", "--debug"],
            OPENAI_BASE_URL=model_with_secrets(up.model.url),
            OPENAI_API_KEY=KEY,
            REACT_CLI_MODEL="m",
            REACT_CLI_WIKI=wiki_with_secrets(up.wiki_url),
        )
        questions_left_running()  # before the servers close under them (their retries'
        # notices would go to the stderr of a later test of this process)
    assert "Traceback" not in result.stderr
    assert (out / "summary.json").exists() and (out / "results.jsonl").exists()
    assert_no_secret(everything_written(result, out, cli.home), "the eval folder or output")
    assert_no_secret(sent_to_model(up.model), "what the model was sent")


@pytest.mark.parametrize(
    "key", ["sk-good\r", "sk-\u200bgood", "“sk-good”", "sk good", "sk-good\x07", "sk-gööd"]
)
def test_a_bad_key_is_a_usage_error_that_never_echoes_it(cli: Runner, key: str) -> None:
    """Refused before any request: the endpoint (a local one, no network) hears nothing."""
    with FakeOpenAI([Reply(" Done.\nAction 1: Finish[x]")]) as model:
        result = cli(
            ["ask", "When?"], OPENAI_API_KEY=key, OPENAI_BASE_URL=model.url, REACT_CLI_MODEL="m"
        )
    assert result.code == 2 and result.stdout == "" and model.requests == []
    line = one_error_line(result.stderr)
    assert line.startswith("Error: the API key (") and "character" in line
    assert "good" not in result.stderr and "gööd" not in result.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["--api", f"http://{USERINFO}@127.0.0.1:9/v1?t={MODEL_TOKEN}"],
        ["--base-url", f"ftp://{USERINFO}@127.0.0.1:9/v1?t={MODEL_TOKEN}"],
        ["--base-url", f"http://{USERINFO}@[::1/v1?t={MODEL_TOKEN}"],
        ["--wiki", f"gopher://{USERINFO}@127.0.0.1:9/?t={WIKI_TOKEN}"],
        ["--wiki", f"http://{USERINFO}@[::1?t={WIKI_TOKEN}"],
        ["--variant", f"http://{USERINFO}@h/?t={WIKI_TOKEN}"],
    ],
)
def test_a_url_typed_into_the_wrong_setting_is_refused_without_its_secrets(
    cli: Runner, args: list[str]
) -> None:
    """A usage error quotes what it refuses, never the password or query in it."""
    result = cli(["ask", "-m", "m", "--api-key", "sk-x", *args, "When?"])
    assert result.code == 2 and result.stdout == ""
    assert result.stderr.startswith("Error: ") and result.stderr.count("\n") == 1
    assert_no_secret(result.stderr, "the usage error")


@pytest.mark.parametrize("stream", [True, False])
def test_native_tool_calls_that_echo_the_key_never_show_it(
    cli: Runner, wiki: FakeMediaWiki, stream: bool
) -> None:
    """A tools-protocol reply whose call names and arguments echo the key (a server echoing
    its request into the call): masked in the trace, ``--json`` and the next request."""
    planted = json.dumps({"entity": f"Arthur's Magazine {KEY}"})
    calls = [
        Reply(text="", tool_calls=[{"name": "search", "arguments": planted, "id": f"c-{KEY}"}]),
        Reply(text="", tool_calls=[{"name": "finish", "arguments": {"answer": "1844"}}]),
    ]
    with FakeOpenAI(calls) as model:
        result = cli(
            ["ask", "When?", "--json", "--protocol", "tools", "--api-key", KEY]
            + ([] if stream else ["--no-stream"]),
            OPENAI_BASE_URL=model.url,
            REACT_CLI_MODEL="m",
            REACT_CLI_WIKI=wiki.url,
            REACT_CLI_PROMPT="hotpotqa-tools",
        )
    assert result.code == 0, result.stderr
    assert_no_secret(everything_written(result, cli.home / "traces"), "the output or the trace")
    assert_no_secret(sent_to_model(model), "what the model was sent")
