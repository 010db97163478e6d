"""A Python tool's call kept from react-cli's own streams and working directory.

A ``@tool`` function runs in react-cli's process, on a thread of its own (``functions``), so
what it prints would land where the answer or ``--json``'s object goes (a piped chat out of
step, escape sequences on the terminal), what it reads would be a piped chat's next
questions, and its ``os.chdir`` would move every relative path of the process, every thread's.
While calls run:

- **Python's streams.** ``sys.stdout``, ``sys.stderr`` and ``sys.stdin`` are routers: what a
  call's own thread writes is kept for that call (:class:`Printed`, at most
  :data:`MAX_PRINTED_CHARS`), what it reads is empty (``input()`` meets the end of its input);
  every other thread's writes and reads go through as before, so calls on several threads at
  once (an eval's workers) each keep their own.
- **File descriptors.** Descriptor 1 (what C code and the subprocesses a tool starts write) is
  a pipe read into the calls' output from the first call to start to the last to end (react-cli
  writes nothing to stdout while tools run: an answer is printed after its run), and 0 the null
  device (a subprocess never reads the chat's questions). Their output goes to the call that
  ends the stretch (one at a time, as in ``ask`` and ``chat``: its own). Descriptor 2 stays
  react-cli's stderr, which shows progress while tools run: what C code or a subprocess writes
  there still reaches it.
- **The working directory** is put back after every call (and after a file's tools load) to
  the one the tools were loaded in, by the caller as soon as the call returns or is dropped at
  its time limit, and by the call's thread once its function returns. react-cli's own paths are
  absolute (``settings.resolve``), so even while a call is in another folder nothing of react-cli
  goes there.

A call's output is shown (cleaned) on stderr with ``-v``, else dropped: it is no observation.
"""

from __future__ import annotations

import codecs
import contextlib
import io
import os
import sys
import threading
from collections.abc import Iterator
from typing import Any, TextIO

MAX_PRINTED_CHARS = 4000
"""The most of a call's output kept (the rest counted): enough to see what it said."""
_READ_BYTES = 1 << 16
_DRAIN_S = 0.2
"""How long the end of a stretch waits for the pipe's last bytes (at once unless a subprocess
the tool started still holds descriptor 1)."""


class Printed:
    """What one call wrote: the first :data:`MAX_PRINTED_CHARS` characters, the rest counted."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._kept = 0
        self.dropped = 0
        self._lock = threading.Lock()

    def add(self, text: str) -> None:
        with self._lock:
            room = MAX_PRINTED_CHARS - self._kept
            if room > 0:
                self._parts.append(text[:room])
                self._kept += min(room, len(text))
            self.dropped += max(0, len(text) - room)

    def text(self) -> str:
        """The output kept, ``…`` and how much more when some was dropped."""
        with self._lock:
            kept = "".join(self._parts)
            return kept + (f" … ({self.dropped:,} more characters)" if self.dropped else "")


_CALLS: dict[int, Printed] = {}
"""The threads of running calls (by ident), each with what it printed."""
_LOCK = threading.Lock()


class _Writer(io.TextIOBase):
    """``sys.stdout`` or ``sys.stderr`` while calls run: a call's thread writes to its call."""

    def __init__(self, inner: TextIO) -> None:
        super().__init__()
        self.inner = inner

    def write(self, text: str) -> int:
        printed = _CALLS.get(threading.get_ident())
        if printed is None:
            return self.inner.write(text)
        printed.add(text)
        return len(text)

    def flush(self) -> None:
        if threading.get_ident() not in _CALLS:
            self.inner.flush()

    def close(self) -> None:
        """Nothing: the stream is react-cli's (a tool closing it closes nothing)."""

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return threading.get_ident() not in _CALLS and self.inner.isatty()

    def fileno(self) -> int:
        return self.inner.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]  # TextIOBase says str | None
        return self.inner.encoding or "utf-8"

    @property
    def buffer(self) -> Any:
        """Bytes written by a call's thread are its call's too (decoded as UTF-8)."""
        printed = _CALLS.get(threading.get_ident())
        return self.inner.buffer if printed is None else _Bytes(printed)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class _Bytes(io.RawIOBase):
    """A call's ``sys.stdout.buffer``: its bytes into its output."""

    def __init__(self, printed: Printed) -> None:
        super().__init__()
        self.printed = printed

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        chunk = bytes(data)
        self.printed.add(chunk.decode("utf-8", "replace"))
        return len(chunk)


