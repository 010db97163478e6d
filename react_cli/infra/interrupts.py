"""Ctrl-C around a run: the first one stops it, later ones wait until its record is on disk.

Without this, a second Ctrl-C (people press it twice) lands while the trace or the eval summary
is being written, and the file the first Ctrl-C promised to keep is lost. Signals reach the main
thread only, so the state is the process's: one guard at a time, nested uses share it.
"""

from __future__ import annotations

import functools
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


class _State:
    depth = 0  # guards entered and not left
    count = 0  # Ctrl-C presses seen by the outermost guard
    holding = False  # after hold(): presses are only counted


def _on_interrupt(signum: int, frame: FrameType | None) -> None:
    _State.count += 1
    if _State.count == 1 and not _State.holding:
        raise KeyboardInterrupt


@contextmanager
def guard() -> Iterator[None]:
    """Within: the first Ctrl-C raises KeyboardInterrupt (unless :func:`hold` was called);
    every later one is only counted (see :func:`pressed`)."""
    installed = (
        _State.depth == 0
        and threading.current_thread() is threading.main_thread()
        # a handler someone else set, or SIG_IGN as for background jobs, is theirs to keep
        and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    )
    if installed:
        _State.count, _State.holding = 0, False
        signal.signal(signal.SIGINT, _on_interrupt)
    _State.depth += 1
    try:
        yield
    finally:
        _State.depth -= 1
        if installed:
            signal.signal(signal.SIGINT, signal.default_int_handler)
            _State.holding = False


def guarded(command: Callable[P, R]) -> Callable[P, R]:
    """``command`` run within :func:`guard` (a decorator keeps typer's view of its options)."""

    @functools.wraps(command)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        with guard():
            return command(*args, **kwargs)

    return run


def hold() -> None:
    """From now on (until the guard ends) Ctrl-C is only counted: what is being written gets
    written, and the caller checks :func:`pressed` afterwards."""
    _State.holding = True


def pressed() -> bool:
    """Whether Ctrl-C was pressed since the outermost guard began."""
    return _State.count > 0
