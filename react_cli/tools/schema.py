"""A tool's arguments as JSON: the JSON Schema a tool is declared with, and a check of what a
model sent against it.

A tool of one text argument (the paper's ``Search[entity]``) is declared as an object with that
one string property, required, and nothing else; a tool that takes more gives its own schema
(``ToolSpec.parameters``). The check covers what those schemas say: an object, its required
properties, no others unless the schema says ``"additionalProperties": true`` (stricter than
JSON Schema's default: an argument the tool does not know is the model's mistake, said back to
it), and each property's JSON type and allowed values (``enum``). A value of another type is
converted where it says one plainly (small models write ``{"answer": 1994}`` and
``{"count": "3"}``): a string property takes a number's or a boolean's JSON text, a number,
integer or boolean property the string of one, an integer property a whole float; anything
else that does not fit is an :class:`ArgumentError` whose message tells the model how to call
the tool. :func:`parameter_notes` says each parameter as the text protocol lists it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from react_cli.infra.untrusted import plain

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
        prop = properties.get(name, {})
        wanted = prop.get("type")
        if isinstance(wanted, str) and wanted in _TYPES and not _fits(wanted, value):
            converted = _converted(wanted, value)
            if converted is _UNFIT:
                kind = f"an {wanted}" if wanted[0] in "aeiou" else f"a {wanted}"
                raise ArgumentError(f"{function}'s {_quoted(name)} must be {kind}: {how}")
            fitted[name] = value = converted
        allowed = prop.get("enum")
        if isinstance(allowed, list) and allowed and not any(_same(value, a) for a in allowed):
            shown = _choices(allowed)
            raise ArgumentError(f"{function}'s {_quoted(name)} must be {shown}: {how}")
    return fitted


_UNFIT = object()
_BOOLEANS = {"true": True, "false": False}


def _converted(wanted: str, value: Any) -> Any:
    """``value`` as a ``wanted`` JSON type when it is one written otherwise (small models
    write ``{"count": "3"}`` and ``{"answer": 1994}``), else ``_UNFIT``: a string property
    takes a number's or a boolean's JSON text; a number, an integer or a boolean property
    the string of one (``"3"``, ``"2.5"``, ``"true"``); an integer property a whole float."""
    if wanted == "string" and isinstance(value, (bool, int, float)):
        return json.dumps(value)
    if isinstance(value, str) and wanted in ("number", "integer", "boolean"):
        text = value.strip()
        if wanted == "boolean":
            return _BOOLEANS.get(text.lower(), _UNFIT)
        if len(text) > MAX_NUMBER_CHARS:
            return _UNFIT
        try:
            number = json.loads(text)
        except ValueError:
            return _UNFIT
        value = number
        finite = isinstance(number, int) or (isinstance(number, float) and math.isfinite(number))
        if finite and not isinstance(number, bool) and wanted == "number":
            return number
    if wanted == "integer" and isinstance(value, float) and value.is_integer():
        return int(value)
    if wanted == "integer" and isinstance(value, int) and not isinstance(value, bool):
        return value
    return _UNFIT


MAX_NUMBER_CHARS = 40  # of a number written as a string


def _same(value: Any, allowed: Any) -> bool:
    """Whether ``value`` is the enum's ``allowed`` value (``True`` is not ``1``)."""
    if isinstance(value, bool) or isinstance(allowed, bool):
        return type(value) is type(allowed) and value == allowed
    return bool(value == allowed)


def _choices(allowed: list[Any]) -> str:
    shown = [_value(a) for a in allowed[:MAX_CHOICES]]
    more = " …" if len(allowed) > MAX_CHOICES else ""
    return ("one of " + ", ".join(shown) + more) if len(allowed) > 1 else shown[0]


MAX_CHOICES = 12  # of an enum, listed
MAX_PARAMETER_CHARS = 300  # of a parameter's description, in the text protocol's listing
MAX_PARAMETER_READ = 4 * MAX_PARAMETER_CHARS


def parameter_notes(schema: Mapping[str, Any]) -> str:
    """Each parameter of ``schema`` as the text protocol lists it, compactly, on one line:
    ``unit (one of "km", "mi"): the unit to convert to; digits (integer, optional, default
    2): ...`` (its name, type or allowed values, whether it is optional and its default, and
    its description, cleaned and cut); "" for a schema whose parameters say nothing more than
    the call's skeleton does (every one a required string without a description)."""
    properties = _properties(schema)
    required = set(_required(schema))
    notes, telling = [], False
    for name, prop in list(properties.items())[:MAX_PARAMETERS]:
        facts = [_kind(prop)]
        if name not in required:
            facts.append("optional")
            if "default" in prop:
                facts.append("default " + _value(prop["default"]))
        said = " ".join(plain(str(prop.get("description") or "")[:MAX_PARAMETER_READ]).split())
        said = said if len(said) <= MAX_PARAMETER_CHARS else said[: MAX_PARAMETER_CHARS - 1] + "…"
        said = said[:-1] if said.endswith(".") and not said.endswith("..") else said
        telling = telling or bool(said) or facts != ["string"]
        notes.append(f"{_name(name)} ({', '.join(facts)})" + (f": {said}" if said else ""))
    if len(properties) > MAX_PARAMETERS:
        notes.append(f"and {len(properties) - MAX_PARAMETERS} more")
    return "; ".join(notes) if telling else ""


MAX_PARAMETERS = 20  # listed of a tool's


def _name(name: str) -> str:
    cleaned = " ".join(plain(name[: 4 * MAX_SHOWN_NAME]).split())
    return cleaned if len(cleaned) <= MAX_SHOWN_NAME else cleaned[: MAX_SHOWN_NAME - 1] + "…"


def _value(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return "?"
    text = " ".join(plain(text[: 4 * MAX_SHOWN_NAME]).split())
    return text if len(text) <= MAX_SHOWN_NAME else text[: MAX_SHOWN_NAME - 1] + "…"


def _kind(prop: Mapping[str, Any]) -> str:
    """A property's type as a listing says it: ``integer``, ``one of "a", "b"``, ``string or
    null``'s ``string``, ``array of string``; ``any`` when the schema does not say."""
    allowed = prop.get("enum")
    if isinstance(allowed, list) and allowed:
        return " ".join(_choices(allowed).split())
    if "const" in prop:
        return _value(prop["const"])
    kinds = _types(prop)
    if not kinds:
        for key in ("anyOf", "oneOf"):
            options = prop.get(key)
            if isinstance(options, list):
                kinds = [k for o in options[:MAX_CHOICES] if isinstance(o, dict) for k in _types(o)]
    kinds = [k for k in dict.fromkeys(kinds) if k != "null"] or kinds
    if kinds == ["array"] and isinstance(prop.get("items"), dict):
        inner = _types(prop["items"])
        return f"array of {inner[0]}" if len(inner) == 1 else "array"
    return " or ".join(kinds[:4]) or "any"


def _types(prop: Mapping[str, Any]) -> list[str]:
    kind = prop.get("type")
    if isinstance(kind, str):
        return [kind] if kind in _TYPES or kind == "null" else []
    if isinstance(kind, list):
        return [k for k in kind if isinstance(k, str) and (k in _TYPES or k == "null")]
    return []


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
    if prop.get("default") not in (None, ""):  # what it is when the call leaves it out
        return prop["default"]
    allowed = prop.get("enum")
    if isinstance(allowed, list) and allowed:  # the first allowed value, as a call writes it
        return allowed[0]
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
