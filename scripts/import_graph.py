"""Print react-cli's import graph: each module and the package modules it imports.

Read from the source with ``ast``, so every import counts, those inside functions too (the
CLI imports most modules lazily); imports under ``if TYPE_CHECKING:`` never run and are listed
apart. ``tests/test_architecture.py`` checks the same graph for cycles and upward imports.

    python scripts/import_graph.py [--dot]
"""

from __future__ import annotations

import argparse
import ast
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "react_cli"


@dataclass
class Imports:
    """What one module imports: at run time, and for type checking only."""

    runtime: set[str] = field(default_factory=set)
    typing: set[str] = field(default_factory=set)


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
        typing_only = _typing_only_nodes(tree)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(tree):
            targets = _targets(node, package, modules)
            (imports.typing if id(node) in typing_only else imports.runtime).update(targets)
        imports.runtime.discard(name)
        imports.typing -= imports.runtime | {name}
        graph[name] = imports
    return graph


def _targets(node: ast.AST, package: str, modules: dict[str, Path]) -> set[str]:
    """The package modules an import statement names (none for any other node)."""
    if isinstance(node, ast.Import):
        return {m for alias in node.names if (m := _module_of(alias.name, modules))}
    if not isinstance(node, ast.ImportFrom):
        return set()
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


def _typing_only_nodes(tree: ast.AST) -> set[int]:
    """The ids of every node inside an ``if TYPE_CHECKING:`` block."""
    nodes: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.If):
            continue
        test = node.test
        name = test.id if isinstance(test, ast.Name) else getattr(test, "attr", None)
        if name == "TYPE_CHECKING":
            for statement in node.body:
                nodes.update(id(inner) for inner in ast.walk(statement))
    return nodes


def short(name: str) -> str:
    return name.removeprefix(f"{PACKAGE}.") or name


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dot", action="store_true", help="Graphviz instead of a list.")
    args = parser.parse_args()
    graph = import_graph()
    if args.dot:
        print("digraph imports {\n  rankdir=LR;")
        for name, imports in graph.items():
            for target in sorted(imports.runtime):
                print(f'  "{short(name)}" -> "{short(target)}";')
            for target in sorted(imports.typing):
                print(f'  "{short(name)}" -> "{short(target)}" [style=dashed];')
        print("}")
        return
    for name, imports in graph.items():
        line = f"{short(name)} -> {', '.join(short(t) for t in sorted(imports.runtime)) or '-'}"
        if imports.typing:
            line += f"  (type checking only: {', '.join(short(t) for t in sorted(imports.typing))})"
        print(line)


if __name__ == "__main__":
    main()
