"""react-cli: answer questions with the ReAct method (Yao et al., 2022) from the terminal.

``from react_cli import tool`` is all a file of tools needs (``--tools-from FILE.py``, or a
package's ``react_cli.tools`` entry point), and importing it imports nothing else of react-cli:
the decorator only marks a function; ``react_cli.tools.functions`` reads the marks (and checks
the function) when a run loads the file.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, overload

__version__ = "0.1.0"

TOOL_MARK = "__react_cli_tool__"
"""The attribute ``@tool`` sets on a function: ``{"name": ..., "description": ...,
"needs_consent": ..., "max_result_chars": ...}``, name, description and limit None unless given
(then the function's name and docstring say them, and ``max_observation_chars`` the limit)."""

MIN_RESULT_CHARS = 50  # a tool's own limit: the bounds of max_observation_chars
MAX_RESULT_CHARS = 1_000_000

F = TypeVar("F", bound=Callable[..., Any])


@overload
def tool(function: F, /) -> F: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    needs_consent: bool = False,
    max_result_chars: int | None = None,
) -> Callable[[F], F]: ...


def tool(
    function: F | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    needs_consent: bool = False,
    max_result_chars: int | None = None,
) -> F | Callable[[F], F]:
    """Make ``function`` a tool the model may call: its name (``Calculate[...]``, any case),
    its docstring (what the model is told it does, each argument's description in its
    ``Args:`` section) and its arguments (``str``, ``int``, ``float``, ``bool`` or
    ``Literal[...]``, with their defaults: their JSON Schema) declare it; it returns text.
    ``@tool(name=..., description=...)`` says either differently; ``@tool(needs_consent=True)``
    marks a tool with side effects (it writes, deletes, sends): each call then runs only when
    the user allows it (asked on a terminal, ``--allow-tool``; refused otherwise);
    ``@tool(max_result_chars=N)`` cuts its results at N characters rather than at
    ``max_observation_chars``. The function itself is returned unchanged, so it can still be
    called (and tested) as it is::

        from react_cli import tool

        @tool
        def calculate(expression: str) -> str:
            \"\"\"Evaluate an arithmetic expression, e.g. 2 * (3 + 4).\"\"\"
    """
    if not isinstance(needs_consent, bool):
        raise TypeError(f"@tool(needs_consent=...) is True or False, not {needs_consent!r:.60}")
    if max_result_chars is not None and (
        isinstance(max_result_chars, bool)
        or not isinstance(max_result_chars, int)
        or not MIN_RESULT_CHARS <= max_result_chars <= MAX_RESULT_CHARS
    ):
        raise TypeError(
            f"@tool(max_result_chars=...) is a whole number from {MIN_RESULT_CHARS} to "
            f"{MAX_RESULT_CHARS:,}, not {max_result_chars!r:.60}"
        )

    def mark(target: F) -> F:
        if not callable(target):
            raise TypeError(f"@tool makes a tool of a function, not of {type(target).__name__}")
        marks = {
            "name": name,
            "description": description,
            "needs_consent": needs_consent,
            "max_result_chars": max_result_chars,
        }
        setattr(target, TOOL_MARK, marks)
        return target

    return mark if function is None else mark(function)
