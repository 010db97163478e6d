"""What opens each resource a session holds: the model's client, the Wikipedia backend, the
cache, the spans, the users' tools; and the limiters their requests share.

Only :class:`~react_cli.session.opened.OpenSession` calls these (a test checks that no command
does), in one order, and closes what they opened.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from react_cli.core.records import RetryObserver
from react_cli.settings.settings import Settings
from react_cli.settings.validation import check_endpoint

if TYPE_CHECKING:
    from react_cli.cache.model import CacheableModel
    from react_cli.cache.store import CacheStore
    from react_cli.infra.download import Fetcher
    from react_cli.infra.limiter import Limiter
    from react_cli.infra.retry import RetryPolicy
    from react_cli.llm.base import LanguageModel
    from react_cli.llm.client import OpenAIClient
    from react_cli.llm.endpoint import EndpointFacts
    from react_cli.llm.replicas import ReplicaSet
    from react_cli.telemetry.base import Spans
    from react_cli.tools.registry import Provider
    from react_cli.tools.users import UserTools
    from react_cli.wiki.base import WikiBackend

DebugLog = Callable[[str], None]


def _unheard(message: str) -> None:
    """Where notices go that nobody asked to hear."""


@dataclass(frozen=True)
class Told:
    """Where a session's notices go: warnings (a grammar the endpoint refused, what a
    server's listing left out, a cache that cannot be used, spans that cannot be sent), notes
    of what was learnt (an endpoint that cuts streams), each
    retry wait as it starts, ``--debug``'s lines, and the hint a run about to call Wikipedia
    may owe (``hint``: given the settings)."""

    warn: Callable[[str], None] = _unheard
    note: Callable[[str], None] = _unheard  # what was learnt (an endpoint that cuts streams)
    on_retry: RetryObserver | None = None
    debug_log: DebugLog | None = None
    hint: Callable[[Settings], None] | None = None


def _shared_facts() -> EndpointFacts:
    return endpoint_facts(None)


def _shared_wiki() -> Limiter:
    return wiki_limiter(None)


@dataclass(frozen=True)
class Shared:
    """What every client of a command's runs shares: what it learns of the endpoint, its
    limiter among it, and the Wikipedia host's limiter; by default adaptive ones (an eval
    gives its levels: :func:`shared`)."""

    endpoint: EndpointFacts = field(default_factory=_shared_facts)
    wiki: Limiter = field(default_factory=_shared_wiki)
    replicas: ReplicaSet | None = None  # --base-url repeated: ``endpoint`` is the first's

    @classmethod
    def of(cls, settings: Settings) -> Shared:
        """A command's (not an eval's): adaptive limiters, and the settings' replicas."""
        if not settings.replicas:
            return cls()
        return cls.at(None, None, None, (settings.base_url, *settings.replicas))

    @classmethod
    def at(
        cls,
        concurrency: int | None,
        max_concurrency: int | None,
        wiki: int | None,
        urls: tuple[str, ...] = (),
    ) -> Shared:
        """An eval's: ``concurrency`` model requests at once (None: adaptive up to
        ``max_concurrency``), ``wiki`` Wikipedia requests (None: adaptive); with more than one
        of ``urls``, those replicas, each at that level."""
        replicas = None
        if len(urls) > 1:
            from react_cli.llm.replicas import ReplicaSet

            replicas = ReplicaSet(urls, lambda: endpoint_facts(concurrency, max_concurrency))
        first = (
            replicas.replicas[0].facts if replicas else endpoint_facts(concurrency, max_concurrency)
        )
        return cls(first, wiki_limiter(wiki), replicas)


def retry_policy(settings: Settings) -> RetryPolicy:
    """The retry policy both the model client and the Wikipedia backend use."""
    from react_cli.infra.retry import RetryPolicy

    return RetryPolicy(
        retries=settings.retries,
        backoff_factor=settings.retry_backoff_s,
        backoff_jitter_s=settings.retry_backoff_s / 2,
        max_retry_after_s=settings.max_retry_after_s,
    )


def build_fetcher(settings: Settings, told: Told) -> Fetcher:
    """The downloads' client: the settings' retries and read timeout, a Wikimedia-style
    User-Agent (with the contact), each retry wait and ``--debug``'s lines told."""
    from react_cli.infra.download import Fetcher
    from react_cli.infra.http import user_agent

    return Fetcher.open(
        user_agent(settings.contact),
        retry_policy(settings),
        settings.download_timeout_s,
        told.on_retry,
        told.debug_log,
    )


