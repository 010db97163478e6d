"""One place that builds a run: a :class:`Session` answers questions by the paper's methods.

A session holds everything a question is answered with: the prompts, the model (and what draws
its samples), a fresh tool set for every loop, the protocol of each loop, and the stop rules.
``ask`` and ``eval`` open one from the settings (:func:`open_session`); ``replay --rerun``
builds one from a trace's recording (``traces.replay``), so a run means the same thing
everywhere; ``traces.recorder`` makes a new run's trace from its session.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from react_cli.core.conversation import Earlier
from react_cli.core.errors import UsageError
from react_cli.core.method import Method, Task
from react_cli.core.records import ProtocolName, RetryObserver
from react_cli.core.trajectory import Run
from react_cli.llm.base import LanguageModel, Model, Sampler
from react_cli.loop.events import Ignore, Observer, RunStarted
from react_cli.loop.limits import Limits
from react_cli.loop.prompts import PromptSet
from react_cli.loop.protocol import NO_EARLIER, Protocol
from react_cli.loop.registry import loop_protocols
from react_cli.methods.events import MethodFinished
from react_cli.methods.memo import Memo, Sampling
from react_cli.methods.outcome import answer
from react_cli.methods.results import Outcome
from react_cli.settings.settings import Settings
from react_cli.tools.base import Tool, ToolSet, ToolSpec
from react_cli.tools.registry import registered_tools
from react_cli.tools.wikipedia import wikipedia_tools
from react_cli.wiki.base import WikiBackend

if TYPE_CHECKING:
    from react_cli.cache.store import CacheStore
    from react_cli.infra.limiter import Limiter
    from react_cli.infra.retry import RetryPolicy
    from react_cli.llm import OpenAIClient
    from react_cli.llm.sampling import EndpointFacts
    from react_cli.tools.toolbox import Toolbox

DebugLog = Callable[[str], None]
OPENAI_HOST = "api.openai.com"


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
    made (None for a re-run, which makes no trace).
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

    @property
    def task(self) -> Task:
        return self.prompts.task

    def memo(
        self, question: str, observer: Observer | None = None, earlier: Earlier = NO_EARLIER
    ) -> Memo:
        """A question's building blocks, made on demand and shared by its methods (a
        follow-up question's given its conversation's ``earlier`` turns)."""
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
        )

    def answer(
        self,
        question: str,
        method: Method,
        observer: Observer | None = None,
        earlier: Earlier = NO_EARLIER,
    ) -> tuple[Outcome, Run]:
        """``question`` answered by ``method``: its outcome and the whole run it makes; a
        follow-up question of a conversation is given the ``earlier`` turns."""
        observer = observer or Ignore()
        question = question.strip()
        memo = self.memo(question, observer, earlier)
        observer.notify(RunStarted(question))
        outcome = answer(method, memo, self.task)
        run = outcome.whole_run(question)
        observer.notify(MethodFinished(outcome, run))
        return outcome, run

    def tool_specs(self) -> tuple[ToolSpec, ...]:
        """What the loops' models are told they may call (Finish last)."""
        return self.tools().specs


def run_limits(settings: Settings) -> Limits:
    """The loop's stop rules: each the setting of its name, but --timeout (the run's) and the
    prices --max-cost counts from."""
    own = ("timeout_s", "prices")
    same = {f.name: getattr(settings, f.name) for f in fields(Limits) if f.name not in own}
    return Limits(timeout_s=settings.run_timeout_s, prices=settings.prices(), **same)


def hybrid_steps(settings: Settings, task: Task) -> int:
    """The hybrids' ReAct step limit: --max-steps or ``hybrid_max_steps`` if given, else the
    paper's for the task (7 HotpotQA, 5 FEVER)."""
    return settings.hybrid_max_steps or task.hybrid_steps


def open_session(
    settings: Settings,
    prompts: PromptSet,
    *,
    model: LanguageModel,
    backend: WikiBackend,
    toolbox: Toolbox | None = None,
) -> Session:
    """The session ``settings`` describe, over ``model`` and ``backend`` (built by
    :func:`build_model` and :func:`build_backend`; an eval gives each worker its own model and
    all of them one backend) and the tools ``toolbox`` adds (``tools.toolbox.open_toolbox``:
    opened by the command, which closes it)."""
    return Session(
        prompts=prompts,
        model=model,
        tools=tool_sets(backend, settings.max_observation_chars, toolbox),
        limits=run_limits(settings),
        hybrid_steps=hybrid_steps(settings, prompts.task),
        sampling=Sampling(settings.samples, settings.sample_temperature),
        sampler=model,
        protocols=settings_protocols(settings),
        settings=settings,
    )


def tool_sets(
    backend: WikiBackend, max_observation_chars: int, toolbox: Toolbox | None = None
) -> Callable[[], ToolSet]:
    """A maker of each loop's own tools: Wikipedia's Search and Lookup over ``backend`` (unless
    the toolbox turns them off), the toolbox's (files', packages', MCP servers'), and the
    tools registered in this process (``tools.registry``)."""

    def tools() -> ToolSet:
        wiki: Iterable[Tool] = ()
        if toolbox is None or toolbox.wiki:
            wiki = wikipedia_tools(backend, max_observation_chars=max_observation_chars)
        extra = toolbox.extra() if toolbox is not None else []
        return ToolSet([*wiki, *extra, *registered_tools()])

    return tools


