"""Every name ``DEVELOPERS.md`` gives in backquotes exists: a path (``core/records.py``,
``tests/support/inproc.py``, ``loop/text/``), a module's name (``methods/outcome.answer``,
``session.open_session``, ``Trace.write``) or a class (``ModelRequest``), so a module moved or
renamed cannot leave the guide naming what is gone.

Read from the source with ``ast``: a path exists in the repository (from its top, from
``react_cli/`` or ``tests/``, or under the folder whose section it is in); a dotted name is a
module (a suffix of its dotted path is enough, as the guide writes ``llm.base``) and then a
name it defines or imports, and a class's member after that; a name whose first part is
nobody's here must be a module Python can find (``lxml.etree``). Other words in backquotes
(flags, commands, values, file names in prose) are not checked.
"""

from __future__ import annotations

import ast
import builtins
import importlib.util
import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "DEVELOPERS.md"
TOPS = ("react_cli", "tests", "scripts", "bench", "docs", "examples", "prompts", ".ci")
SKIPPED = {".venv", "__pycache__", ".git", "build", "dist", ".hypothesis"}
FILE_KINDS = {"py", "md", "txt", "json", "jsonl", "toml", "png", "sh", "html", "zim", "yaml"}

_QUOTED = re.compile(r"`([^`\n]+)`")
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
_CLASS = re.compile(r"[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+")
_PATH = re.compile(r"[\w.-]+(?:/[\w.-]+)*/?")
_FOLDER = re.compile(r"^#+ .*?`([\w/]+/)`")


@cache
def files() -> frozenset[str]:
    """The repository's files and folders, as paths from its top (folders end in ``/``)."""
    found = {path.name + "/" * path.is_dir() for path in ROOT.iterdir()}
    for top in TOPS:
        for path in (ROOT / top).rglob("*"):
            parts = path.relative_to(ROOT).parts
            if SKIPPED.isdisjoint(parts):
                found.add("/".join(parts) + ("/" if path.is_dir() else ""))
    return frozenset(found)


@cache
def modules() -> dict[str, Path]:
    """Every Python module of the repository by dotted name from its top (a package by its
    ``__init__``), the tests' support modules also by their own name."""
    names = {}
    for path in sorted(files()):
        if not path.endswith(".py"):
            continue
        parts = path.removesuffix(".py").split("/")
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = ROOT / path
    return names


@cache
def source(path: Path) -> str:
    return path.read_text(encoding="utf-8")


@cache
def parsed(path: Path) -> ast.Module:
    return ast.parse(source(path))


@cache
def definitions(path: Path) -> dict[str, set[str] | None]:
    """The names a module defines or imports at its top: a class with its members (what its
    body defines: methods, fields, constants), any other name with None (members unknown)."""
    found: dict[str, set[str] | None] = {}
    for node in parsed(path).body:
        for name in _names(node):
            found.setdefault(name, None)
        if isinstance(node, ast.ClassDef):
            found[node.name] = {n for inner in node.body for n in _names(inner)}
    return found


