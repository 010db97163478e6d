"""Run ``react-cli`` in-process (the real ``cli.main``, real loopback servers): the default runner.

Starting ``python -m react_cli`` costs about half a second a call; this runs the same entry point
in the test process with a clean environment and captured output, in milliseconds. Only what
needs a process of its own (a signal, a full disk) runs one, in ``cli/test_cli_process.py``.
"""

from __future__ import annotations

import functools
import io
import json
import os
import re
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import pytest
import typer
from fake_openai import FakeOpenAI, scripted

from react_cli.cli import main

# Settings that keep retries real but quick: 2 retries, 10 ms backoff, Retry-After capped at 0.2 s;
# a request's timeout long enough that a loaded machine never turns a slow answer into a retry
# (which changes request counts): a test of timeouts sets its own.
FAST_CONFIG: dict[str, object] = {
    "retries": 2,
    "retry_backoff_s": 0.01,
    "max_retry_after_s": 0.2,
    "timeout_s": 5.0,
    "wiki_timeout_s": 5.0,
}
# What a user's shell may set that would change what react-cli does or prints.
FOREIGN_ENV_PREFIXES = ("OPENAI_", "REACT_CLI_")
FOREIGN_ENV = ("NO_COLOR", "FORCE_COLOR")

HANG_S = 20.0
"""A hang detector: what a test waits for takes well under a second, so only a hang (or a wait
the test rules out, an hour's Retry-After) reaches this bound, however loaded the machine."""

QUESTION = "Which magazine was started first, Arthur's Magazine or First for Women?"
GOOD_RUN = (
    " I need to search Arthur's Magazine and First for Women.\nAction 1: Search[Arthur's Magazine]",
    " Arthur's Magazine was started in 1844. I need to search First for Women next.\n"
    "Action 2: Search[First for Women]",
    " First for Women was started in 1989. 1844 < 1989.\nAction 3: Finish[Arthur's Magazine]",
)
"""The recorded fake Wikipedia's question and a model's three steps that answer it."""


@dataclass
class CliResult:
    """What a run left: its exit code, stdout and stderr."""

    code: int
    stdout: str
    stderr: str


class Server(Protocol):
    """A fake model or wiki server: all the runner needs is where it listens."""

    url: str


build_command = typer.main.get_command
"""typer's own builder: a new command, for a test that looks into one (a command caches what the
first context it meets shows, its help option among them)."""
# The one environment variable typer reads while it builds a command (its completion options).
_TYPER_BUILD_ENV = "_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION"


@functools.cache
def _built_once(app: typer.Typer, shell_detection_off: bool) -> object:
    return build_command(app)


def _command_of(app: typer.Typer) -> object:
    return _built_once(app, bool(os.environ.get(_TYPER_BUILD_ENV)))


def build_commands_once() -> None:
    """typer rebuilds its click command from the functions' signatures on every call (~30 ms):
    a real process builds it once, and so does a test process, once per build setting, for
    every in-process run (the ``cli`` runner, the bench scripts, the ``share_evals`` folders);
    a test that walks the commands builds its own (``build_command``). Called once per
    process, from ``conftest.pytest_configure``."""
    typer.main.get_command = _command_of


class Runner:
    """Invokes ``main`` with a clean environment and captured stdout/stderr."""

    def __init__(
        self, home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        self.home = home
        self.monkeypatch = monkeypatch
        self.capsys = capsys
        self.elapsed_s = 0.0
        self.config()

    def __call__(self, args: list[str], stdin: bytes | str = b"", /, **env: str) -> CliResult:
        for key in list(os.environ):
            if key.startswith(FOREIGN_ENV_PREFIXES) or key in FOREIGN_ENV:
                self.monkeypatch.delenv(key)
        self.monkeypatch.setenv("REACT_CLI_HOME", str(self.home))
        self.monkeypatch.setenv("COLUMNS", "200")
        for key, value in env.items():
            self.monkeypatch.setenv(key, value)
        data = stdin.encode() if isinstance(stdin, str) else stdin
        self.monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), "utf-8"))
        self.capsys.readouterr()
        started = time.monotonic()
        try:
            main(args)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 0
        else:
            code = 0
        self.elapsed_s = time.monotonic() - started
        out, err = self.capsys.readouterr()
        return CliResult(code, out, err)

    def ask(self, llm: Server, wiki: Server, *args: str, question: str = QUESTION) -> CliResult:
        """``react-cli ask QUESTION ARGS`` against the fake model ``llm`` and wiki ``wiki``."""
        return self(["ask", question, *args], **servers_env(llm, wiki))

    def record(self, wiki: Server, *texts: str, args: tuple[str, ...] = (), code: int = 0) -> Path:
        """Run ``ask`` once against a fake model scripted with ``texts``; assert it exits with
        ``code`` and return the trace it wrote (``run-N.json`` in the traces folder)."""
        target = self.home / "traces" / f"run-{len(list(self.home.glob('traces/*.json')))}.json"
        with FakeOpenAI(scripted(*texts)) as llm:
            result = self.ask(llm, wiki, "--trace", str(target), *args)
        assert result.code == code, result.stderr
        return target

    def config(self, **values: object) -> None:
        """Write the config file: ``FAST_CONFIG`` updated with ``values``."""
        settings = {**FAST_CONFIG, **values}
        self.config_text("".join(f"{key} = {toml_value(v)}\n" for key, v in settings.items()))

    def config_text(self, text: str) -> None:
        """Write the config file as given (``""``: the defaults a new user has)."""
        (self.home / "config.toml").write_text(text, encoding="utf-8")

    def trace(self) -> dict[str, Any]:
        """The one trace written so far (and remove it, so the next run's is the only one)."""
        path = only_trace_path(self.home)
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        path.unlink()
        return data


