"""Tools from Python functions: ``@react_cli.tool`` functions of a user's file
(``--tools-from FILE.py``) or of installed packages (the ``react_cli.tools`` entry points).

A function is declared by its name, its docstring and its arguments (``str``, ``int``,
``float``, ``bool``, ``Literal[...]``, with their defaults and the docstring's ``Args:``
descriptions: ``tools.signature``): one text argument is the paper's ``Name[argument]``; any
other is a JSON object, in the brackets or as a native call's arguments, whose schema the
signature gives, and what the model sends is converted and checked against it. Each is
checked when its file loads, so a mistake is one ``Error:`` line before the run, never a
failure inside it.

A call runs the function on a thread of its own, for at most ``tool_timeout_s`` (and never past
the run's deadline); what it returns is shown under Wikipedia's rules (``tools.output``), and
what it raises is an observation naming the exception, never a traceback; both with every
secret the run knows masked (a function reads the environment and files react-cli does).
Python cannot stop a function that overruns: its thread (a daemon) is left to finish on its
own, its result dropped. What a call prints, reads and does to the working directory is kept
from react-cli's (``tools.contained``): its output is the result's ``printed`` (redacted too),
the folder put back after it.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import inspect
import os
import re
import sys
import threading
import types
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from react_cli import TOOL_MARK
from react_cli.core.errors import UsageError
from react_cli.core.wording import quoted
from react_cli.infra.deadline import Deadline
from react_cli.infra.redaction import Redactor
from react_cli.infra.untrusted import BadInput, read_bytes
from react_cli.tools.base import ToolResult, ToolSpec
from react_cli.tools.contained import Printed, loading, own_thread, running
from react_cli.tools.origin import OriginKind, ToolOrigin
from react_cli.tools.output import ToolFailure, answer
from react_cli.tools.signature import SignatureError, argument_descriptions, property_schema

ENTRY_POINTS = "react_cli.tools"
_FOUND: dict[tuple[tuple[str, int | None], ...], tuple[importlib.metadata.EntryPoint, ...]] = {}
MAX_FILE_BYTES = 16 << 20
MAX_DESCRIPTION_CHARS = 1000
TOOL_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.-]{0,63}")
"""A tool's name: what the text protocol can read (``Name[``) and a native call can carry."""


@dataclass(frozen=True)
class FunctionTool:
    """A ``@tool`` function as a tool (stateless on react-cli's side: one serves every run);
    ``folder``: the working directory every call leaves behind it (the command's)."""

    spec: ToolSpec
    function: Callable[..., Any]
    timeout_s: float
    max_chars: int
    redactor: Redactor  # the run's: a function may read the secrets react-cli holds
    folder: str

    def call(self, argument: str, *, deadline: Deadline) -> ToolResult:
        printed = Printed()

        def run(arguments: dict[str, Any], timeout_s: float) -> str:
            return self._run(arguments, timeout_s, printed)

        with running(printed, self.folder):
            result = answer(
                self.spec, argument, deadline, self.timeout_s, self.max_chars, run, self.redactor
            )
        result.printed = self.redactor(printed.text())
        return result

    def _run(self, arguments: dict[str, Any], timeout_s: float, printed: Printed) -> str:
        """The function's text, run on a thread of its own for at most ``timeout_s``."""
        done: Future[str | _Raised] = Future()

        def run() -> None:
            with own_thread(printed, self.folder):
                try:
                    value = self.function(**arguments)
                    done.set_result(
                        "" if value is None else value if isinstance(value, str) else str(value)
                    )
                except BaseException as exc:  # even SystemExit: a tool's failure is its result
                    done.set_result(_Raised(exc))

        threading.Thread(target=run, name=f"tool-{self.spec.name}", daemon=True).start()
        try:
            value = done.result(timeout_s)  # Ctrl-C here stops the run (the thread is left)
        except TimeoutError:
            raise ToolFailure(f"no answer within {timeout_s:.3g} s") from None
        if isinstance(value, _Raised):
            raise ToolFailure(_exception(value.exception))
        return value


