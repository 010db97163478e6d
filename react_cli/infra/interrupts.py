"""The signals that stop a command, one policy for all three: Ctrl-C (``SIGINT``), ``SIGTERM``
(``kill``, ``timeout``, a cancelled CI job) and ``SIGHUP`` (a terminal closed under it).

Each stops the command as Ctrl-C always did, by raising ``KeyboardInterrupt`` in the main
thread, so every ``except KeyboardInterrupt`` that stops servers and keeps a trace or an eval's
rows serves all three; the command then exits 128 + the signal's number (130, 143, 129:
``core.errors.signal_exit_code``). Left to their defaults, ``SIGTERM`` and ``SIGHUP`` would end
the process at once, leaving its MCP servers running and its trace unwritten.

Within a :func:`guard`, the first signal raises and later ones are only counted, so a second
Ctrl-C (people press it twice) or a ``timeout`` following one cannot lose the file the first
promised to keep while it is being written. Signals reach the main thread only, so the state
is the process's: one guard at a time, nested uses share it. A handler someone else set, or
``SIG_IGN`` (``nohup``, a background job's ``SIGINT``), is theirs to keep.
"""

from __future__ import annotations

import functools
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any, ParamSpec, TypeVar

from react_cli.core.errors import signal_exit_code

P = ParamSpec("P")
R = TypeVar("R")
STOPPING: tuple[int, ...] = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)
"""The signals that stop a command (SIGHUP is POSIX's alone)."""


class _State:
    depth = 0  # guards entered and not left
    count = 0  # signals seen by the outermost guard
    holding = False  # after hold(): signals are only counted
    signum: int | None = None  # the one the command stops with (a terminating one outranks SIGINT)


def _on_signal(signum: int, frame: FrameType | None) -> None:
    remember(signum)
    if _State.depth == 0:  # outside a guard: as Python's own SIGINT handler does
        raise KeyboardInterrupt
    if _State.count == 1 and not _State.holding:
        raise KeyboardInterrupt


def remember(signum: int) -> None:
    """A stopping signal that came where raising is not safe (a callback of an event loop,
    which stops what it runs itself): remembered as a raised one is, for :func:`ending` and
    the exit code."""
    if _State.signum in (None, signal.SIGINT):
        _State.signum = signum
    if _State.depth:
        _State.count += 1


def _default(signum: int) -> Any:
    return signal.default_int_handler if signum == signal.SIGINT else signal.SIG_DFL


def _install() -> list[tuple[int, Any]]:
    """Our handler for each stopping signal still at its default (main thread only): what it
    replaced, to restore."""
    if threading.current_thread() is not threading.main_thread():
        return []
    replaced = []
    for signum in STOPPING:
        previous = signal.getsignal(signum)
        if previous is _default(signum):
            signal.signal(signum, _on_signal)
            replaced.append((signum, previous))
    return replaced


def _restore(replaced: list[tuple[int, Any]]) -> None:
    for signum, previous in replaced:
        signal.signal(signum, previous)


@contextmanager
def catching() -> Iterator[None]:
    """Within (a command, from its start): each stopping signal raises KeyboardInterrupt, as
    Ctrl-C does by default, and is remembered for the exit code (see :func:`exit_code`)."""
    _State.signum = None
    replaced = _install()
    try:
        yield
    finally:
        _restore(replaced)


@contextmanager
def guard() -> Iterator[None]:
    """Within: the first stopping signal raises KeyboardInterrupt (unless :func:`hold` was
    called); every later one is only counted (see :func:`pressed`)."""
    outermost = _State.depth == 0
    replaced = _install() if outermost else []
    if outermost:
        _State.count, _State.holding = 0, False
    _State.depth += 1
    try:
        yield
    finally:
        _State.depth -= 1
        if outermost:
            _restore(replaced)
            _State.holding = False


def guarded(command: Callable[P, R]) -> Callable[P, R]:
    """``command`` run within :func:`guard` (a decorator keeps typer's view of its options)."""

    @functools.wraps(command)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        with guard():
            return command(*args, **kwargs)

    return run


def hold() -> None:
    """From now on (until the guard ends) signals are only counted: what is being written
    gets written, and the caller checks :func:`pressed` afterwards."""
    _State.holding = True


def pressed() -> bool:
    """Whether a stopping signal came since the outermost guard began."""
    return _State.count > 0


def received() -> int:
    """The signal the command stops with (``SIGINT`` when none was seen: a Ctrl-C that a
    library turned into KeyboardInterrupt itself, as a prompt reading keys does)."""
    return _State.signum if _State.signum is not None else signal.SIGINT


def ending() -> bool:
    """Whether a signal came that ends the command whatever it is doing (``SIGTERM``,
    ``SIGHUP``): a chat stops its question on Ctrl-C and goes on, on these it ends."""
    return _State.signum not in (None, signal.SIGINT)


def interrupted() -> str:
    """How an ``Error:`` line says the command was stopped: ``interrupted`` (Ctrl-C), or
    ``interrupted by SIGTERM``."""
    signum = received()
    return "interrupted" if signum == signal.SIGINT else f"interrupted by {_name(signum)}"


def exit_code() -> int:
    """The exit code of a command the signal stopped: 128 + its number."""
    return signal_exit_code(received())


def _name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"
