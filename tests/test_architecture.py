"""The layers of ``react_cli``, by folder, bottom first, and the rules the import graph keeps
(every import counts: those inside functions and those under ``if TYPE_CHECKING:`` too).

- No import cycle.
- No import up a layer, nor sideways between two folders of one floor (``llm`` and ``wiki``),
  directly or through what a module loads (its packages' ``__init__`` included).
- What shows runs and evals (``display/``, ``share/``, the eval's views, telemetry) never loads
  what runs them, however far down: not when it is imported, nor when its functions run. What
  runs is each module that acts in a run (``ENGINES``: builds it, drives its loop, asks the
  model, fetches a page, calls a tool, answers from the cache) and every module that loads one
  (the methods' memo, replay, the eval's pool... are found, not listed).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

from import_graph import Imports, import_graph, loads, module_names, packages, short

FLOORS: tuple[tuple[str, ...], ...] = (
    ("core",),  # the vocabulary: records, the trajectory, methods and tasks, errors, wording
    ("infra",),  # http, retry, deadlines, redaction, size limits, untrusted bytes, Ctrl-C
    ("settings",),  # the Settings type, its resolution and validation, URLs, environment
    ("llm", "wiki"),  # the model endpoint; Wikipedia's backends
    ("tools", "cache"),  # Tool and ToolSet; Search and Lookup; Python and MCP tools; the cache
    # at the llm and wiki seams
    ("loop",),  # the protocol-neutral loop, its events and stop rules; the text protocol
    ("methods",),  # the paper's Table 1: blocks, answers, votes, back-off rules
    ("telemetry",),  # OpenTelemetry spans of runs and evals (the otel extra)
    ("session",),  # one place that builds a run, and holds a command's resources open
    ("traces",),  # traces: the format, how a run was made, the store, replay, forks
    ("display",),  # the terminal: the renderer, replays shown, terminal-safe text
    ("eval", "conversation"),  # questions in a batch; questions in turn (follow-ups), kept
    ("share", "distill"),  # exports, reports, comparisons; prompts made of recorded runs
    ("cli", "entry", "__main__"),  # the command line
)
VIEWS = (
    "react_cli.display",
    "react_cli.share",
    "react_cli.eval.view",
    "react_cli.eval.events",
    "react_cli.telemetry",
)
ENGINES = {
    "react_cli.session": "builds a run",
    "react_cli.loop.agent": "drives a run's loop",
    "react_cli.loop.text.protocol": "asks the model for a loop's turns",
    "react_cli.loop.tools.protocol": "asks the model for a loop's turns",
    "react_cli.llm.client": "sends the model's requests",
    "react_cli.llm.transport": "sends the model's requests",
    "react_cli.llm.sampling": "draws a method's samples",
    "react_cli.wiki.mediawiki": "fetches pages",
    "react_cli.wiki.zim": "reads pages from an archive",
    "react_cli.tools.wikipedia": "answers Search and Lookup",
    "react_cli.tools.functions": "calls a user's functions",
    "react_cli.tools.mcp": "starts and calls MCP servers",
    "react_cli.tools.users": "opens a command's users' tools",
    "react_cli.cache": "answers calls from the cache",
}
"""What acts in a run (a package: each of its modules), with what it does."""
TOP_MODULES = {"__init__.py", "__main__.py", "entry.py"}
"""The package's face, ``python -m``'s entry, the console script's entry."""


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
    return [(m, target) for m, i in graph.items() for target in sorted(i.every)]


def is_view(module: str) -> bool:
    return module.startswith(VIEWS)


def engine(module: str) -> str | None:
    """The engine ``module`` is (or is part of), None if it is none."""
    return next((e for e in ENGINES if module == e or module.startswith(f"{e}.")), None)


def arrow(chain: list[str]) -> str:
    return " -> ".join(map(short, chain))


def test_every_module_is_read_and_every_folder_has_a_floor(graph: dict[str, Imports]) -> None:
    assert set(graph) == set(module_names())
    assert {"react_cli.loop.agent", "react_cli.cli.ask", "react_cli.share.view"} <= set(graph)
    # a function-level import counts: the CLI imports the session only inside its commands
    assert "react_cli.session" in graph["react_cli.cli.ask"].deferred
    assert "react_cli.session" not in graph["react_cli.cli.ask"].loaded
    assert "react_cli.settings.settings" in graph["react_cli.settings.validation"].typing
    assert "react_cli.core.records" in graph["react_cli.settings.settings"].loaded
    for module in graph:
        place(module)


def test_the_top_level_is_folders_and_a_few_modules() -> None:
    package = Path(module_names()["react_cli"]).parent
    modules = {path.name for path in package.glob("*.py")}
    assert modules == TOP_MODULES
    folders = {folder for floor in FLOORS for folder in floor} - {"entry", "__main__"}
    assert all((package / folder / "__init__.py").is_file() for folder in folders)


def test_no_import_runs_up_a_floor_or_sideways(graph: dict[str, Imports]) -> None:
    wrong = []
    for module, target in every_import(graph):
        (floor, folder), (to_floor, to_folder) = place(module), place(target)
        if to_floor > floor or (to_floor == floor and to_folder != folder and to_floor >= 0):
            wrong.append(f"{module} imports {target}")
    assert wrong == []


