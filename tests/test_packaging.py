"""The wheel ships the prompt templates, and start-up stays light."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
KINDS = ("", "-act", "-cot", "-standard", "-tools", "-act-tools")  # ReAct's: the task's name
HEAVY = (
    *("requests", "bs4", "rich", "urllib3", "lxml", "libzim", "opentelemetry", "inspect_ai"),
    *("prompt_toolkit", "mcp", "anyio", "httpx2"),
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


def test_cli_start_up_imports_no_heavy_modules() -> None:
    code = (
        "import sys, react_cli.cli; "
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("args", [["--help"], ["ask", "-h"], ["chat", "-h"], []])
def test_help_imports_no_heavy_modules(args: list[str]) -> None:
    """``react-cli --help`` (and bare ``react-cli``) stays fast: no requests, bs4 or rich."""
    code = (
        "import sys; from react_cli.cli import main\n"
        "try:\n    main(sys.argv[1:])\nexcept SystemExit as exc:\n    code = exc.code\n"
        f"heavy = sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r})\n"
        "print(code, heavy, file=sys.stderr)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=True
    )
    assert out.stderr.strip() == "0 []", out.stderr
    assert "Usage: react-cli" in out.stdout
