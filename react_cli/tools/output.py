"""What a tool that is not Wikipedia's shows the model: its output under Wikipedia's rules.

A Python function's or an MCP server's text is untrusted and of any size: escape sequences and
control characters are removed, it is put on one line and cut at ``max_observation_chars``
with Wikipedia's own :func:`~react_cli.tools.wikipedia.cap` (a cut shows as `` …``). Only a
bounded head of the text is ever read, so 10 MB costs no more than 10 kB. A failure (the
function raised, the server said ``isError``, crashed or did not answer in time) is an
observation too, saying what happened in words the model can act on, never a traceback.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from react_cli.infra.deadline import Deadline
from react_cli.infra.untrusted import plain
from react_cli.tools.base import ToolResult, ToolSpec
from react_cli.tools.schema import ArgumentError
from react_cli.tools.wikipedia import cap

CUT = " …"
READ_FACTOR = 4  # of max_observation_chars: the head read (white space collapses)
READ_SLACK = 1024


def observed(text: str, limit: int) -> str:
    """``text`` as the model is shown it: cleaned, on one line, cut at ``limit`` characters
    (a cut ends with `` …``)."""
    head = text[: limit * READ_FACTOR + READ_SLACK]
    shown = cap(plain(head), limit)
    if len(head) < len(text) and not shown.endswith(CUT):  # cut before the cap could see it
        shown = cap(shown + CUT, limit) if shown else CUT.strip()
    return shown


class ToolFailure(Exception):
    """Why a call got no answer (it raised, the server refused, stopped or was silent), in
    words for the model."""


Run = Callable[[dict[str, Any], float], str]
"""A tool's own work: its arguments and the seconds it has, to its text (or ToolFailure)."""


def answer(
    spec: ToolSpec, argument: str, deadline: Deadline, timeout_s: float, limit: int, run: Run
) -> ToolResult:
    """The result of calling ``spec``'s tool with ``argument``: ``run`` given its arguments
    (read against its schema) and at most ``timeout_s`` (within ``deadline``), its text shown
    under the rules above; arguments that do not fit and a ToolFailure said as failures."""
    try:
        arguments = spec.arguments(argument)
        text = run(arguments, deadline.bound(timeout_s))
    except (ArgumentError, ToolFailure) as exc:
        return failed(spec.name, str(exc), limit)
    return ToolResult(observed(text, limit) or f"{spec.name} returned nothing.")


def failed(name: str, reason: str, limit: int) -> ToolResult:
    """The result of a call of ``name`` that failed for ``reason`` (text from outside: it is
    cleaned and cut like any output): the model is told, the step records the error."""
    said = observed(reason, limit)
    return ToolResult(observed(f"{name} failed: {said}", limit), error=said)
