"""A :class:`Session`: everything a question is answered with, by the paper's methods.

It holds the prompts, the model (and what draws its samples), a fresh tool set for every loop,
the protocol of each loop, the stop rules and the spans its runs are watched by. A command's
session is made by ``session.opened.open_session`` over the resources it holds open;
``replay --rerun`` builds one from a trace's recording (``traces.replay``), so a run means the
same thing everywhere; ``traces.recorder`` makes a new run's trace from its session.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

from react_cli.core.conversation import Earlier
from react_cli.core.method import Method, Task
from react_cli.core.records import ProtocolName
from react_cli.core.trajectory import Run
from react_cli.infra.deadline import Cancel
from react_cli.llm.base import CacheKeyed, LanguageModel, Model, Sampler
from react_cli.loop.events import Observer, RunStarted, Tee
from react_cli.loop.limits import Limits
from react_cli.loop.prompts import PromptSet
from react_cli.loop.protocol import NO_EARLIER, Protocol
from react_cli.loop.registry import loop_protocols
from react_cli.methods.events import MethodFinished
from react_cli.methods.memo import Memo, Sampling
from react_cli.methods.outcome import answer
from react_cli.methods.results import Outcome
from react_cli.settings.settings import Settings
from react_cli.telemetry.base import NoSpans, Spans
from react_cli.telemetry.setup import protocol_name
from react_cli.tools.base import ToolSet, ToolSpec


def text_protocols() -> dict[Method, Protocol]:
    """The paper's protocol for each loop: ReAct with thoughts, Act without."""
    return loop_protocols(ProtocolName.TEXT)


def settings_protocols(settings: Settings) -> dict[Method, Protocol]:
    """The protocol the settings name (``--protocol``, ``--constrain``) for each loop."""
    return loop_protocols(ProtocolName(settings.protocol), constrain=settings.constrain)


@dataclass(frozen=True)
class Session:
    """Everything a question is answered with.

    ``tools`` makes each loop's own tool set (tools may keep state for their run); ``sampler``
    draws the completions of the methods that read some (None: there are none to draw, as in a
    re-run that holds them all); ``settings`` is what a new trace records of how the run was
    made (None for a re-run, which makes no trace); ``spans`` gives each run answered a span
    (none for a re-run).
    """

    prompts: PromptSet
    model: Model
    tools: Callable[[], ToolSet]
    limits: Limits
    hybrid_steps: int
    sampling: Sampling = field(default_factory=Sampling)
    sampler: Sampler | None = None
    protocols: Mapping[Method, Protocol] = field(default_factory=text_protocols)
    settings: Settings | None = None
    spans: Spans = field(default_factory=NoSpans)

    @property
    def task(self) -> Task:
        return self.prompts.task

    def over(self, model: LanguageModel) -> Session:
        """The same session over ``model`` (an eval's worker's own client)."""
        return replace(self, model=model, sampler=model)

    def keyed(self, key: str) -> Session:
        """The same session, every request of it carrying ``key`` as its prompt cache key."""
        keyed = CacheKeyed(self.model, self.sampler, key)
        return replace(self, model=keyed, sampler=None if self.sampler is None else keyed)

    def memo(
        self,
        question: str,
        observer: Observer | None = None,
        earlier: Earlier = NO_EARLIER,
        cancel: Cancel | None = None,
    ) -> Memo:
        """A question's building blocks, made on demand and shared by its methods (a
        follow-up question's given its conversation's ``earlier`` turns; ``cancel`` ends its
        calls at once when set: an eval's stop)."""
        return Memo(
            question,
            prompts=self.prompts.templates,
            model=self.model,
            protocols=self.protocols,
            tools=self.tools,
            limits=self.limits,
            hybrid_steps=self.hybrid_steps,
            sampler=self.sampler,
            sampling=self.sampling,
            observer=observer,
            earlier=earlier,
            cancel=cancel,
        )

    def answer(
        self,
        question: str,
        method: Method,
        observer: Observer | None = None,
        earlier: Earlier = NO_EARLIER,
    ) -> tuple[Outcome, Run]:
        """``question`` answered by ``method``: its outcome and the whole run it makes, told to
        ``observer`` and to the run's span; a follow-up question of a conversation is given
        the ``earlier`` turns."""
        facts = {"method": str(method), "protocol": protocol_name(self.protocols, method)}
        with self.spans.run(question, facts) as watching:
            watchers = Tee((watching,) if observer is None else (observer, watching))
            question = question.strip()
            memo = self.memo(question, watchers, earlier)
            watchers.notify(RunStarted(question))
            outcome = answer(method, memo, self.task)
            run = outcome.whole_run(question)
            watchers.notify(MethodFinished(outcome, run))
        return outcome, run

    def tool_specs(self) -> tuple[ToolSpec, ...]:
        """What the loops' models are told they may call (Finish last)."""
        return self.tools().specs
