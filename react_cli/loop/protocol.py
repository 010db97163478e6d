"""The seam between the loop and how a model is spoken to: a protocol.

The loop is the same for every protocol (ask for a turn, run the actions' tools, record the
step, apply the stop rules); a :class:`Protocol` decides what the model is shown and how its
reply becomes a thought and actions. Each run has its own :class:`Transcript`: what the model
has been shown so far, grown one step at a time. A transcript never writes a step: it asks the
model through the :class:`Exchange` the loop lends it, and hands back each reply it read and
the actions it asked for (``core.trajectory``'s records, which the display and the exports
show as they are). The text protocol (``loop.text``) is the paper's Thought/Action/Observation
prompt; native function calling is ``loop.tools``. A question that follows others in a
conversation starts with their turns (``core.conversation.Earlier``), which each protocol
shows its own way, within the context's token budget.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Protocol as Interface

from react_cli.core.conversation import Earlier, Turn
from react_cli.core.trajectory import Action, Cue, Reply, Step
from react_cli.llm.base import Completion, ModelRequest
from react_cli.loop.prompts import PromptTemplate
from react_cli.tools.base import ToolSet


class Shown(Interface):
    """How a reply's text is shown while it streams in: ``feed`` takes each piece and gives
    what of the text so far is now certain to be shown, ``end`` the rest once the reply is
    complete. A protocol shows its thought, never its action (that is told once read)."""

    def feed(self, text: str) -> str: ...

    def end(self) -> str: ...


class ShowAll:
    """A reply that is all thought (a native tool call's text): shown as it comes."""

    def feed(self, text: str) -> str:
        return text

    def end(self) -> str:
        return ""


class ShowNothing:
    """A reply asked for an action alone: none of its text is shown as it comes."""

    def feed(self, text: str) -> str:
        return ""

    def end(self) -> str:
        return ""


class Exchange(ABC):
    """What a transcript may do during a step: ask the model (the call's cost, time and
    retries are booked on the step, its text shown as ``shown`` says), and hand back what it
    read of each reply."""

    @abstractmethod
    def ask(
        self, request: ModelRequest, step: Step, cue: Cue, shown: Shown | None = None
    ) -> Completion:
        """The model's reply to ``request``, which asks for what ``cue`` says (by default a
        thought is shown whole, an action not at all)."""

    @abstractmethod
    def replied(
        self,
        step: Step,
        reply: Reply,
        actions: Sequence[Action] | None = None,
        thought: str | None = None,
    ) -> None:
        """Record ``reply`` on ``step`` (and the ``thought`` it held): with ``actions``, the
        step's last reply and what it asked for, in order (none: it asked for nothing the
        run can make); without, another call of the step follows."""


NO_EARLIER = Earlier()
"""The context of a question that starts a conversation: no earlier turn."""


class Transcript(ABC):
    """What the model is shown of one run, grown a step at a time; ``earlier`` the turns of
    the conversation it was started with (those the budget kept)."""

    earlier: tuple[Turn, ...] = ()

    @abstractmethod
    def turn(self, step: Step, exchange: Exchange) -> None:
        """Ask for ``step``'s reply (a follow-up call too, if the protocol makes one) and hand
        back each reply and the actions the last one asked for: at least one, each a call of
        the set or, when it cannot be run (or the reply held none), what the model is told."""

    @abstractmethod
    def observe(self, step: Step) -> None:
        """Show the model what each of ``step``'s actions gave back."""

    @abstractmethod
    def force_answer(self, step: Step, exchange: Exchange) -> None:
        """At the step limit, ask once for the final answer: its action is a Finish call
        when the model gave one, else there is none (``--force-answer``)."""


class Protocol(ABC):
    """A way of speaking to the model; ``thoughts`` False for the paper's Act (actions alone)."""

    def __init__(self, *, thoughts: bool = True) -> None:
        self.thoughts = thoughts

    @abstractmethod
    def start(
        self,
        template: PromptTemplate,
        question: str,
        tools: ToolSet,
        earlier: Earlier = NO_EARLIER,
    ) -> Transcript:
        """A new run's transcript: the template with the question (and the tools) filled in,
        after the ``earlier`` turns of its conversation that fit their budget."""
