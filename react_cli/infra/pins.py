"""What a downloaded file must be (its ``Pin``: size and SHA-256) and whether it is: checked
once, then remembered by a stamp beside the file (``.NAME.verified``: its size, modification
time and digest) until the file changes, so a 500 MB dataset is not hashed at every use.

A stamp is read as untrusted input: anything but the stamp of the file as it is now is none.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from react_cli.infra.files import write_json_in
from react_cli.infra.untrusted import BadInput, open_regular, parse_json, read_text

SHA256 = re.compile(r"[0-9a-f]{64}")
HASH_CHUNK_BYTES = 1 << 20
STAMP_SUFFIX = ".verified"
MAX_STAMP_BYTES = 4096


@dataclass(frozen=True)
class Pin:
    """What a file must be to be used: its size and SHA-256 (None where unknown)."""

    size: int | None = None
    sha256: str | None = None

    @property
    def kind(self) -> str:
        """How a file is verified: ``sha256``, ``size`` alone, or ``none``."""
        return "sha256" if self.sha256 else "size" if self.size is not None else "none"


def file_sha256(path: Path) -> str:
    """The SHA-256 of a regular file, read in chunks (an archive never fills the memory)."""
    digest = hashlib.sha256()
    with open_regular(path) as handle:
        while chunk := handle.read(HASH_CHUNK_BYTES):
            digest.update(chunk)
    return digest.hexdigest()


def check_file(path: Path, pin: Pin) -> str | None:
    """Why the file at ``path`` is not the one pinned (its size, its SHA-256), or None."""
    size = path.stat().st_size
    if pin.size is not None and size != pin.size:
        return f"{size:,} bytes, not the {pin.size:,} pinned"
    if pin.sha256 and (found := file_sha256(path)) != pin.sha256:
        return f"SHA-256 {found}, not the {pin.sha256} pinned"
    return None


def stamp_path(path: Path) -> Path:
    """Where the record of a file's last check is kept: ``.NAME.verified`` beside it."""
    return path.with_name(f".{path.name}{STAMP_SUFFIX}")


def checked_sha256(path: Path) -> str | None:
    """The SHA-256 ``path`` was found to have when it was last checked, if it has not changed
    since: its stamp names its size, modification time and digest (a stamp is read as
    untrusted input: anything else is no stamp). ``""``: checked by its size alone."""
    try:
        found = path.stat()
        stamp = parse_json(read_text(stamp_path(path), MAX_STAMP_BYTES))
    except (OSError, BadInput):
        return None
    if not isinstance(stamp, dict):
        return None
    same = stamp.get("size") == found.st_size and stamp.get("mtime_ns") == found.st_mtime_ns
    digest = stamp.get("sha256")
    return (digest if isinstance(digest, str) else "") if same else None


def verified(path: Path, pin: Pin) -> bool:
    """Whether ``path`` was checked against ``pin`` since it last changed (its stamp)."""
    digest = checked_sha256(path)
    if digest is None or (pin.size is not None and path.stat().st_size != pin.size):
        return False
    return pin.sha256 is None or digest == pin.sha256


def record_verified(path: Path, digest: str | None) -> None:
    """Remember that ``path`` as it is now was checked (``digest``: its SHA-256, if known);
    a stamp that cannot be written only costs a check next time."""
    try:
        found = path.stat()
        stamp = {"size": found.st_size, "mtime_ns": found.st_mtime_ns, "sha256": digest}
        write_json_in(path.parent, stamp_path(path).name, stamp)
    except OSError:
        pass


def verify(path: Path, pin: Pin) -> str | None:
    """Why the installed file at ``path`` is not the one pinned, or None: checked once, then
    remembered until the file changes (see :func:`verified`)."""
    if verified(path, pin):
        return None
    wrong = check_file(path, pin)
    if wrong is None:
        record_verified(path, pin.sha256)
    return wrong
