"""What a matrix eval shows on stderr while it runs: one display for every cell, a line for
the whole matrix (questions and cells done, the time left) and one per cell (its questions
done and its score so far).

The cells run on threads of their own and report from them; rich's progress display takes
updates from any thread (it holds a lock), the counts of the whole are kept under one lock
here. Dataset text never appears, only numbers and the cells' labels (model names as plain
text on one line).
"""

from __future__ import annotations

import threading

from rich.console import Console
from rich.progress import Progress, TaskID, TextColumn
from rich.text import Text

from react_cli.core.records import RetryWait
from react_cli.display.terminal import plain
from react_cli.eval.events import EvalObserver
from react_cli.eval.matrix.record import Cell, MatrixObserver
from react_cli.eval.rows import Row
from react_cli.eval.summary import Summary
from react_cli.eval.view import progress_columns, score_text


class MatrixProgress(MatrixObserver):
    """The matrix's progress display on ``console`` (stderr)."""

    def __init__(self, console: Console, cells: tuple[Cell, ...]) -> None:
        self.console = console
        label = TextColumn("{task.description}", markup=False)
        self.progress = Progress(*progress_columns(label), console=console, transient=False)
        self._lock = threading.Lock()
        self._cells = cells
        self._done_cells: set[int] = set()
        self._started = 0
        self.whole = self.progress.add_task("matrix", total=None, scores="")
        self._tasks: list[TaskID] = [
            self.progress.add_task(_label(cell), total=None, scores="") for cell in cells
        ]

    def retry_waiting(self, wait: RetryWait) -> None:
        """A retry wait (from any cell's thread), above the display, dimmed."""
        self.console.print(Text(plain(str(wait)), style="dim"))

    def note(self, message: str) -> None:
        self.console.print(Text(f"note: {' '.join(plain(message).split())}", style="dim"))

    def cell(self, index: int) -> EvalObserver:
        return _CellProgress(self, index)

    def started(self, index: int, total: int, done: int, summary: Summary) -> None:
        scores = score_text(summary) if summary.figures.n else ""
        self.progress.update(self._tasks[index], total=total, completed=done, scores=scores)
        with self._lock:
            self._started += 1
            whole = self.progress.tasks[self.whole]
            self.progress.update(
                self.whole,
                total=(whole.total or 0) + total,
                completed=whole.completed + done,
            )
            if done == total:
                self._done_cells.add(index)
            self._say_cells()
            if self._started == 1:
                self.progress.start()

    def result(self, index: int, summary: Summary) -> None:
        task = self._tasks[index]
        self.progress.update(task, advance=1, scores=score_text(summary))
        with self._lock:
            self.progress.update(self.whole, advance=1)
            cell_task = self.progress.tasks[task]
            if cell_task.total is not None and cell_task.completed >= cell_task.total:
                self._done_cells.add(index)
            self._say_cells()

    def _say_cells(self) -> None:
        cells = f"{len(self._done_cells)}/{len(self._cells)} cells"
        self.progress.update(self.whole, scores=cells)

    def finished(self) -> None:
        self.progress.stop()


class _CellProgress(EvalObserver):
    """One cell's observer: its updates go to its line and to the whole."""

    def __init__(self, display: MatrixProgress, index: int) -> None:
        self._display, self._index = display, index

    def started(self, total: int, done: int, summary: Summary) -> None:
        self._display.started(self._index, total, done, summary)

    def result(self, row: Row, summary: Summary) -> None:
        self._display.result(self._index, summary)


def _label(cell: Cell) -> str:
    """A cell's line: its label on one line, as plain text (read as no markup)."""
    return " ".join(plain(cell.label).split())