def toml_value(value: object) -> str:
    """``value`` in TOML: a string with every character but printable ASCII escaped (so it may
    hold any character TOML allows: control characters, DEL, beyond the BMP), else as JSON."""
    if not isinstance(value, str):
        return json.dumps(value)
    escaped = (c if " " <= c <= "~" and c not in '"\\' else f"\\U{ord(c):08X}" for c in value)
    return '"' + "".join(escaped) + '"'


def servers_env(llm: Server, wiki: Server, model: str = "test-model") -> dict[str, str]:
    """The environment that points react-cli at a fake model and a fake wiki."""
    return {"OPENAI_BASE_URL": llm.url, "REACT_CLI_MODEL": model, "REACT_CLI_WIKI": wiki.url}


def edit_json(path: Path, change: Callable[[Any], object]) -> None:
    """Read the JSON file at ``path``, let ``change`` alter the document, write it back."""
    document = json.loads(path.read_text(encoding="utf-8"))
    change(document)
    path.write_text(json.dumps(document), encoding="utf-8")


def actions(document: dict[str, Any]) -> list[dict[str, Any]]:
    """Every action of a trace document's steps (or ``ask --json``'s), in the order the run
    took them: a text step has one, a step of native calls one a call."""
    return [action for step in document["steps"] for action in step["actions"]]


def only_trace_path(home: Path) -> Path:
    """The one trace in ``home``'s traces folder (a test failure if there is none or more)."""
    traces = sorted((home / "traces").glob("*.json"))
    assert len(traces) == 1, traces
    return traces[0]


def only_trace(home: Path) -> dict[str, Any]:
    """The one trace in ``home``'s traces folder, read."""
    data: dict[str, Any] = json.loads(only_trace_path(home).read_text(encoding="utf-8"))
    return data


SOURCE_LINE = re.compile(r"\[\d+\] .+ — .+")


def sourceless(stderr: str) -> str:
    """``stderr`` without the ``Sources:`` block ``ask`` prints after an answer (lines that
    come after it, such as a warning printed as the command ends, are kept)."""
    lines = stderr.splitlines(keepends=True)
    if "Sources:\n" not in lines:
        return stderr
    start = len(lines) - 1 - lines[::-1].index("Sources:\n")
    end = start + 1
    while end < len(lines) and SOURCE_LINE.fullmatch(lines[end].rstrip("\n")):
        end += 1
    assert end > start + 1, stderr
    return "".join(lines[:start] + lines[end:])


RETRY_NOTICE = re.compile(r"retrying in \d+\.\d s: .+ \(\d+/\d+\)")


def retry_notices(stderr: str) -> list[str]:
    """The ``retrying in 2.0 s: HTTP 429 (1/4)`` lines of stderr."""
    return [line for line in stderr.splitlines() if RETRY_NOTICE.fullmatch(line)]


def one_error_line(stderr: str) -> str:
    """Assert stderr is exactly one ``Error: ...`` line (besides retry notices) and no
    traceback; return it."""
    lines = [line for line in stderr.splitlines() if not RETRY_NOTICE.fullmatch(line)]
    assert len(lines) == 1 and lines[0].startswith("Error: "), stderr
    assert "Traceback" not in stderr
    return lines[0]


ODD_WIDTHS = ("0", "1", "39", "1000000", "wide")
"""``COLUMNS`` values no layout is made for; the widest layout (``MAX_WIDTH``) is the reference."""


def glyphs(text: str) -> Counter[str]:
    """The characters ``text`` shows, however it is laid out: white space and the lines of
    boxes dropped, so text wrapped or folded at any width has the same glyphs, and text cut
    (or never printed) has fewer."""
    return Counter(
        char for char in text if not char.isspace() and not 0x2500 <= ord(char) <= 0x257F
    )