class _Reader(io.TextIOBase):
    """``sys.stdin`` while calls run: a call's thread reads nothing (the end of its input)."""

    def __init__(self, inner: TextIO) -> None:
        super().__init__()
        self.inner = inner

    def _own(self) -> bool:
        return threading.get_ident() in _CALLS

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        """Nothing: the stream is react-cli's."""

    def read(self, size: int | None = -1) -> str:
        return "" if self._own() else self.inner.read(-1 if size is None else size)

    def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
        return "" if self._own() else self.inner.readline(-1 if size is None else size)

    def isatty(self) -> bool:
        return not self._own() and self.inner.isatty()

    def fileno(self) -> int:
        return self.inner.fileno()

    @property
    def buffer(self) -> Any:
        return io.BytesIO() if self._own() else self.inner.buffer

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class _Descriptors:
    """Descriptors 0 and 1 redirected from the first running call to the last (see the
    module docstring); restored, and the pipe's bytes handed to the last call, when it ends."""

    def __init__(self) -> None:
        self.running = 0
        self._saved: dict[int, int] = {}
        self._reader: threading.Thread | None = None
        self._output: Printed | None = None

    def start(self) -> None:
        """One more call runs (``_LOCK`` held)."""
        self.running += 1
        if self.running == 1:
            _flush()
            self._redirect()

    def end(self, printed: Printed) -> None:
        """A call ended (``_LOCK`` held): at the last, its output gets the pipe's."""
        self.running -= 1
        if self.running > 0:
            return
        _flush()  # what a tool's own threads left in Python's buffer: into the pipe
        for fd, saved in self._saved.items():
            with contextlib.suppress(OSError):
                os.dup2(saved, fd)  # descriptor 1 was the pipe's last end of ours
            os.close(saved)
        self._saved.clear()
        reader, output = self._reader, self._output
        self._reader = self._output = None
        if reader is not None and output is not None:
            reader.join(_DRAIN_S)  # at once, unless a subprocess still holds the pipe
            said = output.text()
            if said:
                printed.add(said)

    def _redirect(self) -> None:
        with contextlib.suppress(OSError):  # no descriptor 0: nothing to keep the tool from
            saved_in = os.dup(0)
            null = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
            os.dup2(null, 0)
            os.close(null)
            self._saved[0] = saved_in
        try:
            saved_out = os.dup(1)
        except OSError:  # no descriptor 1 (stdout closed): nothing to keep
            return
        read_end, write_end = os.pipe()
        os.dup2(write_end, 1)
        os.close(write_end)
        self._saved[1] = saved_out
        output = Printed()
        reader = threading.Thread(
            target=_drain, args=(read_end, output), name="react-cli-tool-output", daemon=True
        )
        reader.start()
        self._reader, self._output = reader, output


def _drain(fd: int, output: Printed) -> None:
    """Read the pipe until its end, into ``output`` (bounded: the rest is read and counted)."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    try:
        while chunk := os.read(fd, _READ_BYTES):
            output.add(decoder.decode(chunk))
    except OSError:
        pass
    finally:
        os.close(fd)


_DESCRIPTORS = _Descriptors()


def _flush() -> None:
    for stream in (sys.stdout, sys.__stdout__):
        with contextlib.suppress(Exception):
            if stream is not None:
                stream.flush()


def _install() -> None:
    """The routers in place (``_LOCK`` held); a stream replaced since gets one again."""
    if not isinstance(sys.stdout, _Writer) and sys.stdout is not None:
        sys.stdout = _Writer(sys.stdout)
    if not isinstance(sys.stderr, _Writer) and sys.stderr is not None:
        sys.stderr = _Writer(sys.stderr)
    if not isinstance(sys.stdin, _Reader) and sys.stdin is not None:
        sys.stdin = _Reader(sys.stdin)


def _uninstall() -> None:
    """The routers out again once no call runs and no dropped call's thread is left
    (``_LOCK`` held); a stream someone replaced since is left as it is."""
    if _DESCRIPTORS.running or _CALLS:
        return
    for name in ("stdout", "stderr", "stdin"):
        stream = getattr(sys, name)
        if isinstance(stream, (_Writer, _Reader)):
            setattr(sys, name, stream.inner)


@contextlib.contextmanager
def running(printed: Printed, folder: str) -> Iterator[None]:
    """A call runs within the block (on the caller's side): the descriptors are the calls',
    and the working directory is ``folder`` again when it ends, however it ends."""
    with _LOCK:
        _install()
        _DESCRIPTORS.start()
    try:
        yield
    finally:
        with _LOCK:
            _DESCRIPTORS.end(printed)
            _uninstall()
        restore_folder(folder)


@contextlib.contextmanager
def own_thread(printed: Printed, folder: str) -> Iterator[None]:
    """The block is a call's own work, on its thread: what it writes to Python's streams goes
    to ``printed``, it reads nothing, and the working directory is put back when it ends."""
    ident = threading.get_ident()
    with _LOCK:
        _install()
        _CALLS[ident] = printed
    try:
        yield
    finally:
        restore_folder(folder)
        with _LOCK:
            _CALLS.pop(ident, None)
            _uninstall()


@contextlib.contextmanager
def loading(folder: str) -> Iterator[None]:
    """A tools file or an entry point's module loads within the block (on the caller's
    thread): what it prints is dropped, and the working directory is put back after."""
    printed = Printed()
    with running(printed, folder), own_thread(printed, folder):
        yield


def restore_folder(folder: str) -> None:
    """The working directory back to ``folder`` if a tool moved it (a folder that is gone is
    left: react-cli's own paths are absolute)."""
    try:
        if os.getcwd() == folder:
            return
    except OSError:  # the folder it is in was removed
        pass
    with contextlib.suppress(OSError):
        os.chdir(folder)
