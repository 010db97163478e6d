"""A command's session, opened and closed in one ``with``, as httpx's ``Client`` owns its
transport: ``with open_session(settings, prompts) as opened:`` holds every resource its runs
need until the block ends, however it ends.

It opens them in one order: the spans, the cache, the model's client, the toolboxes of its
registry (each made once, so what it needs opens now: Wikipedia's backend), the users' tools
(files, packages, MCP servers started), the consent. A command states what it uses
(:class:`Uses`): a run uses them all (no tools for methods that call none), ``replay
--live-tools`` the tools alone, ``react-cli tools`` the users' tools, ``react-cli models`` the
endpoint, ``data get`` and ``wiki get`` the downloads' client. Nothing is opened twice,
nothing a command does not use is opened at all.

It closes them all when the block ends: an answer, an error, Ctrl-C, SIGTERM or SIGHUP (which
``infra.interrupts`` raises as KeyboardInterrupt); the spans first, then the servers, the
clients and the cache, so what a block printed last (an answer, a summary) waits for none of
them. A signal that stops the block (or the opening) is held first, and the command is given
``on_interrupt`` before anything closes, to keep what it owes (a trace saying the run stopped).
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from typing import TYPE_CHECKING, TypeVar

from react_cli.core.method import Method
from react_cli.infra import interrupts
from react_cli.loop.limits import hybrid_steps, run_limits
from react_cli.loop.prompts import PromptSet
from react_cli.methods.memo import Sampling
from react_cli.session import builders
from react_cli.session.base import Session, settings_protocols
from react_cli.session.builders import Shared, Told
from react_cli.settings.settings import Settings
from react_cli.settings.validation import check_endpoint
from react_cli.telemetry.base import NoSpans, Spans
from react_cli.tools.base import ToolSet, ToolSpec
from react_cli.tools.consent import ByRules, Question, ToolRules
from react_cli.tools.registry import BUILT_IN, Provider, ToolRegistry, declared, tool_set
from react_cli.tools.toolbox import Toolbox, ToolContext

if TYPE_CHECKING:
    from react_cli.cache.store import CacheStore
    from react_cli.infra.download import Fetcher
    from react_cli.llm.base import LanguageModel
    from react_cli.llm.client import OpenAIClient
    from react_cli.wiki.base import WikiBackend

B = TypeVar("B", bound=Toolbox)


class Uses(enum.Flag):
    """What a command's session opens."""

    NOTHING = 0
    ENDPOINT = enum.auto()  # the endpoint's client alone, no model name needed (``models``)
    MODEL = enum.auto()  # a run's model: the client (a name needed), behind the cache
    TOOLBOXES = enum.auto()  # the registry's toolboxes, each made once (Wikipedia's backend)
    USER_TOOLS = enum.auto()  # files', packages' and MCP servers' tools (servers started)
    SPANS = enum.auto()
    DOWNLOADS = enum.auto()  # the downloads' client (``data get``, ``wiki get``)
    TOOLS = TOOLBOXES | USER_TOOLS
    RUN = MODEL | TOOLS | SPANS


