"""Entry points of ``replay TRACE --format markdown|html [-o PATH]``: a trace as a document."""

from __future__ import annotations

import os
import tempfile
from enum import Enum
from pathlib import Path

from react_cli.errors import UsageError
from react_cli.share.html import trace_page
from react_cli.share.markdown import trace_markdown
from react_cli.share.view import load_view


class ExportFormat(str, Enum):
    """The document formats a trace can be exported to."""

    MARKDOWN = "markdown"
    HTML = "html"


def export_trace(path: Path, fmt: ExportFormat) -> str:
    """The trace at ``path`` as a Markdown or HTML document; TraceError if it cannot be read."""
    view = load_view(path)
    return trace_markdown(view) if fmt is ExportFormat.MARKDOWN else trace_page(view)


def write_output(path: Path, text: str) -> None:
    """Write an exported document (``-o PATH``) in one step; UsageError says why it cannot be."""
    try:
        if path.is_dir():
            raise IsADirectoryError(21, "is a directory")
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
