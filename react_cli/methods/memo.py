"""One question's building blocks, each run at most once, so several methods share them.

The blocks are the ReAct loop, the Act loop, Standard's and CoT's one greedy call (temperature
0, as in the paper), and CoT-SC's samples. A method asks for a loop with its own step limit:
a run made with a longer limit answers a shorter one too (its first steps are the same steps;
an answer counts only if it came within the shorter limit), so :meth:`Memo.plan` makes the one
run long enough for every method. ``calls_made`` counts the model calls actually made. A
follow-up question of a conversation gives every block the same earlier turns (each loop's
protocol shows them its way, the samples' prompts as the text protocol does) and each loop's
tools what the conversation carries over (the page of its last Search).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace

from react_cli.core.conversation import Earlier
from react_cli.core.errors import LLMError, UsageError
from react_cli.core.method import Method
from react_cli.core.records import StopReason, Usage
from react_cli.core.trajectory import Run
from react_cli.infra.deadline import Cancel, Deadline
from react_cli.llm.base import CallKind, Model, ModelRequest, Sampler
from react_cli.loop.agent import TIME_SLACK_S, Agent
from react_cli.loop.events import EarlierShown, Forward, Ignore, Observer, RunFinished, RunStarted
from react_cli.loop.limits import Limits
from react_cli.loop.prompts import PromptTemplate
from react_cli.loop.protocol import NO_EARLIER, Protocol
from react_cli.loop.text.cutter import ObservationCutter
from react_cli.loop.text.protocol import STOP_SEQUENCES, earlier_block
from react_cli.methods.answers import read_answer
from react_cli.methods.events import SamplingFinished, SamplingStarted
from react_cli.methods.record import Sample, loop_calls
from react_cli.methods.results import SampleSet
from react_cli.tools.base import ToolSet

Need = tuple[int, bool]
"""What a method asks of a loop: its step limit, and whether to force an answer at it."""


@dataclass(frozen=True)
class Sampling:
    """How CoT-SC samples: ``samples`` completions at ``temperature`` (the paper: 21 at 0.7)."""

    samples: int = 21
    temperature: float = 0.7


class NotRecorded(UsageError):
    """A re-run of a trace needs completions the trace does not hold."""


def derive(run: Run, made: Need, need: Need) -> Run | None:
    """The run a loop with limit and force ``need`` makes, from ``run`` made with ``made``;
    None when it cannot be told (a forced answer at a limit the run went past or never
    reached, or steps beyond the run's limit)."""
    (limit, force), (made_limit, made_force) = need, made
    steps = [step for step in run.steps if not step.forced]
    if len(steps) > limit:  # it went past the limit: the shorter run stopped there
        return None if force else truncated(run, limit)
    if run.stop_reason != StopReason.MAX_STEPS and not run.forced:
        return run  # it ended by itself within the limit
    if made_limit != limit:  # it stopped at its own, shorter limit
        return None
    if force == made_force:
        return run
    return None if force else truncated(run, limit)


def truncated(run: Run, limit: int) -> Run:
    """``run``'s first ``limit`` steps as a run of its own that reached its step limit."""
    steps = [step for step in run.steps if not step.forced][:limit]
    return Run(
        question=run.question,
        answer=None,
        stop_reason=StopReason.MAX_STEPS,
        steps=steps,
        usage=sum((step.usage for step in steps), Usage()),
        duration_s=sum(step.latency_s + step.tool_latency_s for step in steps),
    )


class Memo:
    """A question's blocks, run on demand and kept; every model and tool call gets the one
    ``deadline`` (``--timeout`` bounds the whole question; ``cancel`` ends it early). Each
    loop speaks the protocol of its kind (ReAct with thoughts, Act without) and gets a fresh
    tool set (Lookup reads the page of the loop's own last Search)."""

    def __init__(
        self,
        question: str,
        *,
        prompts: Mapping[Method, PromptTemplate],
        model: Model,
        protocols: Mapping[Method, Protocol],
        tools: Callable[[], ToolSet],
        limits: Limits,
        hybrid_steps: int,
        sampler: Sampler | None = None,
        sampling: Sampling = Sampling(),
        observer: Observer | None = None,
        clock: Callable[[], float] = time.monotonic,
        earlier: Earlier = NO_EARLIER,
        cancel: Cancel | None = None,
    ) -> None:
        self.question = question.strip()
        self.earlier = earlier
        self.prompts, self.model, self.sampler, self.tools = prompts, model, sampler, tools
        self.protocols = protocols
        self.limits, self.hybrid_steps, self.sampling = limits, hybrid_steps, sampling
        self.observer = observer or Ignore()
        self.clock = clock
        self.deadline = Deadline.after(limits.timeout_s, cancel)
        self.calls_made = 0
        self._runs: dict[Method, dict[Need, Run]] = {}
        self._longest: dict[Method, Need] = {}
        self._sets: dict[Method, SampleSet] = {}
        self._seeds: dict[Method, SampleSet] = {}

    def need(self, method: Method, loop: Method) -> Need:
        """What ``method`` asks of ``loop``: a hybrid's own step limit and no forced answer
        (it backs off instead), else the configured limit and ``--force-answer``."""
        if method.hybrid:
            return self.hybrid_steps, False
        return self.limits.max_steps, self.limits.force_answer

    def plan(self, methods: Iterable[Method]) -> None:
        """Make each loop's one run long enough for every method in ``methods``."""
        for method in methods:
            for loop in (part for part in method.parts if part.loop):
                need = self.need(method, loop)
                longest = self._longest.get(loop)
                if longest is None or need[0] > longest[0] or need == (longest[0], True):
                    self._longest[loop] = need

    def loop(self, kind: Method, need: Need) -> Run:
        """The run of loop ``kind`` (ReAct or Act) a method with ``need`` gets."""
        made = self._runs.setdefault(kind, {})
        for run_need, run in made.items():
            view = derive(run, run_need, need)
            if view is not None:
                return view
        longest = self._longest.get(kind, need)
        run_need = longest if derive_possible(longest, need) else need
        agent = Agent(
            self.model,
            self.protocols[kind],
            limits=replace(self.limits, max_steps=run_need[0], force_answer=run_need[1]),
            observer=Forward(self.observer, skip=(RunStarted, RunFinished)),
            clock=self.clock,
        )
        tools = self.tools()
        tools.resume(self.earlier.carried)
        run = agent.run(self.prompts[kind], self.question, tools, self.deadline, self.earlier)
        self.calls_made += loop_calls(run)
        made[run_need] = run
        return derive(run, run_need, need) or run

    def samples(self, kind: Method) -> SampleSet:
        """Standard's or CoT's greedy call, or CoT-SC's samples (``kind``), made once."""
        if kind not in self._sets:
            self._sets[kind] = self._sample(kind)
        return self._sets[kind]

    def seed(self, recorded: SampleSet) -> None:
        """Completions made before (a recorded trace's), used instead of calling the model."""
        self._seeds[recorded.kind] = recorded

    def _sample(self, kind: Method) -> SampleSet:
        many = kind is Method.COT_SC
        n = self.sampling.samples if many else 1
        temperature = self.sampling.temperature if many else 0.0
        seeded = self._seeds.get(kind)
        if seeded is not None:
            self.observer.notify(SamplingStarted(kind, len(seeded.samples), temperature))
            self.observer.notify(SamplingFinished(seeded))
            return seeded
        if self.sampler is None:  # a re-run of a trace, which holds no such completions
            raise NotRecorded(f"the trace holds no {kind.label} completions")
        block, shown = earlier_block(self.earlier)
        if self.earlier.turns:
            self.observer.notify(EarlierShown(len(shown), len(self.earlier.turns)))
        prompt = self.prompts[kind.prompt].prefix(self.question, earlier=block)
        request = ModelRequest(CallKind.SAMPLE, prompt, STOP_SEQUENCES, cutter=ObservationCutter)
        self.observer.notify(SamplingStarted(kind, n, temperature, request))
        started = self.clock()
        try:
            sampled = self.sampler.sample(
                request, n=n, temperature=temperature, deadline=self.deadline
            )
        except LLMError as exc:
            late = self.deadline.within(TIME_SLACK_S)
            reason = StopReason.TIMEOUT if late else StopReason.LLM_ERROR
            result = SampleSet(kind, (), 1, self.clock() - started, reason, str(exc), exc)
        except KeyboardInterrupt:
            seconds, stopped = self.clock() - started, StopReason.INTERRUPTED
            result = SampleSet(kind, (), 0, seconds, stopped, "interrupted by the user")
        else:
            samples = tuple(
                Sample(
                    raw=c.text,
                    answer=read_answer(kind.prompt, c.text),
                    usage=c.usage or Usage.estimate(prompt, c.text),
                    latency_s=c.latency_s,
                    retries=c.retries,
                    cached_usage=(c.cached_usage or Usage()) if c.cached else None,
                )
                for c in sampled.completions
            )
            result = SampleSet(kind, samples, sampled.requests, self.clock() - started)
        self.calls_made += result.calls
        self.observer.notify(SamplingFinished(result))
        return result


def derive_possible(made: Need, need: Need) -> bool:
    """Whether a run made with ``made`` can always answer ``need``: a forced answer needs a
    run made with that very limit (and forcing)."""
    return made == need or (need[0] <= made[0] and not need[1])
