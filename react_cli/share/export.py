"""Entry points of ``replay TRACE --format markdown|html [-o PATH]``: a trace as a document."""

from __future__ import annotations

from enum import Enum
from pathlib import Path

from react_cli.core.errors import UsageError
from react_cli.infra.files import write_atomic
from react_cli.share.html import trace_page
from react_cli.share.markdown import trace_markdown
from react_cli.share.view import load_view
from react_cli.traces.trace import trace_target


class ExportFormat(str, Enum):
    """The document formats a trace can be exported to."""

    MARKDOWN = "markdown"
    HTML = "html"


def export_trace(path: Path, fmt: ExportFormat) -> str:
    """The trace at ``path`` as a Markdown or HTML document; TraceError if it cannot be read."""
    view = load_view(path)
    return trace_markdown(view) if fmt is ExportFormat.MARKDOWN else trace_page(view)


def write_output(path: Path, text: str) -> None:
    """Write an exported document (``-o PATH``) in one step, with the policy of ``--trace``
    (a FIFO or a device is never replaced); UsageError says why it cannot be written."""
    try:
        write_atomic(trace_target(path), text)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
