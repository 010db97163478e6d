"""No command opens a resource itself: every one goes through ``session.open_session``, which
opens them in one order and closes them however the command ends.

What counts as opening one is read from the session's own openers (``session/builders.py``):
each function it defines, and each function or class of a module holding resources (the
model's client, Wikipedia's backends, the cache, the spans, the tools) that it calls; so an
opener added there is forbidden to the commands without this file changing.
"""

from __future__ import annotations

import ast
from pathlib import Path

import react_cli

PACKAGE = Path(react_cli.__file__).parent
BUILDERS = PACKAGE / "session" / "builders.py"
RESOURCE_MODULES = ("llm", "wiki", "cache", "telemetry", "tools")
"""Where what the builders call opens a resource (the rest is settings, records, errors)."""


def openers() -> set[str]:
    """The session's openers and what they call to open each resource (see the docstring)."""
    tree = ast.parse(BUILDERS.read_text(encoding="utf-8"))
    found = {
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_")
    }
    imported: dict[str, str] = {}  # the name called -> the name its module gives it
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            parts = node.module.split(".")
            if parts[0] == "react_cli" and len(parts) > 1 and parts[1] in RESOURCE_MODULES:
                imported.update({alias.asname or alias.name: alias.name for alias in node.names})
    called = {
        node.func.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }
    return found | {imported[name] for name in called & set(imported)}


def opened_by(source: str, forbidden: set[str]) -> list[str]:
    """Where ``source`` imports or calls one of ``forbidden``, or imports the builders."""
    wrong = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            if node.module == "react_cli.session.builders":
                wrong.append(f"line {node.lineno}: imports react_cli.session.builders")
            wrong += [
                f"line {node.lineno}: imports {alias.name}"
                for alias in node.names
                if alias.name in forbidden
            ]
        elif isinstance(node, ast.Import):
            wrong += [
                f"line {node.lineno}: imports {alias.name}"
                for alias in node.names
                if alias.name == "react_cli.session.builders"
            ]
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if name in forbidden:
                wrong.append(f"line {node.lineno}: calls {name}")
    return wrong


def test_the_openers_are_read_from_the_session() -> None:
    found = openers()
    assert {
        "build_model",
        "model_client",
        "build_backend",
        "open_cache",
        "build_spans",
        "build_user_tools",
        "open_backend",
        "open_spans",
        "open_user_tools",
        "OpenAIClient",
        "CachedModel",
        "CachedBackend",
    } <= found
    assert not found & {"Settings", "UsageError", "home_dir", "open_session"}


def test_the_check_finds_a_command_that_opens_a_resource() -> None:
    source = (
        "from react_cli.session.builders import Told\n"
        "def command(settings):\n"
        "    from react_cli.tools.users import open_user_tools\n"
        "    import react_cli.session.builders as builders\n"
        "    return builders.build_backend(settings), open_user_tools(settings)\n"
    )
    assert opened_by(source, openers()) == [
        "line 1: imports react_cli.session.builders",
        "line 3: imports open_user_tools",
        "line 4: imports react_cli.session.builders",
        "line 5: calls build_backend",
        "line 5: calls open_user_tools",
    ]


def test_no_command_module_opens_a_resource_itself() -> None:
    forbidden = openers()
    modules = sorted((PACKAGE / "cli").glob("*.py"))
    assert len(modules) > 10
    wrong = {
        path.name: found
        for path in modules
        if (found := opened_by(path.read_text(encoding="utf-8"), forbidden))
    }
    assert wrong == {}
