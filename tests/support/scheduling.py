"""How pytest-xdist hands the test files to its workers (``pytest_xdist_make_scheduler`` in
``conftest.py``): as ``--dist loadfile`` does, a file's tests on one worker so its module
fixtures are made once, with two changes that keep both workers busy to the end.

- The files that share what a worker makes once for its session are one unit of work, on one
  worker, so each of those is made once a run, not once per worker: the eval folders of the
  ``share_evals`` plugin, matplotlib behind their reports, Chromium and Inspect AI (``SHARED``);
  the MCP SDK's zygotes of the ``mcp_zygotes`` plugin (``MCP``).
- Units go out costliest first (a longest-processing-time-first order), so the end of the run is
  small files that even out; xdist's own order (most tests first) left the few-test files that
  take seconds (the browsers, the growth checks, the bench scripts) for the end, one worker
  running them while the other had finished. ``tests/test_lint.py`` goes last: its ``mypy``
  runs in the background from the start (``background``) and is done by then.

The costs are measured CPU seconds; a file missing from ``COSTLIEST`` is not lost, only sent in
xdist's order after those.
"""

from __future__ import annotations

import functools
from pathlib import Path

from xdist.scheduler import LoadScopeScheduling

COSTLIEST = (  # CPU seconds of the file's tests alone, measured on the 2-core machine (issue 30)
    "tests/eval/test_matrix_eval.py",  # 5.5: a 2 × 2 × 2 matrix killed and resumed, Ctrl-C
    "tests/test_pathological.py",  # 3.4: growth checks up to 1 MB
    "tests/eval/test_batch_eval.py",  # 3.0: batch evals beside live ones, a process killed
    "tests/test_bench.py",  # 2.6: every bench script once
    "tests/cli/test_cli_process.py",  # 2.3: react-cli processes, Ctrl-C
    "tests/cli/test_sources.py",  # 2.1
    "tests/cli/test_chat_pty.py",  # 2.0: a pseudo-terminal
    "tests/wiki/test_fuzz_zim.py",  # 2.0
    "tests/eval/test_eval_folder.py",  # 1.8
    "tests/test_packaging.py",  # 1.7: a wheel built, fresh interpreters
    "tests/eval/test_methods_eval.py",  # 1.6
)
LAST = ("tests/test_lint.py",)
SHARED = "the share_evals plugin, matplotlib, Chromium and Inspect AI"
MCP = "the mcp_zygotes plugin's MCP servers"
UNITS = {'"share_evals"': SHARED, '"browsers"': SHARED, '"mcp_zygotes"': MCP}
"""The plugins whose session fixtures make a unit, as a test file names them in its
``pytest_plugins``, and the unit each makes."""
SHARING = tuple(dict.fromkeys(UNITS.values()))  # the units of UNITS, in the order they go out


class CostFirst(LoadScopeScheduling):
    """``--dist loadfile``, with the files of each of ``UNITS`` as one unit and the costliest
    units first (see the module's docstring)."""

    def _split_scope(self, nodeid: str) -> str:
        path = nodeid.split("::", 1)[0]
        return shares(self.config.rootpath / path) or path

    def schedule(self) -> None:
        if self.collection is None and self._check_nodes_have_same_collection():
            # xdist fills its queue by assignment: the units already there keep this order
            ids = next(iter(self.registered_collections.values()))
            sizes: dict[str, int] = {}
            for nodeid in ids:
                scope = self._split_scope(nodeid)
                sizes[scope] = sizes.get(scope, 0) + 1
            for scope in in_order(sizes):
                self.workqueue[scope] = {}
        super().schedule()


def in_order(sizes: dict[str, int]) -> list[str]:
    """The units (named by ``_split_scope``, with their numbers of tests) in the order they go
    out: ``SHARED``, ``MCP``, ``COSTLIEST``, the others most tests first (xdist's order),
    ``LAST``."""

    def rank(scope: str) -> tuple[int, int]:
        if scope in SHARING:
            return (0, SHARING.index(scope))
        if scope in COSTLIEST:
            return (1, COSTLIEST.index(scope))
        return (3 if scope in LAST else 2, -sizes[scope])

    return sorted(sizes, key=rank)


@functools.cache
def shares(path: Path) -> str | None:
    """The unit of the first of ``UNITS``' plugins the test file at ``path`` loads, if any."""
    try:
        source = path.read_text(encoding="utf-8")
    except OSError:  # a doctest's module, a file gone since collection
        return None
    return next((unit for sign, unit in UNITS.items() if sign in source), None)
