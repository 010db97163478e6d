"""A matrix eval's folder: every cell (model × method × protocol) a normal eval folder, and a
summary of the matrix beside them.

    DIR/matrix.json                          the axes, the dataset, each cell's folder
    DIR/cells/<model>--<method>--<protocol>/ an eval folder: summary.json, results.jsonl, traces/

A cell's folder is an eval of one method, one protocol and one model, like any other: ``eval
show|report|export|--resume`` read it as such, and so does anything that reads evals. The
matrix's own file names the cells and says where each is; their figures are read from their
folders (the cells' summaries are what counts), so a cell resumed alone stays counted right.
``matrix.json`` is read back as untrusted input: a cell's folder must be a plain name inside
``DIR/cells``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from react_cli.core.errors import UsageError
from react_cli.core.method import Method
from react_cli.core.records import ProtocolName
from react_cli.core.wording import quoted
from react_cli.eval.events import EvalObserver
from react_cli.eval.summary import DatasetRef, EvalStatus
from react_cli.infra.files import write_json_atomic
from react_cli.infra.untrusted import BadInput, parse_json, read_text
from react_cli.traces.trace import slug

MATRIX = "matrix.json"
CELLS = "cells"
MATRIX_VERSION = 1
MAX_MATRIX_BYTES = 4 << 20
MAX_CELLS = 256
CELL_NAME = re.compile(r"[a-z0-9][a-z0-9.+-]{0,150}")
"""A cell's folder name as this module makes them, the only ones read back."""


@dataclass(frozen=True)
class Cell:
    """One cell of a matrix: a model (as ``-m`` named it), a method and a protocol, and the
    name of its folder under ``DIR/cells``."""

    model: str
    method: Method
    protocol: ProtocolName
    name: str

    @property
    def label(self) -> str:
        return f"{self.model} · {self.method} · {self.protocol}"

    def folder(self, matrix: Path) -> Path:
        return matrix / CELLS / self.name

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "model": self.model,
            "method": str(self.method),
            "protocol": str(self.protocol),
            "folder": f"{CELLS}/{self.name}",
        }


@dataclass(frozen=True)
class Axes:
    """What a matrix crosses, each in the order given."""

    models: tuple[str, ...]
    methods: tuple[Method, ...]
    protocols: tuple[ProtocolName, ...]

    def cells(self, earlier: tuple[Cell, ...] = ()) -> tuple[Cell, ...]:
        """Every cell, model by model, then protocol, then method; an earlier matrix's cells
        keep their folders (a resumed matrix adds the cells of axes given now)."""
        kept = {(cell.model, cell.method, cell.protocol): cell for cell in earlier}
        taken = {cell.name for cell in earlier}
        cells = []
        for model in self.models:
            for protocol in self.protocols:
                for method in self.methods:
                    cell = kept.get((model, method, protocol))
                    if cell is None:
                        name = _free(f"{slug(model, 60)}--{method}--{protocol}", taken)
                        taken.add(name)
                        cell = Cell(model, method, protocol, name)
                    cells.append(cell)
        if len(cells) > MAX_CELLS:
            raise UsageError(f"a matrix of {len(cells)} cells: at most {MAX_CELLS}")
        return tuple(cells)

    def __or__(self, other: Axes) -> Axes:
        """These axes with ``other``'s values added after them."""
        return Axes(
            tuple(dict.fromkeys(self.models + other.models)),
            tuple(dict.fromkeys(self.methods + other.methods)),
            tuple(dict.fromkeys(self.protocols + other.protocols)),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "models": list(self.models),
            "methods": [str(method) for method in self.methods],
            "protocols": [str(protocol) for protocol in self.protocols],
        }


class MatrixObserver:
    """Progress of a matrix: an observer of each cell (called from that cell's thread, so it
    must be safe to call from several), and the end of them all; the default does nothing."""

    def cell(self, index: int) -> EvalObserver:
        return EvalObserver()

    def finished(self) -> None: ...