def retry_policy(settings: Settings) -> RetryPolicy:
    """The retry policy both the model client and the Wikipedia backend use."""
    from react_cli.infra.retry import RetryPolicy

    return RetryPolicy(
        retries=settings.retries,
        backoff_factor=settings.retry_backoff_s,
        backoff_jitter_s=settings.retry_backoff_s / 2,
        max_retry_after_s=settings.max_retry_after_s,
    )


def check_key(settings: Settings) -> None:
    """OpenAI itself always needs a key: say so at once, not after retries fail."""
    if not settings.api_key and urlsplit(settings.base_url).hostname == OPENAI_HOST:
        raise UsageError("no API key: set OPENAI_API_KEY, or --base-url for a local server")


def build_model(
    settings: Settings,
    debug_log: DebugLog | None = None,
    on_retry: RetryObserver | None = None,
    facts: EndpointFacts | None = None,
    on_warning: DebugLog | None = None,
    cache: CacheStore | None = None,
) -> LanguageModel:
    """The client a run calls, for its loop and its samples; ``facts`` what it learns about
    the endpoint (shared by an eval's clients; else the run's own, with an adaptive
    limiter), ``on_warning`` told of what it had to give up (a grammar the endpoint refused);
    behind ``cache`` when given (``--cache``)."""
    if not settings.model:
        raise UsageError(
            "no model configured: pass -m/--model, set REACT_CLI_MODEL, "
            'or put model = "..." in the config file'
        )
    client = model_client(settings, debug_log, on_retry, facts, on_warning)
    if cache is None:
        return client
    from react_cli.cache.model import CachedModel

    return CachedModel(client, cache)


def model_client(
    settings: Settings,
    debug_log: DebugLog | None = None,
    on_retry: RetryObserver | None = None,
    facts: EndpointFacts | None = None,
    on_warning: DebugLog | None = None,
) -> OpenAIClient:
    """The endpoint's client as the settings describe it (``models`` needs no model name)."""
    from react_cli.llm import OpenAIClient

    check_key(settings)
    if facts is None:
        facts = endpoint_facts(None)
    return OpenAIClient(
        base_url=settings.base_url,
        model=settings.model or "",
        api_key=settings.api_key,
        api=settings.api,
        temperature=settings.temperature,
        max_tokens=settings.max_tokens,
        stream=settings.stream,
        timeout_s=settings.timeout_s,
        policy=retry_policy(settings),
        debug_log=debug_log,
        on_retry=on_retry,
        sample_concurrency=settings.sample_concurrency,
        facts=facts,
        on_warning=on_warning,
    )


def endpoint_facts(concurrency: int | None, max_concurrency: int | None = None) -> EndpointFacts:
    """What every client of a run shares about its endpoint, starting with its limiter: at
    ``concurrency`` requests at once, or (None: ``auto``) adaptive up to ``max_concurrency``."""
    from react_cli.infra.limiter import MAX_LEVEL, Limiter
    from react_cli.llm.sampling import EndpointFacts

    return EndpointFacts(limiter=Limiter.of(concurrency, max_concurrency or MAX_LEVEL))


def wiki_limiter(concurrency: int | None) -> Limiter:
    """The Wikipedia host's limiter: at ``concurrency`` requests at once, or (None: ``auto``)
    adaptive up to a few (``WIKI_MAX_LEVEL``)."""
    from react_cli.infra.limiter import WIKI_MAX_LEVEL, Limiter

    return Limiter.of(concurrency, WIKI_MAX_LEVEL)


def build_backend(
    settings: Settings,
    debug_log: DebugLog | None = None,
    on_retry: RetryObserver | None = None,
    limiter: Limiter | None = None,
    cache: CacheStore | None = None,
) -> WikiBackend:
    """The Wikipedia backend ``--wiki`` names; one may serve many sessions (and threads);
    ``limiter`` lets its requests through (else an adaptive one of its own); behind ``cache``
    when given (``--cache``)."""
    from react_cli.wiki import backend_identity, open_backend

    backend = open_backend(
        settings.wiki,
        contact=settings.contact,
        policy=retry_policy(settings),
        timeout_s=settings.wiki_timeout_s,
        variant=settings.variant,
        debug_log=debug_log,
        on_retry=on_retry,
        limiter=limiter or wiki_limiter(None),
    )
    if cache is None:
        return backend
    from react_cli.cache.wiki import CachedBackend

    return CachedBackend(backend, backend_identity(settings.wiki, settings.variant), cache)


def open_cache(settings: Settings, warn: Callable[[str], None]) -> CacheStore | None:
    """The home directory's cache when ``--cache`` (``cache = true``) asks for it."""
    if not settings.cache:
        return None
    from react_cli.cache import open_cache as open_store
    from react_cli.settings.resolve import home_dir

    return open_store(home_dir(), settings.cache_max_mb, warn)
