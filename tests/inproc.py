"""Run ``react-cli`` in-process (the real ``cli.main``, real loopback servers) for fast fault tests.

The subprocess runner in ``conftest`` proves start-up and exit codes as a user sees them; this one
runs the same entry point in the test process, so a suite of dozens of CLI-level faults stays fast.
"""

from __future__ import annotations

import io
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import CliResult

from react_cli.cli import main

# Settings that keep retries real but quick: 2 retries, 10 ms backoff, Retry-After capped at 0.2 s.
FAST_CONFIG: dict[str, object] = {
    "retries": 2,
    "retry_backoff_s": 0.01,
    "max_retry_after_s": 0.2,
    "timeout_s": 0.5,
    "wiki_timeout_s": 0.5,
}


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

    def __call__(self, args: list[str], stdin: bytes = b"", /, **env: str) -> CliResult:
        for key in list(os.environ):
            if key.startswith(("OPENAI_", "REACT_CLI_")):
                self.monkeypatch.delenv(key)
        self.monkeypatch.setenv("REACT_CLI_HOME", str(self.home))
        self.monkeypatch.setenv("COLUMNS", "200")
        for key, value in env.items():
            self.monkeypatch.setenv(key, value)
        self.monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin), "utf-8"))
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

    def config(self, **values: object) -> None:
        """Write the config file: ``FAST_CONFIG`` updated with ``values``."""
        lines = [f"{key} = {json.dumps(value)}" for key, value in {**FAST_CONFIG, **values}.items()]
        (self.home / "config.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")

    def trace(self) -> dict[str, Any]:
        """The one trace written so far (and remove it, so the next run's is the only one)."""
        traces = sorted((self.home / "traces").glob("*.json"))
        assert len(traces) == 1, traces
        data = json.loads(traces[0].read_text(encoding="utf-8"))
        traces[0].unlink()
        return data


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
