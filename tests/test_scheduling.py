"""The order pytest-xdist's workers get the test files in (``support/scheduling.py``): the
files sharing session fixtures together, the costliest first, ``test_lint.py`` last. A hint
naming a file that no longer exists would silently stop working: each must name one."""

from __future__ import annotations

import ast
from pathlib import Path

from scheduling import COSTLIEST, LAST, MCP, SHARED, UNITS, in_order, shares

ROOT = Path(__file__).resolve().parent.parent


def test_every_file_named_for_its_cost_exists() -> None:
    for name in (*COSTLIEST, *LAST):
        assert (ROOT / name).is_file(), name


def test_the_browser_files_and_the_eval_folders_users_are_one_unit() -> None:
    tests = sorted((ROOT / "tests").rglob("test_*.py"))
    sharing = {path.relative_to(ROOT).as_posix() for path in tests if shares(path) == SHARED}
    assert {"tests/share/test_share_browser.py", "tests/share/test_inspect_export.py"} <= sharing
    assert "tests/share/test_share_eval.py" in sharing  # pytest_plugins = ["share_evals"]
    assert "tests/loop/test_parser.py" not in sharing
    assert shares(ROOT / "tests" / "loop" / "test_parser.py") is None
    assert shares(ROOT / "tests" / "no_such_file.py") is None


def test_every_file_starting_mcp_servers_is_the_mcp_unit() -> None:
    """A file that made its own zygote would pay the SDK's import again: every file using the
    zygotes asks for ``mcp_zygotes``' session fixtures, and all of them are one unit."""
    tests = set((ROOT / "tests").rglob("test_*.py")) - {Path(__file__).resolve()}
    sources = {path: path.read_text(encoding="utf-8") for path in tests}
    users = {path for path, source in sources.items() if "from mcp_fixtures import" in source}
    assert ROOT / "tests" / "cli" / "test_consent_pty.py" in users
    assert len(users) >= 7
    for path in users:
        assert shares(path) == MCP, path
        assert "Servers(" not in sources[path], path


def test_units_go_out_shared_and_mcp_first_then_costliest_then_by_size_and_lint_last() -> None:
    sizes = {
        "tests/loop/test_parser.py": 270,
        LAST[0]: 2,
        "tests/small.py": 3,
        COSTLIEST[1]: 11,
        SHARED: 90,
        MCP: 60,
        COSTLIEST[0]: 26,
        "tests/big.py": 40,
    }
    assert in_order(sizes) == [
        SHARED,
        MCP,
        COSTLIEST[0],
        COSTLIEST[1],
        "tests/loop/test_parser.py",
        "tests/big.py",
        "tests/small.py",
        LAST[0],
    ]


def test_a_file_put_in_a_unit_loads_that_units_plugin() -> None:
    """``shares`` reads a file's text (the scheduler asks for every test, so it must be cheap);
    the module itself must load the plugin, in a ``pytest_plugins`` of its own: one named only
    in a string, or loaded first by another file on the worker, works in a full run and fails
    when the file runs alone."""
    tests = set((ROOT / "tests").rglob("test_*.py")) - {Path(__file__).resolve()}
    for path in sorted(tests):
        unit = shares(path)
        if unit is None:
            continue
        module = ast.parse(path.read_text(encoding="utf-8"))
        loaded = [
            ast.literal_eval(node.value)
            for node in module.body
            if isinstance(node, ast.Assign)
            and [getattr(target, "id", None) for target in node.targets] == ["pytest_plugins"]
        ]
        assert len(loaded) == 1, path
        assert unit in {UNITS[f'"{plugin}"'] for plugin in loaded[0] if f'"{plugin}"' in UNITS}
