"""The layers of ``react_cli``, by folder, bottom first, and the rules the import graph keeps
(every import counts: those inside functions and those under ``if TYPE_CHECKING:`` too).

- No import cycle.
- No import up a layer, nor sideways between two folders of one floor (``llm`` and ``wiki``).
- What shows runs and evals (``display/``, ``share/``, the eval's views) never imports what
  makes them: the loop, the methods' execution, the session, replay, the eval's pool.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

from import_graph import Imports, import_graph, module_names

FLOORS: tuple[tuple[str, ...], ...] = (
    ("core",),  # the vocabulary: records, the trajectory, methods and tasks, errors, wording
    ("infra",),  # http, retry, deadlines, redaction, size limits, untrusted bytes, Ctrl-C
    ("settings",),  # the Settings type, its resolution and validation, URLs, environment
    ("llm", "wiki"),  # the model endpoint; Wikipedia's backends
    ("tools", "cache"),  # Tool and ToolSet; Search and Lookup; Python and MCP tools; the cache
    # at the llm and wiki seams
    ("loop",),  # the protocol-neutral loop, its events and stop rules; the text protocol
    ("methods",),  # the paper's Table 1: blocks, answers, votes, back-off rules
    ("session",),  # one place that builds a run
    ("traces",),  # traces: the format, how a run was made, the store, replay, forks
    ("display",),  # the terminal: the renderer, replays shown, terminal-safe text
    ("telemetry",),  # OpenTelemetry spans of runs and evals (the otel extra)
    ("eval", "conversation"),  # questions in a batch; questions in turn (follow-ups), kept
    ("share",),  # exports, reports, comparisons
    ("cli", "entry", "__main__"),  # the command line
)
VIEWS = (
    "react_cli.display",
    "react_cli.share",
    "react_cli.eval.view",
    "react_cli.eval.events",
    "react_cli.telemetry",
)
EXECUTION = (
    "react_cli.loop.agent",
    "react_cli.methods.memo",
    "react_cli.methods.outcome",
    "react_cli.session",
    "react_cli.traces.replay",
    "react_cli.traces.fork",
    "react_cli.traces.recorder",
    "react_cli.eval.runner",
    "react_cli.eval.question",
)
TOP_MODULES = {"__init__.py", "__main__.py", "entry.py", "session.py"}
"""The package's face, ``python -m``'s entry, the console script's entry, the session."""


def place(module: str) -> tuple[int, str]:
    """(floor, folder) of a module of the package; the package's face is no floor's."""
    if module == "react_cli":
        return -1, ""
    folder = module.split(".")[1]
    for number, folders in enumerate(FLOORS):
        if folder in folders:
            return number, folder if number < len(FLOORS) - 1 else "cli"
    raise AssertionError(f"{module} is in no floor")


@pytest.fixture(scope="module")
def graph() -> dict[str, Imports]:
    return import_graph()


def every_import(graph: dict[str, Imports]) -> list[tuple[str, str]]:
    return [(m, target) for m, i in graph.items() for target in sorted(i.runtime | i.typing)]


def test_every_module_is_read_and_every_folder_has_a_floor(graph: dict[str, Imports]) -> None:
    assert set(graph) == set(module_names())
    assert {"react_cli.loop.agent", "react_cli.cli.ask", "react_cli.share.view"} <= set(graph)
    # a function-level import counts: the CLI imports the session only inside its commands
    assert "react_cli.session" in graph["react_cli.cli.ask"].runtime
    assert "react_cli.settings.settings" in graph["react_cli.settings.validation"].typing
    for module in graph:
        place(module)


def test_the_top_level_is_folders_and_a_few_modules() -> None:
    package = Path(module_names()["react_cli"]).parent
    modules = {path.name for path in package.glob("*.py")}
    assert modules == TOP_MODULES
    folders = {folder for floor in FLOORS for folder in floor} - {"session", "entry", "__main__"}
    assert all((package / folder / "__init__.py").is_file() for folder in folders)


def test_no_import_runs_up_a_floor_or_sideways(graph: dict[str, Imports]) -> None:
    wrong = []
    for module, target in every_import(graph):
        (floor, folder), (to_floor, to_folder) = place(module), place(target)
        if to_floor > floor or (to_floor == floor and to_folder != folder and to_floor >= 0):
            wrong.append(f"{module} imports {target}")
    assert wrong == []


def test_views_never_import_what_runs(graph: dict[str, Imports]) -> None:
    wrong = [
        f"{module} imports {target}"
        for module, target in every_import(graph)
        if module.startswith(VIEWS) and target.startswith(EXECUTION)
    ]
    assert wrong == []


def test_the_rules_would_catch_a_break() -> None:
    assert place("react_cli.display.render") > place("react_cli.loop.agent")
    assert place("react_cli.llm.client")[0] == place("react_cli.wiki.zim")[0]
    assert (
        place("react_cli.cli.app") > place("react_cli.share.view") > place("react_cli.core.errors")
    )
    with pytest.raises(AssertionError):
        place("react_cli.nowhere.x")


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module, or with a self-loop
    (Tarjan's algorithm, iterative so a deep graph cannot exhaust the stack)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in edges:
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in edges.get(node, ()):
                    found.append(sorted(component))
    return found


def test_no_import_cycles(graph: dict[str, Imports]) -> None:
    edges = {module: imports.runtime | imports.typing for module, imports in graph.items()}
    assert cycles(edges) == []


def test_a_cycle_would_be_found() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert sorted(cycles(edges)) == [["a", "b", "c"], ["e"]]
