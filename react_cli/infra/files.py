"""Files replaced in one step: a crash or Ctrl-C mid-write never leaves half a file."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from react_cli.infra.untrusted import dump_json


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_FILE_MODE = 0o666 & ~_umask()  # read once, at import: changing the umask is not thread-safe


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` in one step, so a crash or Ctrl-C mid-write never leaves half a file.

    The file gets the permissions a plain ``open`` would give it (mkstemp's are 0600)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            os.fchmod(handle.fileno(), _FILE_MODE)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json_atomic(path: Path, document: dict[str, Any]) -> None:
    """Write a JSON document atomically; any text in it can be written (see ``dump_json``)."""
    write_atomic(path, dump_json(document, indent=2) + "\n")