class OpenSession:
    """What :func:`open_session` holds open for a command (see the module docstring)."""

    def __init__(
        self,
        settings: Settings,
        *,
        told: Told,
        question: Question | None,
        shared: Shared,
        registry: ToolRegistry,
    ) -> None:
        self.settings = settings
        self.told = told
        self.shared = shared
        self.consent = ByRules(ToolRules.of(settings), question)
        self.spans: Spans = NoSpans()
        self._spans_closed = False
        self.providers: list[Provider] = []
        self._registry = registry
        self._cache: CacheStore | None = None
        self._backend: WikiBackend | None = None
        self._lock = threading.Lock()
        self._closing = ExitStack()
        self._session: Session | None = None
        self._endpoint: OpenAIClient | None = None
        self._fetcher: Fetcher | None = None
        self._context = ToolContext(self.backend, settings.max_observation_chars)

    def open(self, prompts: PromptSet | None, uses: Uses) -> None:
        """Open what ``uses`` names, in the module docstring's order."""
        settings, told = self.settings, self.told
        model: LanguageModel | None = None
        if Uses.MODEL in uses:
            check_endpoint(settings)  # before anything starts
        if Uses.SPANS in uses:
            self.spans = builders.build_spans(settings, told)
        if Uses.MODEL in uses:
            self._cache = builders.open_cache(settings, told)
            if self._cache is not None:
                self._closing.callback(self._cache.close)
            model = self.model()
        if Uses.ENDPOINT in uses:
            self._endpoint = self._client(builders.model_client(settings, told))
        if Uses.DOWNLOADS in uses:
            self._fetcher = fetcher = builders.build_fetcher(settings, told)
            self._closing.callback(fetcher.close)
        self.providers = self._registry.providers(settings, self._context)
        if Uses.TOOLBOXES in uses:
            for provider in self.providers:
                provider.make()  # what it needs opens now, in order
        if Uses.USER_TOOLS in uses:
            users = builders.build_user_tools(settings, self.providers, told)
            self._closing.callback(users.close)  # closed before the clients and the cache
            self.providers.append(users.provider())
        if prompts is not None and model is not None:
            self._session = Session(
                prompts=prompts,
                model=model,
                tools=self.tools,
                limits=run_limits(settings),
                hybrid_steps=hybrid_steps(settings, prompts.task),
                sampling=Sampling(settings.samples, settings.sample_temperature),
                sampler=model,
                protocols=settings_protocols(settings),
                settings=settings,
                spans=self.spans,
            )

    @property
    def session(self) -> Session:
        """The session its runs are answered with (a session opened with prompts and the
        model)."""
        if self._session is None:
            raise RuntimeError("a session opened without prompts or a model answers nothing")
        return self._session

    @property
    def endpoint(self) -> OpenAIClient:
        """The endpoint's client (a session that uses ``ENDPOINT``)."""
        if self._endpoint is None:
            raise RuntimeError("a session opened without the endpoint has no client")
        return self._endpoint

    @property
    def fetcher(self) -> Fetcher:
        """The downloads' client (a session that uses ``DOWNLOADS``)."""
        if self._fetcher is None:
            raise RuntimeError("a session opened without downloads has no fetcher")
        return self._fetcher

    def model(self) -> LanguageModel:
        """A client of its own (an eval's worker's), sharing what the others learn of the
        endpoint and the cache; closed with the session."""
        replicas = self.shared.replicas
        if replicas is None:
            client = builders.build_model(self.settings, self.told, self.shared.endpoint)
            return builders.behind_cache(self._client(client), self._cache)
        from react_cli.llm.replicas import ReplicaModel

        check_endpoint(self.settings)
        clients = tuple(
            self._client(builders.model_client(self.settings, self.told, r.facts, r.url))
            for r in replicas.replicas
        )
        return builders.behind_cache(ReplicaModel(replicas, clients), self._cache)

    def backend(self) -> WikiBackend:
        """Wikipedia's backend, opened for the first box that asks (behind the cache), and
        the hint a run about to call it may owe."""
        with self._lock:
            if self._backend is None:
                cache, told = self._cache, self.told
                backend = builders.build_backend(self.settings, told, self.shared.wiki, cache)
                if told.hint is not None:
                    told.hint(self.settings)
                self._backend = backend
            return self._backend

    def toolbox(self, kind: type[B]) -> B:
        """A box of ``kind`` made as a run's are (``react-cli wiki``: Wikipedia's)."""
        return kind.made(self._context)

    def tools(self, *, keep_denied: bool = False) -> ToolSet:
        """A run's own tools, every provider's, under the session's consent (``keep_denied``:
        those a deny rule names kept, each call refused, for a re-run whose recording lists
        them)."""
        return tool_set(self.providers, self.consent, keep_denied=keep_denied)

    def tool_specs(self) -> tuple[ToolSpec, ...]:
        """Every tool its runs have, Finish last, without making one."""
        return declared(self.providers)

    def close_spans(self) -> None:
        """Send what is left of the spans (at most ``otel_timeout_s``), once."""
        if not self._spans_closed:
            self._spans_closed = True
            self.spans.close()

    def close(self) -> None:
        """Close everything, the spans first (see the module docstring)."""
        try:
            self.close_spans()
        finally:
            self._closing.close()

    def _client(self, client: OpenAIClient) -> OpenAIClient:
        self._closing.callback(client.close)
        return client


@contextmanager
def open_session(
    settings: Settings,
    prompts: PromptSet | None = None,
    *,
    uses: Uses | None = None,
    methods: Sequence[Method] | None = None,
    told: Told | None = None,
    question: Question | None = None,
    shared: Shared | None = None,
    registry: ToolRegistry = BUILT_IN,
    on_interrupt: Callable[[], None] | None = None,
) -> Iterator[OpenSession]:
    """The session of a command with ``settings`` (see the module docstring): a run's when it
    is given its ``prompts`` (everything, unless ``uses`` says less), else what ``uses`` names.

    ``methods`` are those a run's answer by (the settings' method by default): its tools are
    opened only for methods that call them. ``told`` hears its notices, ``question`` asks a
    call's consent (None: the rules alone decide), ``shared`` holds the limiters of every
    request (an eval's), ``registry`` the toolboxes its runs may have (react-cli's own by
    default). ``on_interrupt`` runs when a signal stops the block, once it is held and before
    anything closes."""
    opened = OpenSession(
        settings,
        told=told or Told(),
        question=question,
        shared=shared or Shared.of(settings),
        registry=registry,
    )
    if uses is None:
        uses = Uses.RUN if prompts is not None else Uses.NOTHING
        if not any(method.uses_tools for method in methods or (Method(settings.method),)):
            uses &= ~Uses.TOOLS  # Standard and CoT call none: no server to start
    try:
        opened.open(prompts, uses)
        yield opened
    except KeyboardInterrupt:
        interrupts.hold()  # what on_interrupt writes gets written
        try:
            opened.close_spans()
            if on_interrupt is not None:
                on_interrupt()
        finally:
            opened.close()
        raise
    except BaseException:
        opened.close()
        raise
    opened.close()