def _names(node: ast.stmt, imports: bool = True) -> list[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    if isinstance(node, (ast.Import, ast.ImportFrom)) and imports:
        return [(alias.asname or alias.name).split(".")[0] for alias in node.names]
    if isinstance(node, (ast.If, ast.Try)):  # TYPE_CHECKING blocks, optional imports
        return [n for inner in node.body for n in _names(inner, imports)]
    return []


_TOP_NAME = re.compile(r"^(?:class ([A-Z]\w*)|([A-Z]\w*)\s*[:=])", re.MULTILINE)


@cache
def capitalised() -> dict[str, list[Path]]:
    """Where the package and the tests define a capitalised name at a module's top (a class,
    an alias, a constant), found by a line that starts so; parsed only when one is asked for."""
    found: dict[str, list[Path]] = {}
    for module, path in modules().items():
        if module.startswith(("react_cli", "tests")):
            for names in _TOP_NAME.findall(source(path)):
                found.setdefault(names[0] or names[1], []).append(path)
    return found


def classes(name: str) -> list[set[str] | None]:
    """The members of each class (or other capitalised name) defined as ``name``."""
    places = capitalised().get(name, [])
    return [definitions(path)[name] for path in places if name in definitions(path)]


def has(members: set[str] | None, rest: list[str]) -> bool:
    """Whether ``rest`` (after a name whose members are ``members``) is there: the first part
    a member of a class; anything further, or after another name, an attribute this check
    cannot follow."""
    return not rest or members is None or rest[0] in members


def defines(path: Path | None, parts: list[str]) -> bool:
    if path is None or not parts:
        return path is not None
    found = definitions(path)
    return parts[0] in found and has(found[parts[0]], parts[1:])


def dotted_exists(dotted: str) -> bool:
    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        prefix = ".".join(parts[:end])
        places = [p for m, p in modules().items() if m == prefix or m.endswith(f".{prefix}")]
        if any(defines(path, parts[end:]) for path in places):
            return True
    if parts[0][0].isupper() and classes(parts[0]):
        return any(has(members, parts[1:]) for members in classes(parts[0]))
    if any(m.split(".")[-1] == parts[0] for m in modules()):
        return False  # ours, and the rest is not there
    return importlib.util.find_spec(parts[0]) is not None  # another package's (lxml.etree)


def path_exists(path: str, folder: str | None) -> bool:
    """A path from the top, from react_cli/ or tests/, or from the section's folder; a module
    path may end with one of its names (``methods/outcome.answer``)."""
    head, _, last = path.rstrip("/").rpartition("/")
    stem, dot, kind = last.rpartition(".")
    if dot and kind not in FILE_KINDS and not path.endswith("/"):
        module = f"{head}/{stem}" if head else stem
        return defines(_file(f"{module}.py", folder), [kind])
    return _file(path, folder) is not None or _file(f"{path}/", folder) is not None


def _file(path: str, folder: str | None) -> Path | None:
    bases = ["", "react_cli/", "tests/"]
    if folder:
        bases += [f"react_cli/{folder}", f"tests/{folder}"]
    for base in bases:
        if f"{base}{path}" in files():
            return ROOT / base / path
    return None


def problems(text: str) -> list[str]:
    """What the text names in backquotes that is not there, each with its line number."""
    wrong = []
    folder = None
    for number, line in enumerate(text.splitlines(), 1):
        if heading := _FOLDER.match(line):
            folder = heading.group(1)
        elif line.startswith("#"):
            folder = None
        for quoted in _QUOTED.findall(line):
            word = quoted.split("(")[0] if re.fullmatch(r"[\w.]+\(.*\)", quoted) else quoted
            if "/" in word and _PATH.fullmatch(word) and "://" not in word:
                ok = path_exists(word, folder)
            elif word.endswith(".py") and _PATH.fullmatch(word):  # in its folder's section
                ok = path_exists(word, folder) if folder else any(_named(f, word) for f in files())
            elif _DOTTED.fullmatch(word) and word.rpartition(".")[2] not in FILE_KINDS:
                ok = dotted_exists(word)  # (a file's name in prose, `summary.json`, is not)
            elif _CLASS.fullmatch(word):
                ok = bool(classes(word)) or hasattr(builtins, word)
            else:
                continue
            if not ok:
                wrong.append(f"line {number}: `{quoted}`")
    return wrong


def _named(path: str, name: str) -> bool:
    return path == name or path.endswith(f"/{name}")


def test_every_name_the_guide_gives_exists() -> None:
    wrong = problems(GUIDE.read_text(encoding="utf-8"))
    if wrong:
        pytest.fail("DEVELOPERS.md names what is not there:\n" + "\n".join(wrong), pytrace=False)


def test_a_name_that_is_gone_is_caught() -> None:
    good = (
        "`core/records.py`, `tests/support/inproc.py`, `loop/text/`, `session.open_session`,\n"
        "`methods/outcome.answer`, `Trace.write`, `ModelRequest`, `lxml.etree`, `ask --json`\n"
        "#### `loop/`\n- `agent.py`, `text/protocol.py`\n"
    )
    assert problems(good) == []
    gone = (
        "`wiring.run_config` `config.Settings` `core/wiring.py` `Trace.scribble` `NoSuchThing`\n"
        "`methods/outcome.nowhere` `llm.base.Nowhere` `loop/nothing/` `box.py` `summary.json`\n"
        "#### `core/`\n- `agent.py`\n"
    )
    found = problems(gone)
    assert len(found) == 10 and found[-1] == "line 4: `agent.py`", found