@dataclass(frozen=True)
class _Raised:
    exception: BaseException


def _exception(exc: BaseException) -> str:
    said = str(exc)
    return f"{type(exc).__name__}: {said}" if said else type(exc).__name__


@dataclass(frozen=True)
class Declared:
    """A function's declaration, as ``@tool`` and its signature give it."""

    spec: ToolSpec
    function: Callable[..., Any]
    max_result_chars: int | None = None  # @tool(max_result_chars=...): its own limit

    def tool(self, timeout_s: float, max_chars: int, redactor: Redactor) -> FunctionTool:
        """The tool, its results cut at its own limit, else ``max_chars``."""
        limit = self.max_result_chars or max_chars
        return FunctionTool(self.spec, self.function, timeout_s, limit, redactor, os.getcwd())


def declare(function: Callable[..., Any], origin: ToolOrigin, where: str) -> Declared:
    """The declaration of a ``@tool`` function; UsageError (naming ``where`` it is) for one
    the model could not call: no docstring, no argument, or one of a type it cannot send."""
    mark = getattr(function, TOOL_MARK, None) or {}
    given = mark.get("name")
    raw = getattr(function, "__name__", "") or ""
    name = given if isinstance(given, str) else raw[:1].upper() + raw[1:]
    if not TOOL_NAME.fullmatch(name):
        raise UsageError(
            f"{where}: the tool name {quoted(name)} is not a letter followed by letters, digits, "
            "'_', '.' or '-' (64 at most)"
        )
    description = mark.get("description") or inspect.getdoc(function) or ""
    description = " ".join(description.split("\n\n")[0].split())[:MAX_DESCRIPTION_CHARS]
    if not description:
        raise UsageError(
            f"{where}: {raw or name} has no docstring: it tells the model what it does"
        )
    try:
        signature = inspect.signature(function, eval_str=True)
    except (NameError, TypeError, ValueError, SyntaxError) as exc:
        raise UsageError(f"{where}: {raw}'s signature cannot be read: {exc}") from None
    arguments = list(signature.parameters.values())
    if not arguments:
        raise UsageError(f"{where}: {raw} takes no argument: a tool takes at least one (text)")
    said = argument_descriptions(inspect.getdoc(function) or "")
    properties: dict[str, Any] = {}
    for parameter in arguments:
        if parameter.kind in (
            parameter.VAR_POSITIONAL,
            parameter.VAR_KEYWORD,
            parameter.POSITIONAL_ONLY,
        ):
            raise UsageError(
                f"{where}: {raw}'s argument {parameter.name} must be a named one (not *, ** or /)"
            )
        try:
            properties[parameter.name] = property_schema(parameter, said.get(parameter.name, ""))
        except SignatureError as exc:
            raise UsageError(f"{where}: {raw}'s {exc}") from None
    consent = mark.get("needs_consent") not in (None, False)  # a hand-made mark: in doubt, ask
    limit = mark.get("max_result_chars")
    limit = limit if isinstance(limit, int) and not isinstance(limit, bool) else None
    (first, prop), *others = properties.items()
    if not others and prop.get("type") == "string" and set(prop) <= {"type", "description"}:
        spec = ToolSpec(name, first, description, None, origin, consent)  # Name[argument]
    else:
        required = [p.name for p in arguments if p.default is p.empty]
        schema = {"type": "object", "properties": properties, "required": required}
        spec = ToolSpec(name, ", ".join(properties), description, schema, origin, consent)
    return Declared(spec, function, limit)


def marked(namespace: Iterable[Any]) -> list[Callable[..., Any]]:
    """The ``@tool`` functions among ``namespace``'s values, in order, each once."""
    found: dict[int, Callable[..., Any]] = {}
    for value in namespace:
        if callable(value) and isinstance(getattr(value, TOOL_MARK, None), dict):
            found.setdefault(id(value), value)
    return list(found.values())


