"""What a tool that is not Wikipedia's shows the model: its result, lines kept, cut with a note.

A Python function's or an MCP server's text is untrusted, of any size, and may hold a secret
(an ``env`` tool, a server echoing its command line): every secret the run knows is masked by
the run's redactor, escape sequences and control characters are removed (line breaks and tabs
kept: a file read or a diff keeps its lines, so the model can quote them exactly), and it is
cut at its tool's limit (``max_result_chars`` of its server or ``@tool``, else
``max_observation_chars``), the cut said on a line of its own: ``… [12,345 more characters]``
(:func:`shown_result`). Each protocol shows the lines its own way (the text protocol indents
them under their ``Observation k:``, so none begins like a label). Only a bounded head of the
text is ever read, so 10 MB costs no more than 10 kB. A failure (the function raised, the
server said ``isError``, crashed or did not answer in time) is an observation of one line
(:func:`observed`, Wikipedia's rules: :func:`~react_cli.tools.wikipedia.cap`), saying what
happened in words the model can act on, never a traceback.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from react_cli.infra.deadline import Deadline
from react_cli.infra.redaction import Redactor
from react_cli.infra.untrusted import plain
from react_cli.tools.base import ToolResult, ToolSpec
from react_cli.tools.schema import ArgumentError
from react_cli.tools.wikipedia import cap

CUT = " …"
READ_FACTOR = 4  # of max_observation_chars: the head read (white space collapses)
READ_SLACK = 1024


def observed(text: str, limit: int, redact: Redactor) -> str:
    """``text`` as the model is shown it: every secret the run knows masked, cleaned, on one
    line, cut at ``limit`` characters (a cut ends with `` …``). The head read is redacted
    before it is cleaned (a secret as written) and after (one a control character split),
    and ends before any secret it cuts."""
    size = limit * READ_FACTOR + READ_SLACK
    shown = cap(redact(plain(redacted_head(text, size, redact))), limit)
    if len(text) > size and not shown.endswith(CUT):  # cut before the cap could see it
        shown = cap(shown + CUT, limit) if shown else CUT.strip()
    return shown


_LINE_BREAK = re.compile(r"\r\n?|[\v\f\x1c-\x1e\x85\u2028\u2029]")
_BLANK_START = re.compile(r"(?:[ \t]*\n)+")
LINE_CUT_WINDOW = 4  # a cut ends at a line break within the last quarter of the limit


def shown_result(text: str, limit: int, redact: Redactor) -> str:
    """A tool's result as the model is shown it: every secret the run knows masked, cleaned,
    its line breaks kept (any line ending made ``\n``; blank lines at its start and white
    space at its end dropped), at most ``limit`` characters of it, then, when it was cut,
    ``… [12,345 more characters]`` on a line of its own (the count of the result as the tool
    returned it). Redacted as :func:`observed` is."""
    size = limit * READ_FACTOR + READ_SLACK
    head = redacted_head(text, size, redact)
    cleaned = redact(plain(_LINE_BREAK.sub("\n", head)))
    start = _BLANK_START.match(cleaned)
    shown = cleaned[start.end() if start else 0 :].rstrip()
    if len(shown) <= limit and len(text) <= size:
        return shown
    kept = _cut(shown, limit)
    more = max(1, len(text) - len(kept))
    return f"{kept}\n… [{more:,} more characters]" if kept else f"… [{more:,} more characters]"


def _cut(text: str, limit: int) -> str:
    """``text``'s first ``limit`` characters at most, ending at a line break when one is near
    the end, else at a space when one is, else where the limit falls."""
    head = text[:limit]
    line = head.rfind("\n")
    if line >= limit - limit // LINE_CUT_WINDOW:
        return head[:line].rstrip()
    space = head.rfind(" ")
    return (head[:space] if space >= limit - limit // LINE_CUT_WINDOW else head).rstrip()


def redacted_head(text: str, size: int, redact: Redactor) -> str:
    """At most ``size`` characters of ``text``'s start, redacted, ending before a secret the
    cut would split (a head read of 10 MB costs no more than of ``size``)."""
    return redact(text) if len(text) <= size else redact.settle(text[:size])[0]


class ToolFailure(Exception):
    """Why a call got no answer (it raised, the server refused, stopped or was silent), in
    words for the model; ``details`` for its result (``UNAVAILABLE``)."""

    def __init__(self, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.details = details or {}


Run = Callable[[dict[str, Any], float], str]
"""A tool's own work: its arguments and the seconds it has, to its text (or ToolFailure)."""


def answer(
    spec: ToolSpec,
    argument: str,
    deadline: Deadline,
    timeout_s: float,
    limit: int,
    run: Run,
    redact: Redactor,
) -> ToolResult:
    """The result of calling ``spec``'s tool with ``argument``: ``run`` given its arguments
    (read against its schema) and at most ``timeout_s`` (within ``deadline``), its text shown
    under the rules above (cut at ``limit``, the tool's); arguments that do not fit and a
    ToolFailure said as failures. Every text passes ``redact``, the run's redactor, before
    the model, the trace or anyone sees it."""
    try:
        arguments = spec.arguments(argument)
        text = run(arguments, deadline.bound(timeout_s))
    except ArgumentError as exc:
        return failed(spec.name, str(exc), limit, redact)
    except ToolFailure as exc:
        return failed(spec.name, str(exc), limit, redact, exc.details)
    return ToolResult(shown_result(text, limit, redact) or f"{spec.name} returned nothing.")


def failed(
    name: str,
    reason: str,
    limit: int,
    redact: Redactor,
    details: dict[str, Any] | None = None,
) -> ToolResult:
    """The result of a call of ``name`` that failed for ``reason`` (text from outside: it is
    redacted, cleaned and cut like any output): the model is told, the step records the
    error."""
    said = observed(reason, limit, redact)
    return ToolResult(observed(f"{name} failed: {said}", limit, redact), dict(details or {}), said)
