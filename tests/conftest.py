"""Shared fixtures: local fake servers and a way to run the real ``react-cli`` command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fake_mediawiki import FakeMediaWiki

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class CliResult:
    code: int
    stdout: str
    stderr: str


@pytest.fixture
def wiki() -> Iterator[FakeMediaWiki]:
    with FakeMediaWiki.from_fixtures() as server:
        yield server


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


def cli_env(home: Path, **extra: str) -> dict[str, str]:
    """A clean environment: nothing of the developer's own settings leaks into a test."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("OPENAI_", "REACT_CLI_")) and key not in {"NO_COLOR", "FORCE_COLOR"}
    }
    env.update({"REACT_CLI_HOME": str(home), "COLUMNS": "200"})
    env.update(extra)
    return env


def run_cli(
    args: list[str], env: dict[str, str], stdin: str | None = None, timeout: float = 60
) -> CliResult:
    """Run ``react-cli`` exactly as a user would, in a subprocess."""
    proc = subprocess.run(
        [sys.executable, "-m", "react_cli", *args],
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        cwd=ROOT,
    )
    return CliResult(proc.returncode, proc.stdout, proc.stderr)


def only_trace(home: Path) -> dict[str, Any]:
    traces = sorted((home / "traces").glob("*.json"))
    assert len(traces) == 1, traces
    return json.loads(traces[0].read_text(encoding="utf-8"))
