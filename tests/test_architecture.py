"""The import graph of ``react_cli`` (every import, those inside functions too) has no cycle,
and lower layers never import upper ones: the core never imports the command line, the eval
package or ``share``; ``share`` and the eval package never import the command line."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

from import_graph import Imports, import_graph, module_names

CLI = ("react_cli.cli", "react_cli.entry", "react_cli.__main__")
EVAL = ("react_cli.eval", "react_cli.datasets")  # eval* covers evaluate...
SHARE = ("react_cli.share",)
FORBIDDEN = {"core": CLI + EVAL + SHARE, "eval": CLI, "share": CLI}


def layer(module: str) -> str:
    for name, prefixes in (("cli", CLI), ("eval", EVAL), ("share", SHARE)):
        if module.startswith(prefixes):
            return name
    return "core"


@pytest.fixture(scope="module")
def graph() -> dict[str, Imports]:
    return import_graph()


def test_every_module_is_read(graph: dict[str, Imports]) -> None:
    assert set(graph) == set(module_names())
    assert {"react_cli.agent", "react_cli.cli.ask", "react_cli.share.view"} <= set(graph)
    # a function-level import counts: the CLI imports the wiring only inside its commands;
    # an import under "if TYPE_CHECKING:" is apart (it never runs)
    assert "react_cli.wiring" in graph["react_cli.cli.ask"].runtime
    assert graph["react_cli.validation"].typing == {"react_cli.config"}


def test_lower_layers_never_import_upper_ones(graph: dict[str, Imports]) -> None:
    upward = [
        f"{module} ({layer(module)}) imports {target}"
        for module, imports in graph.items()
        for target in sorted(imports.runtime | imports.typing)
        if target.startswith(FORBIDDEN.get(layer(module), ()))
    ]
    assert upward == []


def test_the_layers_are_what_they_say() -> None:
    assert layer("react_cli.evaluate") == layer("react_cli.eval_view") == "eval"
    assert layer("react_cli.eval.runner") == layer("react_cli.datasets") == "eval"
    assert layer("react_cli.scoring") == "core"  # CoT-SC votes by the answers' normalisation
    assert layer("react_cli.cli.app") == layer("react_cli.entry") == "cli"
    assert [layer(m) for m in ("react_cli.wiring", "react_cli.share.view")] == ["core", "share"]


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
    assert cycles({module: imports.runtime for module, imports in graph.items()}) == []


def test_a_cycle_would_be_found() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert sorted(cycles(edges)) == [["a", "b", "c"], ["e"]]
