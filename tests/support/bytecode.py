"""The run's bytecode, compiled once before the workers start.

From a fresh checkout nothing is compiled, and with ``PYTHONDONTWRITEBYTECODE`` set (as on the
machines this suite runs on) nothing ever would be: each pytest-xdist worker then compiles every
module of ``react_cli`` and rewrites and compiles every test module while it collects (4.8 of
its 7.6 s of CPU), and every ``react-cli`` process a test starts compiles the modules on its
command's path again (0.1-0.3 s each). The process that schedules the tests compiles them once
instead, in two processes (this machine's cores), into the ``__pycache__`` folders beside the
sources (ignored by git), and lets the workers and their children read and write bytecode there.

Test modules are compiled as pytest's assertion rewriting loads them (``_rewrite_test``, written
with its own ``_write_pyc``, which a loader finding it valid then reads instead of rewriting);
where that private API moved, they are left to the workers, as before, and nothing else changes.
"""

from __future__ import annotations

import compileall
import multiprocessing
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PLAIN = ("react_cli", "tests/support", "bench")  # modules imported as they are
TESTS = "tests"


def prepare(config: pytest.Config) -> None:
    """Compile the run's modules (see the module docstring), before any worker starts: the
    package's and the helpers', and the test modules under the paths the run was given."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # the workers, react-cli processes
    sys.dont_write_bytecode = False
    plain = [ROOT / folder for folder in PLAIN if (ROOT / folder).is_dir()]
    given = [
        Path(config.invocation_params.dir, arg.split("::")[0]).resolve() for arg in config.args
    ]
    tests = [path for path in _rewritten(config) if any(path.is_relative_to(g) for g in given)]
    context = multiprocessing.get_context("fork")
    with context.Pool(2, initializer=_remember, initargs=(config,)) as pool:
        jobs = [pool.apply_async(_compile_plain, (folder,)) for folder in plain]
        pool.map(_rewrite, tests, chunksize=4)
        for job in jobs:
            job.get()


def _rewritten(config: pytest.Config) -> list[Path]:
    """The modules pytest rewrites: test files, conftest files and the support plugins."""
    patterns = config.getini("python_files")
    found = {
        path
        for pattern in [*patterns, "conftest.py"]
        for path in (ROOT / TESTS).rglob(pattern)
        if "__pycache__" not in path.parts
    }
    found.update((ROOT / TESTS / "support").glob("*.py"))  # pytest_plugins among them
    return sorted(found, key=lambda path: -path.stat().st_size)  # longest first: even halves


_CONFIG: list[pytest.Config] = []


def _remember(config: pytest.Config) -> None:
    _CONFIG.append(config)


def _compile_plain(folder: Path) -> None:
    compileall.compile_dir(folder, quiet=2, workers=1)


def _rewrite(path: Path) -> None:
    """``path`` rewritten and compiled as pytest would, its bytecode written where pytest reads
    it; silently nothing if pytest's private API is not what this expects."""
    try:
        from _pytest.assertion.rewrite import (
            PYC_TAIL,
            _read_pyc,
            _rewrite_test,
            _write_pyc,
            assertstate_key,
            get_cache_dir,
        )

        config = _CONFIG[0]
        state = config.stash[assertstate_key]
        cache = get_cache_dir(path)
        pyc = cache / (path.name[:-3] + PYC_TAIL)
        if _read_pyc(path, pyc, state.trace) is not None:
            return  # compiled by an earlier run, from this source
        source_hash, code = _rewrite_test(path, config)
        cache.mkdir(exist_ok=True)
        _write_pyc(state, code, source_hash, pyc)
    except (ImportError, AttributeError, KeyError, TypeError, OSError, SyntaxError):
        return