def test_what_a_module_loads_stays_on_its_floor_and_below(graph: dict[str, Imports]) -> None:
    """The floors, through every chain of imports a module's loading runs (packages first)."""
    wrong = []
    for module in graph:
        floor, folder = place(module)
        for target, chain in loads(graph, module).items():
            to_floor, to_folder = place(target)
            if to_floor > floor or (to_floor == floor and to_folder != folder and to_floor >= 0):
                wrong.append(f"{module} loads {target}: {arrow(chain)}")
    assert wrong == []


def test_views_never_load_what_runs(graph: dict[str, Imports]) -> None:
    """A view, loaded and shown (its functions' imports too), loads no engine. A break names
    each engine the views reach, how many reach it, and the shortest chain that brings it in."""
    views = [module for module in graph if is_view(module)]
    assert len(views) >= 20
    reached: dict[str, list[list[str]]] = {}
    for view in views:
        for target, chain in loads(graph, view, deferred=is_view).items():
            if name := engine(target):
                reached.setdefault(name, []).append(chain)
    if reached:
        wrong = {chain[0] for chains in reached.values() for chain in chains}
        lines = [
            f"{name} ({ENGINES[name]}): {len({c[0] for c in chains})} views; "
            + arrow(min(chains, key=len))
            for name, chains in sorted(reached.items())
        ]
        pytest.fail(
            f"{len(wrong)} of {len(views)} views load what runs "
            f"({', '.join(map(short, sorted(wrong)))}):\n" + "\n".join(lines)
        )


PROTOCOLS = ("react_cli.loop.text", "react_cli.loop.tools", "react_cli.loop.registry")
"""The protocols, and the registry that names them."""
OLD_TRACES = "react_cli.traces.upgrade"
"""The upgrade of traces older than version 3, which reads their text as the text protocol
wrote it (what a step showed was not recorded then)."""


def test_what_shows_a_step_reads_no_protocol(graph: dict[str, Imports]) -> None:
    """``display/`` and ``share/`` show what steps and events carry, whatever their protocol:
    none of their modules imports a protocol, and nothing they load reaches one (their
    functions' imports too) but through the reading of old traces."""
    shows = [m for m in graph if m.startswith(("react_cli.display", "react_cli.share"))]
    assert len(shows) >= 15
    direct = [f"{m} imports {t}" for m in shows for t in graph[m].every if t.startswith(PROTOCOLS)]
    assert direct == []
    without_old_traces = {**graph, OLD_TRACES: Imports()}
    reached = [
        arrow(chain)
        for module in shows
        for target, chain in loads(without_old_traces, module, deferred=is_view).items()
        if target.startswith(PROTOCOLS)
    ]
    assert reached == []
    # the reading of old traces does reach one: what keeps the views apart is the rule above
    assert any(t.startswith(PROTOCOLS) for t in loads(graph, "react_cli.share.view"))


def runs(graph: dict[str, Imports], module: str) -> bool:
    """Whether ``module`` is execution code: an engine, or a module that loads one, when it is
    loaded or when its functions run."""
    called = loads(graph, module, deferred=lambda m: m == module)
    return any(engine(target) for target in [module, *called])


def test_what_runs_is_found_from_the_engines(graph: dict[str, Imports]) -> None:
    """Every engine is a module of the package, and what runs through them is found: the
    modules that load one (the methods' memo, replay, the eval's pool, the commands)."""
    for name in ENGINES:
        assert any(engine(module) == name for module in graph), f"no module {name}"
    found = {module for module in graph if runs(graph, module)}
    assert {
        "react_cli.methods.memo",
        "react_cli.methods.outcome",
        "react_cli.traces.replay",
        "react_cli.traces.fork",
        "react_cli.eval.runner",
        "react_cli.eval.question",
        "react_cli.cli.ask",
    } <= found
    # what the views read and are told is not: a trace, how its run was made, the events
    vocabulary = {"react_cli.traces.trace", "react_cli.traces.runconfig", "react_cli.loop.events"}
    assert not vocabulary & found


def test_loads_follows_packages_and_only_the_calls_asked_for() -> None:
    graph = {
        "p.view": Imports(loaded={"p.q.model"}, deferred={"p.slow"}),
        "p.q.model": Imports(typing={"p.types"}),
        "p.q": Imports(loaded={"p.engine"}),
        "p.slow": Imports(deferred={"p.hidden"}),
        **{name: Imports() for name in ("p", "p.types", "p.engine", "p.hidden")},
    }
    assert packages("p.q.model") == ["p", "p.q"]
    assert loads(graph, "p.view") == {
        "p": ["p.view", "p"],
        "p.q.model": ["p.view", "p.q.model"],
        "p.q": ["p.view", "p.q.model", "p.q"],
        "p.types": ["p.view", "p.q.model", "p.types"],
        "p.engine": ["p.view", "p.q.model", "p.q", "p.engine"],
    }
    called = loads(graph, "p.view", deferred=lambda module: module == "p.view")
    assert called["p.slow"] == ["p.view", "p.slow"] and "p.hidden" not in called


def test_the_graph_knows_what_python_loads(graph: dict[str, Imports]) -> None:
    """What a real interpreter loads with a view is within what the graph says it loads (one
    process, a fifth of a second): the graph cannot miss an import that runs."""
    view = "react_cli.share.view"
    code = f"import sys, {view}; print(*(m for m in sys.modules if m.startswith('react_cli')))"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(run.stdout.split()) - {view}
    assert "react_cli.traces.trace" in loaded
    assert loaded <= set(loads(graph, view))


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
    edges = {module: imports.every for module, imports in graph.items()}
    assert cycles(edges) == []


def test_a_cycle_would_be_found() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert sorted(cycles(edges)) == [["a", "b", "c"], ["e"]]
