"""The wheel ships the prompt templates, and start-up stays light."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
KINDS = ("", "-act", "-cot", "-standard", "-tools", "-act-tools")  # ReAct's: the task's name
HEAVY = (
    *("requests", "bs4", "rich", "urllib3", "lxml", "libzim", "opentelemetry", "inspect_ai"),
    *("prompt_toolkit", "mcp", "anyio", "httpx2", "pydantic"),
)
"""What start-up and --help never import (the extras' modules are imported only when used)."""
GENERAL = ("general", "general-act", "general-tools", "general-act-tools")
SHIPPED = (
    *(f"{task}{kind}" for task in ("hotpotqa", "fever") for kind in KINDS),
    "hotpotqa-zh",
    *GENERAL,
)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "build",
            "--wheel",
            "--no-isolation",
            "--outdir",
            str(out),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
    )
    (path,) = out.glob("react_cli-*.whl")
    return path


def test_wheel_contains_the_prompts(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    for name in SHIPPED:
        assert f"react_cli/prompts/{name}.txt" in names
    assert "react_cli/cli/__init__.py" in names
    assert "react_cli/data/wikipedia-languages.txt" in names  # --lang checks against it


def test_installed_package_finds_its_prompts(wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    code = (
        "import react_cli.loop.prompts as p; t = p.load_prompt('hotpotqa'); "
        "print(p.prompts_dir()); print(sorted(p.shipped_names())); print(t.text[:20])"
    )
    out = subprocess.run(
        [sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(site)!r}); {code}"],
        check=True,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    ).stdout.splitlines()
    assert out[0] == str(site / "react_cli" / "prompts")
    assert out[1] == str(sorted(SHIPPED))
    assert out[2] == "Solve a question ans"


HELPS = (["--help"], ["ask", "-h"], ["chat", "-h"], [])
STARTS = f"""
import json, os, sys
import react_cli.cli
from react_cli.cli import main

def heavy():
    return sorted(m for m in sys.modules if m.split(".")[0] in {HEAVY!r})

seen = {{"start-up": heavy()}}
for args in {HELPS!r}:
    read, write = os.pipe()
    if os.fork() == 0:  # a child whose modules are the start-up's, as a fresh process's
        os.dup2(write, 1)
        try:
            main(args)
        except SystemExit as exc:
            code = exc.code
        sys.stdout.flush()
        print(json.dumps([code, heavy()]), file=sys.stderr, flush=True)
        os._exit(0)
    os.close(write)
    with os.fdopen(read, encoding="utf-8") as shown:
        out = shown.read()
    os.wait()
    seen[" ".join(args)] = out
print(json.dumps(seen))
"""
"""One interpreter imports what start-up imports, then forks a child for each command line of
``HELPS``: each child starts where a fresh ``react-cli`` would, for a fraction of the CPU."""


@pytest.fixture(scope="module")
def started() -> tuple[dict[str, object], list[str]]:
    """What start-up imported, each help's output by its command line, and each help's exit
    code and heavy modules (one JSON line a child, in ``HELPS``' order)."""
    done = subprocess.run([sys.executable, "-c", STARTS], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), done.stderr.splitlines()


def test_cli_start_up_imports_no_heavy_modules(
    started: tuple[dict[str, object], list[str]],
) -> None:
    assert started[0]["start-up"] == []


@pytest.mark.parametrize("args", HELPS)
def test_help_imports_no_heavy_modules(
    started: tuple[dict[str, object], list[str]], args: list[str]
) -> None:
    """``react-cli --help`` (and bare ``react-cli``) stays fast: no requests, bs4 or rich."""
    shown, said = started
    assert len(said) == len(HELPS), said  # one line a child: nothing else on stderr
    assert json.loads(said[HELPS.index(args)]) == [0, []], said
    assert "Usage: react-cli" in str(shown[" ".join(args)])
