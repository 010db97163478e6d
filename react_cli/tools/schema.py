"""A tool's arguments as JSON: the JSON Schema a tool is declared with, and a check of what a
model sent against it.

A tool of one text argument (the paper's ``Search[entity]``) is declared as an object with that
one string property, required, and nothing else; a tool that takes more gives its own schema
(``ToolSpec.parameters``). The check covers what those schemas say: an object, its required
properties, no others unless the schema says ``"additionalProperties": true`` (stricter than
JSON Schema's default: an argument the tool does not know is the model's mistake, said back to
it), and each property's JSON type. A string
property given a number or a boolean takes it as its JSON text (small models write
``{"answer": 1994}``); anything else that does not fit is an :class:`ArgumentError` whose
message tells the model how to call the tool.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

MAX_SHOWN_NAME = 40  # of a name the model made up, quoted back to it
_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "number": (int, float),
    "integer": (int,),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}


class ArgumentError(ValueError):
    """Why a call's arguments do not fit its tool, in words the model can act on."""


def one_text_schema(argument: str) -> dict[str, Any]:
    """The schema of a tool of one text argument named ``argument``."""
    return {"type": "object", "properties": {argument: {"type": "string"}}, "required": [argument]}


def example(schema: Mapping[str, Any], *, every: bool = False) -> str:
    """The arguments of a call as the schema wants them: ``{"entity": "..."}`` (its required
    ones, or ``every`` one)."""
    properties = _properties(schema)
    names = properties if every else _required(schema) or properties
    shown = {name: _placeholder(properties[name]) for name in names if name in properties}
    return json.dumps(shown, ensure_ascii=False)


def checked(function: str, schema: Mapping[str, Any], arguments: Any) -> dict[str, Any]:
    """``arguments`` as the schema of tool ``function`` wants them (string properties given a
    number or a boolean hold its JSON text); ArgumentError saying what does not fit."""
    how = f"call {function} with {example(schema)}"
    if not isinstance(arguments, dict):
        raise ArgumentError(f"the arguments of {function} must be a JSON object: {how}")
    properties = _properties(schema)
    missing = [name for name in _required(schema) if name not in arguments]
    if missing:
        raise ArgumentError(f"{function} needs {_listed(missing)}: {how}")
    extra = [name for name in arguments if name not in properties]
    if extra and schema.get("additionalProperties") is not True:
        raise ArgumentError(f"{function} takes no {_listed(extra)}: {how}")
    fitted = dict(arguments)
    for name, value in arguments.items():
        wanted = properties.get(name, {}).get("type")
        if not isinstance(wanted, str) or wanted not in _TYPES:
            continue
        if _fits(wanted, value):
            continue
        if wanted == "string" and isinstance(value, (bool, int, float)):
            fitted[name] = json.dumps(value)
            continue
        raise ArgumentError(f"{function}'s {_quoted(name)} must be a {wanted}: {how}")
    return fitted


def _fits(wanted: str, value: Any) -> bool:
    if wanted in ("number", "integer") and isinstance(value, bool):
        return False
    return isinstance(value, _TYPES[wanted])


def _properties(schema: Mapping[str, Any]) -> dict[str, Any]:
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return {}
    return {
        str(name): value if isinstance(value, dict) else {} for name, value in properties.items()
    }


def _required(schema: Mapping[str, Any]) -> list[str]:
    required = schema.get("required")
    return [str(name) for name in required] if isinstance(required, list) else []


def _placeholder(prop: Mapping[str, Any]) -> Any:
    kind = prop.get("type")
    return {"number": 0, "integer": 0, "boolean": True, "array": [], "object": {}}.get(
        kind if isinstance(kind, str) else "", "..."
    )


def _quoted(name: str) -> str:
    shown = name if len(name) <= MAX_SHOWN_NAME else name[: MAX_SHOWN_NAME - 1] + "…"
    return json.dumps(shown, ensure_ascii=False)


def _listed(names: list[str]) -> str:
    shown = [_quoted(name) for name in names[:5]]
    return ", ".join(shown) + (" …" if len(names) > 5 else "")