def file_tools(path_text: str) -> list[Declared]:
    """The tools the Python file ``path_text`` defines (``--tools-from``), its text run once
    as a module of its own; UsageError naming the file for one that cannot be read, does
    not run, or defines no tool."""
    path = Path(path_text).expanduser()
    where = f"--tools-from {path}"
    source = _source(path)
    digest = hashlib.sha256(source).hexdigest()
    name = f"react_cli_tools_file_{digest[:16]}"
    module = types.ModuleType(name)
    module.__file__ = str(path)
    try:
        code = compile(source, str(path), "exec", dont_inherit=True)
        sys.modules[name] = module  # dataclasses and pickling look a module up by its name
        with loading(os.getcwd()):  # what it prints is dropped, its chdir undone
            exec(code, module.__dict__)
    except SyntaxError as exc:
        sys.modules.pop(name, None)
        raise UsageError(f"{where}: line {exc.lineno}: {exc.msg}") from None
    except KeyboardInterrupt:
        sys.modules.pop(name, None)
        raise
    except BaseException as exc:
        sys.modules.pop(name, None)
        raise UsageError(f"{where}: running it failed: {_exception(exc)}") from None
    origin = ToolOrigin(OriginKind.FILE, path=str(path), sha256=digest)
    found = [declare(f, origin, where) for f in marked(vars(module).values())]
    if not found:
        raise UsageError(f"{where}: it defines no tool (decorate a function with @react_cli.tool)")
    return found


def file_digest(path_text: str) -> str:
    """The SHA-256 of a ``--tools-from`` file's text, as its tools' origin records it (the
    file is read, never run); UsageError naming the file for one that cannot be read."""
    return hashlib.sha256(_source(Path(path_text).expanduser())).hexdigest()


def _source(path: Path) -> bytes:
    where = f"--tools-from {path}"
    try:
        return read_bytes(path, MAX_FILE_BYTES)
    except FileNotFoundError:
        raise UsageError(f"{where}: no such file") from None
    except (OSError, BadInput) as exc:
        raise UsageError(f"{where}: {getattr(exc, 'strerror', None) or exc}") from None


def package_tools() -> list[Declared]:
    """The tools of installed packages' ``react_cli.tools`` entry points (each names a module
    of ``@tool`` functions, or one); UsageError naming the entry point and its package for one
    that does not load."""
    found: list[Declared] = []
    for entry in _entry_points():
        dist = entry.dist
        package = dist.name if dist is not None else None
        version = dist.version if dist is not None else None
        where = f"entry point {entry.name} ({ENTRY_POINTS}) of package {package or '?'}"
        try:
            with loading(os.getcwd()):
                loaded = entry.load()
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            raise UsageError(f"{where}: loading it failed: {_exception(exc)}") from None
        values = vars(loaded).values() if isinstance(loaded, types.ModuleType) else [loaded]
        functions = marked(values)
        if not functions:
            raise UsageError(f"{where}: it names no @react_cli.tool function")
        origin = ToolOrigin(
            OriginKind.PACKAGE, package=package, version=version, entry_point=entry.name
        )
        found += [declare(f, origin, where) for f in functions]
    return found


def _entry_points() -> tuple[importlib.metadata.EntryPoint, ...]:
    """The ``react_cli.tools`` entry points of the installed packages, looked up once for one
    set of package folders: finding them reads every installed package's metadata (a few ms
    for each command in a large environment, every in-process run of the tests), and a
    package installed or removed since changes its folder, which is looked up again."""
    key = tuple((entry, _modified(entry)) for entry in sys.path)
    found = _FOUND.get(key)
    if found is None:
        found = tuple(importlib.metadata.entry_points(group=ENTRY_POINTS))
        _FOUND.clear()
        _FOUND[key] = found
    return found


def _modified(folder: str) -> int | None:
    try:
        return os.stat(folder or ".").st_mtime_ns
    except OSError:
        return None
