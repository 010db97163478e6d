"""The tools a process adds to every run, beside Wikipedia's: providers registered here.

A provider makes a run's tools (a fresh instance per run, since tools may keep state for their
run); every session's tool set asks each provider in the order they registered. The tools of
installed packages and users' files come in through here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from react_cli.tools.base import Tool

ToolProvider = Callable[[], Iterable[Tool]]
_providers: list[ToolProvider] = []


def register(provider: ToolProvider) -> ToolProvider:
    """Add ``provider``'s tools to every run from now on (usable as a decorator)."""
    _providers.append(provider)
    return provider


def unregister(provider: ToolProvider) -> None:
    """Take ``provider``'s tools out of the runs made from now on."""
    _providers.remove(provider)


def registered_tools() -> list[Tool]:
    """A run's own instances of every registered provider's tools."""
    return [tool for provider in _providers for tool in provider()]
