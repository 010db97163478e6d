"""Print react-cli's import graph: each module and the package modules it imports.

Read from the source with ``ast``, so every import counts: those a module runs when it is
loaded, those inside its functions (run when they are called: the CLI imports most modules
lazily), and those under ``if TYPE_CHECKING:`` (never run), each kind apart. ``loads`` follows
them as Python would: loading a module runs its packages' ``__init__`` first, then its own
imports. ``tests/test_architecture.py`` checks the graph for cycles and upward imports, and
what each view loads.

    python scripts/import_graph.py [--dot]
    python scripts/import_graph.py --loads react_cli.share.view   # what it loads, and through what
"""

from __future__ import annotations

import argparse
import ast
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "react_cli"


@dataclass
class Imports:
    """What one module imports: when it is loaded (``loaded``: its module-level statements, a
    class body's too), when one of its functions runs (``deferred``), and for type checking
    only (``typing``); a module named by more than one kind counts as the earliest."""

    loaded: set[str] = field(default_factory=set)
    deferred: set[str] = field(default_factory=set)
    typing: set[str] = field(default_factory=set)

    @property
    def runtime(self) -> set[str]:
        """Every module it may import while running: loaded or deferred."""
        return self.loaded | self.deferred

    @property
    def every(self) -> set[str]:
        return self.loaded | self.deferred | self.typing


def module_names(root: Path = ROOT) -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its ``__init__``)."""
    names = {}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def import_graph(root: Path = ROOT) -> dict[str, Imports]:
    """Each module's imports of other package modules."""
    modules = module_names(root)
    graph = {}
    for name, path in modules.items():
        imports = Imports()
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node, typing, deferred in _import_statements(tree.body):
            targets = _targets(node, package, modules)
            if typing:
                imports.typing.update(targets)
            else:
                (imports.deferred if deferred else imports.loaded).update(targets)
        imports.loaded.discard(name)
        imports.deferred -= imports.loaded | {name}
        imports.typing -= imports.runtime | {name}
        graph[name] = imports
    return graph


def packages(module: str) -> list[str]:
    """The packages Python loads before ``module``, outermost first (``a.b.c``: ``a``, ``a.b``)."""
    parts = module.split(".")
    return [".".join(parts[:end]) for end in range(1, len(parts))]


def loads(
    graph: dict[str, Imports], module: str, deferred: Callable[[str], bool] = lambda _: False
) -> dict[str, list[str]]:
    """Every package module that loading ``module`` loads, each with a shortest chain of
    imports that brings it in (``module`` first). A module's own imports count when it is
    loaded, and those under ``TYPE_CHECKING`` with them (the graph's rules count every import);
    the imports inside its functions count too for the modules ``deferred`` says are called."""
    chains = {module: [module]}
    queue = deque([module])
    while queue:
        current = queue.popleft()
        imports = graph[current]
        found = imports.loaded | imports.typing | set(packages(current))
        if deferred(current):
            found |= imports.deferred
        for target in sorted(found):
            if target not in chains:
                chains[target] = [*chains[current], target]
                queue.append(target)
    del chains[module]
    return chains


def _targets(node: ast.Import | ast.ImportFrom, package: str, modules: dict[str, Path]) -> set[str]:
    """The package modules an import statement names."""
    if isinstance(node, ast.Import):
        return {m for alias in node.names if (m := _module_of(alias.name, modules))}
    base = node.module or ""
    if node.level:  # relative: from the package, up level - 1
        anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
        base = ".".join([*anchor, *([base] if base else [])])
    found = set()
    for alias in node.names:
        submodule = f"{base}.{alias.name}"
        target = submodule if submodule in modules else _module_of(base, modules)
        if target:
            found.add(target)
    return found


def _module_of(dotted: str, modules: dict[str, Path]) -> str | None:
    """The longest prefix of ``dotted`` that is a package module (None: outside it)."""
    parts = dotted.split(".")
    while parts:
        name = ".".join(parts)
        if name in modules:
            return name
        parts.pop()
    return None


Statement = ast.stmt | ast.excepthandler | ast.match_case
BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")  # the fields holding statements


def _import_statements(
    block: list[Statement], typing: bool = False, deferred: bool = False
) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool, bool]]:
    """Every import statement in ``block`` and the blocks inside it, with whether it is inside
    an ``if TYPE_CHECKING:`` block (never run) and inside a function's body (run only when it
    is called; default values and decorators run when the module is loaded). Imports are
    statements: only statements are visited, never the expressions that make up most nodes."""
    for node in block:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node, typing, deferred
            continue
        inner = deferred or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        for name in BLOCKS:
            statements = getattr(node, name, None)
            if not statements:
                continue
            checked = name == "body" and isinstance(node, ast.If) and _type_checking(node.test)
            yield from _import_statements(statements, typing or checked, inner)


def _type_checking(test: ast.expr) -> bool:
    """Whether an ``if`` tests ``TYPE_CHECKING`` (``typing.TYPE_CHECKING`` too)."""
    name = test.id if isinstance(test, ast.Name) else getattr(test, "attr", None)
    return name == "TYPE_CHECKING"


def short(name: str) -> str:
    return name.removeprefix(f"{PACKAGE}.") or name


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dot", action="store_true", help="Graphviz instead of a list.")
    parser.add_argument(
        "--loads", metavar="MODULE", help="What loading MODULE loads, each with its chain."
    )
    args = parser.parse_args()
    graph = import_graph()
    if args.loads:
        for target, chain in sorted(loads(graph, args.loads).items()):
            print(f"{short(target)}  ({' -> '.join(short(m) for m in chain)})")
        return
    if args.dot:
        print("digraph imports {\n  rankdir=LR;")
        styles = (("loaded", ""), ("deferred", " [style=dotted]"), ("typing", " [style=dashed]"))
        for name, imports in graph.items():
            for kind, style in styles:
                for target in sorted(getattr(imports, kind)):
                    print(f'  "{short(name)}" -> "{short(target)}"{style};')
        print("}")
        return
    for name, imports in graph.items():
        line = f"{short(name)} -> {', '.join(short(t) for t in sorted(imports.loaded)) or '-'}"
        for kind, label in (("deferred", "in functions"), ("typing", "type checking only")):
            if found := getattr(imports, kind):
                line += f"  ({label}: {', '.join(short(t) for t in sorted(found))})"
        print(line)


if __name__ == "__main__":
    main()
