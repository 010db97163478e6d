"""``eval show DIR [--wrong]``: an eval's summary table again, and the questions it got wrong
(with the share of gold pages each found, where the dataset has gold evidence).

Everything is returned as rich renderables whose text is already cleaned and never read as
markup, for a console made by ``terminal.make_console``.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from react_cli.eval.view import methods_table, summary_table
from react_cli.share.evaldir import EvalFolder, ShownRow, load_eval
from react_cli.share.failures import failure_table, method_rows
from react_cli.share.text import brief


def show_eval(
    directory: Path, *, wrong: bool = False, method: str | None = None
) -> list[RenderableType]:
    """The summary table, the methods table when there is one, and with ``wrong`` the
    questions not answered right (question, gold, answer, stop reason) by ``method`` (default:
    the eval's first); UsageError if ``directory`` is no eval folder or never ran ``method``."""
    folder = load_eval(directory, method)
    parts: list[RenderableType] = [summary_table(folder.summary)]
    if folder.summary.methods:
        parts.append(methods_table(folder.summary))
    if folder.skipped:
        parts.append(Text(f"{folder.skipped} line(s) of results.jsonl skipped: not valid rows"))
    if folder.rows:
        parts.append(failure_table(method_rows(folder)))
    if wrong:
        parts.append(wrong_table(folder))
    return parts


def wrong_table(folder: EvalFolder) -> Table | Text:
    """Every question not answered right, in dataset order."""
    rows = [row for row in folder.rows if not row.correct]
    if not rows:
        return Text("no wrong answers")
    by = "" if folder.method is None else f" by {folder.method}"
    table = Table(title=f"wrong answers{by} ({len(rows)})", title_justify="left")
    evidence = any(row.evidence is not None for row in folder.rows)
    headers = (
        "#",
        "question",
        "gold",
        "answer",
        "stop reason",
        "failure mode",
        *(("pages",) if evidence else ()),
    )
    for header in headers:
        right = header in ("#", "pages")
        table.add_column(header, justify="right" if right else "left", overflow="fold")
    for row in rows:
        answer = row.answer if row.answer is not None else "—"
        why = row.mode.label if row.failure is None else f"{row.mode.label}: {row.failure.rule}"
        texts = (row.question, row.gold, answer, row.outcome, why)
        pages = [pages_found(row)] if evidence else []
        table.add_row(str(row.index), *(Text(brief(text)) for text in texts), *pages)
    return table


def pages_found(row: ShownRow) -> str:
    """A row's page recall, as the share of gold pages the run found (— without evidence)."""
    return "—" if row.evidence is None else f"{row.evidence.page_recall:.2f}"