def build_model(settings: Settings, told: Told, facts: EndpointFacts) -> OpenAIClient:
    """The client a run calls, for its loop and its samples; ``facts`` what it learns about
    the endpoint (shared by every client of the command); ``told`` hears what it had to give
    up (a grammar the endpoint refused)."""
    check_endpoint(settings)
    return model_client(settings, told, facts)


def behind_cache(client: CacheableModel, cache: CacheStore | None) -> LanguageModel:
    """``client`` behind the cache, when there is one (``--cache``)."""
    if cache is None:
        return client
    from react_cli.cache.model import CachedModel

    return CachedModel(client, cache)


def model_client(
    settings: Settings, told: Told, facts: EndpointFacts | None = None, url: str | None = None
) -> OpenAIClient:
    """The endpoint's client as the settings describe it (``models`` needs no model name),
    at ``url`` (a replica's) or the base URL."""
    from react_cli.llm.client import OpenAIClient

    check_endpoint(settings, model=False)
    return OpenAIClient(
        base_url=url or settings.base_url,
        model=settings.model or "",
        api_key=settings.api_key,
        api=settings.api,
        temperature=settings.temperature,
        max_tokens=settings.max_tokens,
        stream=settings.stream,
        timeout_s=settings.timeout_s,
        policy=retry_policy(settings),
        debug_log=told.debug_log,
        on_retry=told.on_retry,
        sample_concurrency=settings.sample_concurrency,
        facts=facts or endpoint_facts(None),
        on_warning=told.warn,
        on_note=told.note,
        service_tier=settings.service_tier,
    )


def endpoint_facts(concurrency: int | None, max_concurrency: int | None = None) -> EndpointFacts:
    """What every client of a run shares about its endpoint, starting with its limiter: at
    ``concurrency`` requests at once, or (None: ``auto``) adaptive up to ``max_concurrency``."""
    from react_cli.infra.limiter import MAX_LEVEL, Limiter
    from react_cli.llm.endpoint import EndpointFacts

    limiter = Limiter.of(concurrency, max_concurrency or MAX_LEVEL, probe=True)
    return EndpointFacts(limiter=limiter)


def wiki_limiter(concurrency: int | None) -> Limiter:
    """The Wikipedia host's limiter: at ``concurrency`` requests at once, or (None: ``auto``)
    adaptive up to a few (``WIKI_MAX_LEVEL``)."""
    from react_cli.infra.limiter import WIKI_MAX_LEVEL, Limiter

    return Limiter.of(concurrency, WIKI_MAX_LEVEL)


def build_backend(
    settings: Settings, told: Told, limiter: Limiter, cache: CacheStore | None = None
) -> WikiBackend:
    """The Wikipedia backend ``--wiki`` names; one serves every run of a command (and its
    threads); ``limiter`` lets its requests through; behind ``cache`` when given."""
    from react_cli.wiki import backend_identity, open_backend

    backend = open_backend(
        settings.wiki,
        contact=settings.contact,
        policy=retry_policy(settings),
        timeout_s=settings.wiki_timeout_s,
        variant=settings.variant,
        debug_log=told.debug_log,
        on_retry=told.on_retry,
        limiter=limiter,
    )
    if cache is None:
        return backend
    from react_cli.cache.wiki import CachedBackend

    return CachedBackend(backend, backend_identity(settings.wiki, settings.variant), cache)


def open_cache(settings: Settings, told: Told) -> CacheStore | None:
    """The home directory's cache when ``--cache`` (``cache = true``) asks for it."""
    if not settings.cache:
        return None
    from react_cli.cache import open_cache as open_store
    from react_cli.settings.resolve import home_dir

    return open_store(home_dir(), settings.cache_max_mb, told.warn)


def build_spans(settings: Settings, told: Told) -> Spans:
    """The spans the settings ask for (off, and free, unless asked for)."""
    from react_cli.telemetry.setup import open_spans

    return open_spans(settings, told.warn)


def build_user_tools(settings: Settings, beside: Iterable[Provider], told: Told) -> UserTools:
    """The users' tools (files, packages, MCP servers started) beside the ``beside`` sets."""
    from react_cli.tools.users import open_user_tools

    return open_user_tools(settings, beside, warn=told.warn)
