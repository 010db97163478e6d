"""Files replaced in one step: a crash or Ctrl-C mid-write never leaves half a file, a replaced
file keeps its permissions, and a folder's own files follow its policy: a symbolic link planted
there is replaced, never written through (nor appended to: :func:`open_appending`)."""

from __future__ import annotations

import errno
import os
import stat
import tempfile
import time
from pathlib import Path
from typing import IO, Any

from react_cli.infra.untrusted import dump_json, not_regular


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_FILE_MODE = 0o666 & ~_umask()  # read once, at import: changing the umask is not thread-safe


def replacing_mode(path: Path) -> int:
    """The permissions of a file written to ``path``: those of the regular file it replaces
    (a 0600 trace stays 0600), else those a plain ``open`` would give a new one."""
    try:
        mode = path.lstat().st_mode
    except OSError:
        return _FILE_MODE
    return mode & 0o777 if stat.S_ISREG(mode) else _FILE_MODE


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` in one step (see the module docstring; mkstemp's mode is 0600, the
    file gets :func:`replacing_mode`'s). A symbolic link at ``path`` is itself replaced, never
    written through (the paths users name are resolved first, by ``traces.trace.trace_target``)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            os.fchmod(handle.fileno(), replacing_mode(path))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json_atomic(path: Path, document: dict[str, Any]) -> None:
    """Write a JSON document atomically; any text in it can be written (see ``dump_json``)."""
    write_atomic(path, dump_json(document, indent=2) + "\n")


def write_json_in(folder: Path, name: str, document: dict[str, Any]) -> None:
    """Write the JSON document ``folder/name`` (``traces/00001-….json``) in one step, by the
    folder's policy: a symbolic link at ``name``, or at a folder on the way there, is replaced
    (by the file, or by an empty folder), never followed. OSError when the disk refuses."""
    parent = folder
    for part in Path(name).parent.parts:
        parent = parent / part
        if parent.is_symlink():
            parent.unlink(missing_ok=True)
        parent.mkdir(exist_ok=True)
    write_json_atomic(folder / name, document)


def open_appending(path: Path, mode: int = 0o644) -> int:
    """``path`` (a file of a folder of ours: ``results.jsonl``, ``chat_history``) opened for
    appending by the folder's policy: a symbolic link there is replaced by a new file (what it
    points to is never written), and anything else but a regular file is an OSError saying
    what it is, at once (a FIFO without a reader never blocks). The descriptor is the
    caller's to close."""
    if path.is_symlink():
        path.unlink(missing_ok=True)
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    fd = os.open(path, flags, mode)  # a link planted since: ELOOP, never followed
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        kind = not_regular(path, follow_symlinks=False)
        said = f"is {kind}, not a regular file" if kind else "is not a regular file"
        raise OSError(errno.EINVAL, said, str(path))
    return fd


LOCK_POLL_S = 0.01


def hold_lock(path: Path, wait_s: float = 0.0) -> IO[bytes]:
    """An exclusive ``flock`` on the lock file ``path`` (made if need be; a symbolic link there
    is never followed), held until the returned file is closed. BlockingIOError when another
    process still holds it after ``wait_s`` seconds; another OSError when the file cannot be
    had (it is a FIFO, a link, the folder is not writable)."""
    import fcntl

    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    handle = os.fdopen(os.open(path, flags, 0o644), "r+b")
    try:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise OSError(errno.EINVAL, "is not a regular file", str(path))
        until = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                return handle
            except BlockingIOError:
                if time.monotonic() >= until:
                    raise
                time.sleep(LOCK_POLL_S)
    except BaseException:
        handle.close()
        raise
