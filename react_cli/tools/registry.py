"""Which tools a command's runs have: a value each session is given, never a process-wide
list.

A :class:`ToolRegistry` holds the toolboxes a command's runs may have (``BUILT_IN``: the
paper's :class:`~react_cli.tools.wikipedia.Wikipedia`; a test or an embedding program gives
its own), each on unless its setting turns it off. The session turns it into
:class:`Provider` values, one per tool set, beside the one of the users' tools it opened
(``tools.users``: files', packages', MCP servers'): every tool set comes through this one
seam, declared without being made (``react-cli tools``, the names' clashes) and made afresh
for each run, so tools sharing state share a run's.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from react_cli.settings.settings import Settings
from react_cli.tools.base import FINISH, ToolSet, ToolSpec
from react_cli.tools.consent import Consent, consented
from react_cli.tools.toolbox import Toolbox, ToolContext
from react_cli.tools.wikipedia import Wikipedia


@dataclass(frozen=True)
class Provider:
    """One tool set of a command's runs: what it declares, a run's own box of it (a fresh
    one for tools sharing state, the same one for tools that keep none), and how an error
    names it."""

    specs: tuple[ToolSpec, ...]
    make: Callable[[], Toolbox]
    where: str = ""


@dataclass(frozen=True)
class ToolRegistry:
    """The toolbox classes a command's runs may have, in the order their tools are listed."""

    toolboxes: tuple[type[Toolbox], ...] = ()

    def providers(self, settings: Settings, context: ToolContext) -> list[Provider]:
        """A provider for each toolbox ``settings`` leave on, its boxes made from ``context``."""
        return [
            Provider(box.specs(), functools.partial(box.made, context), box.describe())
            for box in self.toolboxes
            if box.enabled(settings)
        ]


BUILT_IN = ToolRegistry((Wikipedia,))
"""What react-cli's runs have besides the users' tools: Wikipedia's Search and Lookup."""


def declared(providers: Iterable[Provider]) -> tuple[ToolSpec, ...]:
    """Every tool the providers' runs have, Finish last (what ``react-cli tools`` lists)."""
    return (*(spec for provider in providers for spec in provider.specs), FINISH)


def tool_set(
    providers: Iterable[Provider], consent: Consent, *, keep_denied: bool = False
) -> ToolSet:
    """A run's own tools from ``providers``, under ``consent``: those its deny rules name left
    out (``keep_denied``: kept, each call refused: a re-run's recording lists them), those
    that need consent asking it first (``tools.consent``)."""
    tools = [tool for provider in providers for tool in provider.make().tools()]
    return ToolSet(consented(tools, consent, keep_denied=keep_denied))
