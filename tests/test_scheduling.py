"""The order pytest-xdist's workers get the test files in (``support/scheduling.py``): the
files sharing session fixtures together, the costliest first, ``test_lint.py`` last. A hint
naming a file that no longer exists would silently stop working: each must name one."""

from __future__ import annotations

from pathlib import Path

from scheduling import COSTLIEST, LAST, SHARED, in_order, shares

ROOT = Path(__file__).resolve().parent.parent


def test_every_file_named_for_its_cost_exists() -> None:
    for name in (*COSTLIEST, *LAST):
        assert (ROOT / name).is_file(), name


def test_the_browser_files_and_the_eval_folders_users_are_one_unit() -> None:
    tests = sorted((ROOT / "tests").rglob("test_*.py"))
    sharing = {path.relative_to(ROOT).as_posix() for path in tests if shares(path)}
    assert {"tests/share/test_share_browser.py", "tests/share/test_inspect_export.py"} <= sharing
    assert "tests/share/test_share_eval.py" in sharing  # pytest_plugins = ["share_evals"]
    assert "tests/loop/test_parser.py" not in sharing
    assert not shares(ROOT / "tests" / "no_such_file.py")


def test_units_go_out_shared_first_then_costliest_then_by_size_and_lint_last() -> None:
    sizes = {
        "tests/loop/test_parser.py": 270,
        LAST[0]: 2,
        "tests/small.py": 3,
        COSTLIEST[1]: 11,
        SHARED: 90,
        COSTLIEST[0]: 26,
        "tests/big.py": 40,
    }
    assert in_order(sizes) == [
        SHARED,
        COSTLIEST[0],
        COSTLIEST[1],
        "tests/loop/test_parser.py",
        "tests/big.py",
        "tests/small.py",
        LAST[0],
    ]
