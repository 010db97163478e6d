"""A ``@react_cli.tool`` function's arguments as the JSON Schema the model is told of, read
from its signature and its docstring, as simonw/llm reads a Python tool's.

An argument is ``str`` (or not annotated), ``int``, ``float``, ``bool`` or a ``Literal[...]``
of strings or of whole numbers (its allowed values), each maybe ``| None``; a default makes it
optional (and is said). Its description is its entry in the docstring's ``Args:`` section
(Google's style, also ``Arguments:`` and ``Parameters:``)::

    Args:
        unit: the unit to convert to.
        digits (int): digits after the point,
            at most 10.

What the model sends is converted and checked against the schema when it calls
(``tools.schema.checked``: ``"3"`` for an ``int`` is 3; a value that does not fit is an
observation the model can act on). Anything else is a ``SignatureError`` naming the argument,
when the file loads.
"""

from __future__ import annotations

import inspect
import json
import re
import types
from typing import Any, Literal, Union, get_args, get_origin

_TYPES: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}
_SECTION = re.compile(r"(?:Args|Arguments|Parameters)[ \t]*:[ \t]*")
_ENTRY = re.compile(
    r"\*{0,2}(?P<name>[A-Za-z_][A-Za-z0-9_]*)[ \t]*(?:\([^)\n]{0,200}\))?[ \t]*:(?P<said>.*)"
)
MAX_ARGUMENT_DESCRIPTION = 1000


class SignatureError(ValueError):
    """Why a function's argument cannot be declared, in words for its author."""


def property_schema(parameter: inspect.Parameter, description: str = "") -> dict[str, Any]:
    """The JSON Schema of one argument: its type (or allowed values), default and
    description; SignatureError for an annotation a model could not send."""
    annotation = str if parameter.annotation is parameter.empty else parameter.annotation
    optional, annotation = _without_none(annotation)
    prop = _typed(annotation, parameter.name)
    if parameter.default is not parameter.empty:
        default = parameter.default
        if not (default is None and optional) and not _fits(prop, default):
            kind = prop["type"]
            said = f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"
            raise SignatureError(
                f"argument {parameter.name}'s default {default!r:.60} is not {said}"
            )
        try:
            json.dumps(default)
        except (TypeError, ValueError):
            raise SignatureError(f"argument {parameter.name}'s default is not JSON") from None
        prop["default"] = default
    elif optional:
        raise SignatureError(f"argument {parameter.name} may be None: give it a default")
    if description:
        prop["description"] = description
    return prop


def _without_none(annotation: Any) -> tuple[bool, Any]:
    """(whether ``annotation`` allows None, the annotation without it)."""
    if get_origin(annotation) in (Union, types.UnionType):
        kept = [a for a in get_args(annotation) if a is not type(None)]
        if len(kept) == 1 and len(kept) < len(get_args(annotation)):
            return True, kept[0]
    return False, annotation


def _typed(annotation: Any, name: str) -> dict[str, Any]:
    if annotation in _TYPES:
        return {"type": _TYPES[annotation]}
    if get_origin(annotation) is Literal:
        values = list(get_args(annotation))
        if values and all(isinstance(v, str) for v in values):
            return {"type": "string", "enum": values}
        if values and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            return {"type": "integer", "enum": values}
        raise SignatureError(f"argument {name}'s Literal holds values of several kinds")
    shown = getattr(annotation, "__name__", None) or str(annotation)
    raise SignatureError(
        f"argument {name} is {shown[:60]}: a tool's arguments are str, int, float, bool or a "
        "Literal[...]"
    )


def _fits(prop: dict[str, Any], value: Any) -> bool:
    kind = prop["type"]
    if kind == "boolean" or isinstance(value, bool):
        return kind == "boolean" and isinstance(value, bool)
    allowed = prop.get("enum")
    if allowed is not None:
        return value in allowed
    python = {"string": (str,), "integer": (int,), "number": (int, float)}[kind]
    return isinstance(value, python)


def argument_descriptions(doc: str) -> dict[str, str]:
    """Each argument's description in the ``Args:`` section of a (cleaned) docstring, its
    lines joined; {} when it has none."""
    found: dict[str, str] = {}
    lines = doc.splitlines()
    starts = [n for n, line in enumerate(lines) if _SECTION.fullmatch(line.strip())]
    if not starts:
        return found
    section = _indent(lines[starts[0]])
    name, entry = None, None
    for line in lines[starts[0] + 1 :]:
        if not line.strip():
            continue
        indent = _indent(line)
        if indent <= section:
            break
        match = _ENTRY.fullmatch(line.strip())
        if match is not None and (entry is None or indent <= entry):
            entry, name = indent, match["name"]
            found[name] = match["said"].strip()
        elif name is not None:
            found[name] = f"{found[name]} {line.strip()}".strip()
    return {key: " ".join(said.split())[:MAX_ARGUMENT_DESCRIPTION] for key, said in found.items()}


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())
