"""Shared fixtures (a home, the recorded fake Wikipedia, the in-process CLI) and the subprocess
runner for the few tests that need a process of their own."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

sys.path.insert(0, str(Path(__file__).resolve().parent / "support"))  # the fakes and helpers

import background
import bytecode
import pytest
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, scripted
from inproc import (
    FOREIGN_ENV,
    FOREIGN_ENV_PREFIXES,
    CliResult,
    Runner,
    build_commands_once,
    only_trace,
)

if TYPE_CHECKING:
    from scheduling import CostFirst
    from xdist.remote import Producer

__all__ = ["REACT_CLI", "ROOT", "CliResult", "cli_env", "only_trace", "run_cli"]

ROOT = Path(__file__).resolve().parent.parent
REACT_CLI = Path(sys.executable).with_name("react-cli")  # the console script `pip install` made


def pytest_configure(config: pytest.Config) -> None:
    """Collection and the tests allocate many short-lived objects (rewritten modules,
    hypothesis examples, the servers' requests): a young generation 70× the default's 700 lets
    the garbage collector run a fraction as often (about 8 % less CPU), for a few MB. Every
    in-process run reuses one typer command (``inproc.build_commands_once``).

    The process that schedules the tests (not a pytest-xdist worker) compiles the run's
    modules once (``bytecode``) and makes the folder where ``background`` hands mypy's verdict
    over, before any worker starts.
    """
    gc.set_threshold(50_000, 20, 20)
    build_commands_once()
    if not hasattr(config, "workerinput"):
        bytecode.prepare(config)
        background.prepare()


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Producer) -> CostFirst | None:
    """``--dist loadfile`` (the default ``addopts``): a file's tests on one worker, the files
    sharing session fixtures together, the costliest first (see ``scheduling``)."""
    if config.getvalue("dist") != "loadfile":
        return None
    from scheduling import CostFirst

    return CostFirst(config, log)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: a worker per core and one more. A test spends about a third of its time
    waiting (on its servers, its processes, a browser), and the extra worker runs meanwhile:
    on the 2-core machine with one core kept busy the suite took 73-77 s with 3 workers, 88-91 s
    with 2 (issue 30; part of that is the scheduler's fair share, three workers against the
    busy process instead of two)."""
    return (os.cpu_count() or 1) + 1


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_setupnodes(config: pytest.Config, specs: object) -> None:
    """The workers are about to start: hypothesis' Unicode tables are made meanwhile, once."""
    background.unicode_tables()


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node: object, ids: list[str]) -> None:
    """The run's selection is known: ``mypy --strict`` starts if it is in it."""
    background.start(ids)


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collection built (modules, test functions, hypothesis strategies) lives for the
    whole run: out of the garbage collector's reach, its full collections stop rescanning it
    (about a tenth of the CPU time of the hypothesis-heavy files).

    Without pytest-xdist, ``mypy --strict`` starts now if its test is selected (see
    ``background``).
    """
    gc.freeze()
    if not hasattr(session.config, "workerinput"):
        background.start({item.nodeid for item in session.items})


def pytest_unconfigure(config: pytest.Config) -> None:
    background.stop()


@pytest.fixture(scope="session")
def recorded_wiki() -> Iterator[FakeMediaWiki]:
    """The one server behind ``wiki``, started once for the session."""
    with FakeMediaWiki.from_fixtures() as server:
        yield server


@pytest.fixture
def wiki(recorded_wiki: FakeMediaWiki) -> FakeMediaWiki:
    """The fake Wikipedia serving the recorded pages: one server for the session, with no
    requests and no faults when a test starts (a test that stops it starts its own)."""
    recorded_wiki.requests.clear()
    recorded_wiki.faults.clear()
    return recorded_wiki


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture(scope="module")
def llm() -> Iterator[FakeOpenAI]:
    """A fake model that answers every request with ``Finish[Paris]`` at once; one server for
    the module (files that need another script define their own ``llm``)."""
    with FakeOpenAI(scripted(" Easy.\nAction 1: Finish[Paris]")) as server:
        yield server


@pytest.fixture
def cli(home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Runner:
    """``react-cli`` in-process, with ``home`` as its home and ``inproc.FAST_CONFIG``."""
    return Runner(home, monkeypatch, capsys)


def cli_env(home: Path, **extra: str) -> dict[str, str]:
    """A clean environment: nothing of the developer's own settings leaks into a test."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(FOREIGN_ENV_PREFIXES) and key not in FOREIGN_ENV
    }
    env.update({"REACT_CLI_HOME": str(home), "COLUMNS": "200"})
    env.update(extra)
    return env


def run_cli(
    args: list[str], env: dict[str, str], stdin: str | None = None, timeout: float = 60
) -> CliResult:
    """Run ``react-cli`` exactly as a user would: the console script, in a process of its own."""
    proc = subprocess.run(
        [str(REACT_CLI), *args],
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        cwd=ROOT,
    )
    return CliResult(proc.returncode, proc.stdout, proc.stderr)
