"""Kiwix archives by name: ``<home>/zim/`` holds them, ``--wiki zim:NAME`` finds the newest.

An archive from Kiwix's catalog is named ``wikipedia_en_top_nopic_2026-06.zim``: its name
(``wikipedia_en_top_nopic``, the catalog's name and flavour) and the month it was made. A
``zim:`` value that is a bare name (no folder, no ``.zim``) and names no file is looked up
here: ``NAME.zim`` or the newest ``NAME_YYYY-MM.zim``. Plain path logic, so resolving the
settings opens no archive.
"""

from __future__ import annotations

import re
from pathlib import Path

ZIM_FOLDER = "zim"
_DATED = re.compile(r"(.+)_(\d{4}-\d{2})")


def zim_folder(home: Path) -> Path:
    return home / ZIM_FOLDER


def archive_name(file: str) -> tuple[str, str]:
    """``(name, month)`` of an archive's file name (month ``""`` when it has none)."""
    stem = file.removesuffix(".zim")
    dated = _DATED.fullmatch(stem)
    return (dated.group(1), dated.group(2)) if dated else (stem, "")


def is_bare_name(text: str) -> bool:
    """Whether a ``zim:`` value may be an archive's name rather than a path."""
    return bool(text) and "/" not in text and not text.endswith(".zim") and text not in (".", "..")


def find_archive(name: str, home: Path) -> Path | None:
    """The newest archive called ``name`` in ``<home>/zim``, if any."""
    folder = zim_folder(home)
    try:
        files = [path for path in folder.iterdir() if path.suffix == ".zim" and path.is_file()]
    except OSError:
        return None
    named = [path for path in files if archive_name(path.name)[0] == name]
    return max(named, key=lambda path: archive_name(path.name)[1], default=None)
