"""Where a command's DIR argument points: an eval folder, or one cell of a matrix.

A cell is an eval folder (``DIR/cells/NAME``), so its path names it; ``DIR@CELL`` is short:

- ``DIR@3``: the matrix's third cell (the ``#`` column of ``eval show DIR``);
- ``DIR@NAME``: the cell whose folder is ``DIR/cells/NAME``;
- ``DIR@gpt-4o-mini,react,tools``: the cell of that model, method and protocol; a part that
  is a method's or a protocol's name is one, anything else a model's; ``model=``,
  ``method=`` and ``protocol=`` say which (a model named ``react``, or with a comma, is
  ``model=...``); the parts left out must leave one cell.

A path that exists is a path (a folder whose name holds ``@`` is read as itself); otherwise the
text is split at its last ``@``.
"""

from __future__ import annotations

from pathlib import Path

from react_cli.core.errors import UsageError
from react_cli.core.method import Method
from react_cli.core.records import ProtocolName
from react_cli.core.wording import quoted
from react_cli.eval.matrix.record import Cell, is_matrix, read_matrix
from react_cli.share.text import one_line

KEYS = ("model", "method", "protocol")


def eval_folder(text: str | Path) -> Path:
    """The eval folder ``text`` names (see the module docstring); UsageError for a matrix
    without a cell, or a cell it does not have."""
    path = Path(text)
    if path.exists():
        if is_matrix(path):
            raise UsageError(f"{path} is a matrix: name one of its cells, {_cells_hint(path)}")
        return path
    folder, at, selector = str(text).rpartition("@")
    if not at or not folder:
        return path
    matrix = Path(folder)
    if not is_matrix(matrix):
        raise UsageError(f"{matrix}: no matrix eval there (no matrix.json) to pick a cell of")
    return cell_of(matrix, selector).folder(matrix)


def cell_of(matrix: Path, selector: str) -> Cell:
    """The cell of ``matrix`` that ``selector`` picks."""
    cells = read_matrix(matrix).cells
    text = selector.strip()
    if text.isdigit():
        number = int(text)
        if not 1 <= number <= len(cells):
            raise UsageError(f"{matrix} has cells 1 to {len(cells)}, not {number}")
        return cells[number - 1]
    named = [cell for cell in cells if cell.name == text]
    if named:
        return named[0]
    found = [cell for cell in cells if _matches(cell, text)]
    if len(found) == 1:
        return found[0]
    what = "no cell" if not found else f"{len(found)} cells"
    raise UsageError(f"{matrix}@{one_line(selector, 80)}: {what}; {_cells_hint(matrix)}")


def _matches(cell: Cell, selector: str) -> bool:
    for part in (p.strip() for p in selector.split(",")):
        if not part:
            continue
        key, equals, value = part.partition("=")
        if not equals:
            key, value = _key_of(part), part
        if key not in KEYS:
            raise UsageError(f"{quoted(key)} is no part of a cell: use {', '.join(KEYS)}")
        given = {"model": cell.model, "method": str(cell.method), "protocol": str(cell.protocol)}
        if given[key] != (value if key == "model" else value.strip().lower()):
            return False
    return True


def _key_of(value: str) -> str:
    lowered = value.strip().lower()
    if lowered in set(Method):
        return "method"
    if lowered in set(ProtocolName):
        return "protocol"
    return "model"


def _cells_hint(matrix: Path) -> str:
    """How to name the matrix's cells, with its first ones."""
    cells = read_matrix(matrix).cells
    shown = ", ".join(
        f"{number} {one_line(cell.label, 60)}" for number, cell in enumerate(cells[:4], 1)
    )
    more = ", …" if len(cells) > 4 else ""
    return f"as {matrix}@N (its cells: {shown}{more}) or {matrix}@MODEL,METHOD,PROTOCOL"
