"""The host names this process asks the resolver for, seen through the interpreter's audit
events (``socket.getaddrinfo``, raised before any lookup): no function patched, nothing
faked. A test starts a record, acts, and reads what was asked::

    asked = Lookups.start()
    ...  # run the command
    assert asked == []  # nothing was looked up
"""

from __future__ import annotations

import sys
from typing import ClassVar

LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


class Lookups:
    """One hook for the process (audit hooks cannot be removed), recording into the list the
    last ``start`` returned."""

    names: ClassVar[list[str]] = []
    installed: ClassVar[bool] = False

    @classmethod
    def start(cls) -> list[str]:
        if not cls.installed:
            sys.addaudithook(cls._hook)
            cls.installed = True
        cls.names = []
        return cls.names

    @classmethod
    def _hook(cls, event: str, args: tuple[object, ...]) -> None:
        if event == "socket.getaddrinfo":
            cls.names.append(str(args[0]))


def beyond_loopback(names: list[str]) -> list[str]:
    """The names asked for that are not this machine's."""
    return [name for name in names if name not in LOOPBACK]
