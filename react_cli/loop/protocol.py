"""The seam between the loop and how a model is spoken to: a protocol.

The loop is the same for every protocol (ask for a turn, run the action's tool, record the
step, apply the stop rules); a :class:`Protocol` decides what the model is shown and how its
reply becomes a thought and an action. Each run has its own :class:`Transcript`: what the model
has been shown so far, grown one step at a time. The text protocol (``loop.text``) is the
paper's Thought/Action/Observation prompt. A question that follows others in a conversation
starts with their turns (``core.conversation.Earlier``), which each protocol shows its own way,
within the context's token budget.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from react_cli.core.conversation import Earlier, Turn
from react_cli.core.trajectory import Step
from react_cli.llm.base import Completion, ModelRequest
from react_cli.loop.events import Event
from react_cli.loop.prompts import PromptTemplate
from react_cli.tools.base import ToolSet


class Exchange(ABC):
    """What a transcript may do during a step: ask the model (the call's cost, time and
    retries are booked on the step, its text streamed to the observer) and tell the observer."""

    @abstractmethod
    def ask(self, request: ModelRequest, step: Step) -> Completion: ...

    @abstractmethod
    def tell(self, event: Event) -> None: ...


NO_EARLIER = Earlier()
"""The context of a question that starts a conversation: no earlier turn."""


class Transcript(ABC):
    """What the model is shown of one run, grown a step at a time; ``earlier`` the turns of
    the conversation it was started with (those the budget kept)."""

    earlier: tuple[Turn, ...] = ()

    @abstractmethod
    def turn(self, step: Step, exchange: Exchange) -> None:
        """Ask for ``step``'s thought and action: sets its ``raw`` (and ``followup_raw``),
        ``thought``, ``action`` (as written) and ``call`` (None: no valid action)."""

    @abstractmethod
    def observe(self, step: Step) -> None:
        """Show the model ``step``'s observation (or the invalid-action hint)."""

    @abstractmethod
    def force_answer(self, step: Step, exchange: Exchange) -> None:
        """At the step limit, ask once for the final answer: sets ``step.call`` to a Finish
        call when the model gave one (``--force-answer``)."""

    @property
    @abstractmethod
    def invalid_action(self) -> str:
        """The observation of a step without a valid action: which actions there are."""


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
