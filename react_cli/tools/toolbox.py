"""Tools that share state, as simonw/llm's ``Toolbox``: a class whose marked methods are its
tools.

Each method marked ``@tool_method(spec)`` is one tool of the box, ``spec`` being what the
model is told of it; every tool of one box reads and changes the box's state (Wikipedia's
current page), so a run gets a box of its own (:meth:`Toolbox.made`, from what the session
lends it: :class:`ToolContext`) and a third tool sharing that state is one method. A box that
carries its state into a conversation's next question overrides :meth:`Toolbox.carried` and
:meth:`Toolbox.resume` (``tools.base.Carries``); a box a setting turns off overrides
:meth:`Toolbox.enabled` (Wikipedia's: ``--no-wiki``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from react_cli.core.trajectory import Step
from react_cli.infra.deadline import Deadline
from react_cli.tools.base import Tool, ToolResult, ToolSpec

if TYPE_CHECKING:
    from typing_extensions import Self

    from react_cli.settings.settings import Settings
    from react_cli.wiki.base import WikiBackend

F = TypeVar("F", bound=Callable[..., ToolResult])
_SPEC = "__react_cli_tool_spec__"


def tool_method(spec: ToolSpec) -> Callable[[F], F]:
    """Mark a method ``(self, argument, *, deadline) -> ToolResult`` as its box's tool
    ``spec`` (a decorator: the method itself is left as it was)."""

    def mark(method: F) -> F:
        setattr(method, _SPEC, spec)
        return method

    return mark


@dataclass(frozen=True)
class ToolContext:
    """What a command's session lends the boxes it makes for its runs: Wikipedia's backend
    (``backend()``, opened by the session once, for the first box that asks) and the most
    characters an observation may hold."""

    backend: Callable[[], WikiBackend]
    max_observation_chars: int


@dataclass(frozen=True)
class BoxTool:
    """One marked method of one box: a :class:`tools.base.Tool` whose calls run it."""

    spec: ToolSpec
    method: Callable[..., ToolResult]
    box: Toolbox

    def call(self, argument: str, *, deadline: Deadline) -> ToolResult:
        return self.method(argument, deadline=deadline)


class Toolbox:
    """Tools sharing the state of one box (see the module docstring); the base has none."""

    @classmethod
    def specs(cls) -> tuple[ToolSpec, ...]:
        """What the box's tools are, in the order its methods are written (a subclass's after
        its bases'), without making one (``react-cli tools`` lists them)."""
        return tuple(cls._marked().values())

    @classmethod
    def _marked(cls) -> dict[str, ToolSpec]:
        """The marked methods by name (a subclass's override keeps the mark it overrides,
        unless it marks itself anew)."""
        marked: dict[str, ToolSpec] = {}
        for klass in reversed(cls.__mro__):
            for name, value in vars(klass).items():
                spec: Any = getattr(value, _SPEC, None)
                if isinstance(spec, ToolSpec):
                    marked[name] = spec
        return marked

    @classmethod
    def made(cls, context: ToolContext) -> Self:
        """A run's own box, from what the session lends (a box needing none takes none)."""
        return cls()

    @classmethod
    def enabled(cls, settings: Settings) -> bool:
        """Whether a command with ``settings`` has the box (on unless a setting says no)."""
        return True

    @classmethod
    def describe(cls) -> str:
        """The box as an error naming a clash with one of its tools says it."""
        return f"the built-in {cls.__name__} tools"

    def tools(self) -> list[Tool]:
        """The box's tools, each calling its method on this box."""
        return [BoxTool(spec, getattr(self, name), self) for name, spec in self._marked().items()]

    def carried(self, steps: Sequence[Step]) -> dict[str, str]:
        """What of the box's state ``steps`` leave for a conversation's next question (the
        base carries nothing)."""
        return {}

    def resume(self, carried: Mapping[str, str]) -> None:
        """Take up what an earlier question left (the base has nothing to take up)."""
