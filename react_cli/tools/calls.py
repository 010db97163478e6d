"""A call's arguments as its tool's schema names them, for what shows a run (spans, exports).

A one-argument tool's call carries its text (``Search[Kiss and Tell]``: ``{"entity": ...}``); a
tool of several carries the JSON object's text, which a view must not show as one made-up key
(``"a, b"``) holding a string of JSON. A native call keeps the object the model sent.
"""

from __future__ import annotations

from typing import Any

from react_cli.core.records import ToolCall
from react_cli.tools.base import ToolSpec
from react_cli.tools.schema import ArgumentError

UNKNOWN_TOOL_ARGUMENT = "argument"
"""The key of a call's text when its tool is not known (a trace from another tool set)."""


def call_arguments(call: ToolCall, spec: ToolSpec | None) -> dict[str, Any]:
    """``call``'s arguments by name: the object a native call sent, else its text read by
    ``spec`` (a JSON object for a tool of several arguments); text that does not fit stays text
    under the one argument's name (or ``argument``)."""
    if call.arguments is not None:
        return dict(call.arguments)
    if spec is None:
        return {UNKNOWN_TOOL_ARGUMENT: call.argument}
    try:
        return spec.arguments(call.argument)
    except ArgumentError:
        key = spec.argument if spec.parameters is None else UNKNOWN_TOOL_ARGUMENT
        return {key: call.argument}