def _free(name: str, taken: set[str]) -> str:
    """``name``, or with the first number that makes it unused (two models whose names
    differ only in punctuation)."""
    found, number = name, 2
    while found in taken:
        found, number = f"{name}-{number}", number + 1
    return found


@dataclass(frozen=True)
class MatrixRecord:
    """What ``matrix.json`` holds."""

    axes: Axes
    cells: tuple[Cell, ...]
    dataset: dict[str, Any]  # the dataset as the cells' summaries record it (``DatasetRef``)
    status: EvalStatus
    created: str
    updated: str
    wall_s: float
    statuses: tuple[tuple[str, str], ...] = ()  # each cell's status, by its name

    def to_json(self) -> dict[str, Any]:
        statuses = dict(self.statuses)
        return {
            "version": MATRIX_VERSION,
            "kind": "matrix",
            "status": self.status.value,
            "dataset": self.dataset,
            "axes": self.axes.to_json(),
            "cells": [{**cell.to_json(), "status": statuses.get(cell.name)} for cell in self.cells],
            "created": self.created,
            "updated": self.updated,
            "wall_s": self.wall_s,
        }

    def write(self, folder: Path) -> None:
        write_json_atomic(folder / MATRIX, self.to_json())


def is_matrix(folder: Path) -> bool:
    """Whether ``folder`` holds a matrix eval (its ``matrix.json``)."""
    return (folder / MATRIX).is_file()


def read_matrix(folder: Path) -> MatrixRecord:
    """``folder``'s ``matrix.json``; UsageError naming what is wrong with it."""
    path = folder / MATRIX
    try:
        data = parse_json(read_text(path, MAX_MATRIX_BYTES))
    except FileNotFoundError:
        raise UsageError(f"{folder}: not a matrix eval (no {MATRIX})") from None
    except (OSError, BadInput) as exc:
        raise UsageError(f"{path}: unreadable ({exc})") from None
    try:
        return _record(data)
    except (KeyError, TypeError, ValueError) as exc:
        raise UsageError(f"{path}: not a react-cli matrix ({exc})") from None


def _record(data: Any) -> MatrixRecord:
    if not isinstance(data, dict) or data.get("kind") != "matrix":
        raise ValueError("kind")
    axes_data = data["axes"]
    axes = Axes(
        tuple(_texts(axes_data["models"], "axes")),
        tuple(Method(name) for name in _texts(axes_data["methods"], "axes")),
        tuple(ProtocolName(name) for name in _texts(axes_data["protocols"], "axes")),
    )
    cells_data = data["cells"]
    if not isinstance(cells_data, list) or len(cells_data) > MAX_CELLS:
        raise ValueError("cells")
    cells, statuses = [], []
    for item in cells_data:
        if not isinstance(item, dict):
            raise ValueError("cells")
        name, model = item["name"], item["model"]
        if not isinstance(name, str) or not CELL_NAME.fullmatch(name):
            raise ValueError(f"cell folder {quoted(name)}")
        if not isinstance(model, str):
            raise ValueError("cells")
        cells.append(Cell(model, Method(item["method"]), ProtocolName(item["protocol"]), name))
        if isinstance(item.get("status"), str):
            statuses.append((name, item["status"]))
    if len({cell.name for cell in cells}) != len(cells):
        raise ValueError("cells: a folder named twice")
    dataset = data["dataset"]
    DatasetRef.from_json(dataset)  # checked; kept as recorded
    wall = data.get("wall_s")
    return MatrixRecord(
        axes=axes,
        cells=tuple(cells),
        dataset=dataset,
        status=EvalStatus(data["status"]),
        created=str(data["created"]),
        updated=str(data["updated"]),
        wall_s=float(wall) if isinstance(wall, (int, float)) else 0.0,
        statuses=tuple(statuses),
    )


def _texts(value: Any, name: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(name)
    return value
