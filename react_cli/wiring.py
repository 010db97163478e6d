"""Wiring: model, tools and run configuration from settings; one question run, its trace kept.

Shared by ``ask`` and by batch commands, so a run means the same thing everywhere.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import fields
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from react_cli.agent import Agent, RunObserver
from react_cli.config import CONFIG_NAME, Settings, home_dir
from react_cli.errors import UsageError
from react_cli.prompts import PromptTemplate
from react_cli.records import Model, RetryObserver, RetryWait, StopReason, Tools, Usage
from react_cli.redaction import redact_url
from react_cli.runconfig import Limits, RunConfig
from react_cli.trace import Trace, new_run_id, now_utc, write_trace
from react_cli.trajectory import Run
from react_cli.wiki.base import WikiBackend
from react_cli.wording import plural

if TYPE_CHECKING:
    from react_cli.llm import OpenAIClient
    from react_cli.retry import RetryPolicy

DebugLog = Callable[[str], None]
OPENAI_HOST = "api.openai.com"
WIKIMEDIA_DOMAINS = ("wikipedia.org", "wikimedia.org", "wikidata.org", "wiktionary.org")
WIKIMEDIA_SUFFIXES = tuple(f".{domain}" for domain in WIKIMEDIA_DOMAINS)
CONTACT_HINT_MARK = ".contact-hint-shown"


def stderr_debug_log(line: str) -> None:
    print(f"debug: {line}", file=sys.stderr, flush=True)


def stderr_retry_notice(wait: RetryWait) -> None:
    """Each retry wait on stderr as it starts, so a slow run never looks hung."""
    print(wait, file=sys.stderr, flush=True)


def retry_policy(settings: Settings) -> RetryPolicy:
    """The retry policy both the model client and the Wikipedia backend use."""
    from react_cli.retry import RetryPolicy

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
    settings: Settings, debug_log: DebugLog | None = None, on_retry: RetryObserver | None = None
) -> Model:
    if not settings.model:
        raise UsageError(
            "no model configured: pass -m/--model, set REACT_CLI_MODEL, "
            'or put model = "..." in the config file'
        )
    return model_client(settings, debug_log, on_retry)


def model_client(
    settings: Settings, debug_log: DebugLog | None = None, on_retry: RetryObserver | None = None
) -> OpenAIClient:
    """The endpoint's client as the settings describe it (``models`` needs no model name)."""
    from react_cli.llm import OpenAIClient

    check_key(settings)
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
    )


def build_backend(
    settings: Settings, debug_log: DebugLog | None = None, on_retry: RetryObserver | None = None
) -> WikiBackend:
    """The Wikipedia backend ``--wiki`` names; one may serve many sessions (and threads)."""
    from react_cli.wiki import open_backend

    return open_backend(
        settings.wiki,
        contact=settings.contact,
        policy=retry_policy(settings),
        timeout_s=settings.wiki_timeout_s,
        variant=settings.variant,
        debug_log=debug_log,
        on_retry=on_retry,
    )


def contact_hint(settings: Settings, home: Path) -> str | None:
    """Wikimedia asks tools for a contact address in their User-Agent: without ``contact``,
    say so once per home directory (a marker file there remembers it)."""
    host = urlsplit(settings.wiki).hostname or ""
    if settings.contact or not (host in WIKIMEDIA_DOMAINS or host.endswith(WIKIMEDIA_SUFFIXES)):
        return None
    mark = home / CONTACT_HINT_MARK
    try:
        home.mkdir(parents=True, exist_ok=True)
        with mark.open("x"):
            pass
    except OSError:  # shown before, or a home that cannot remember it: stay quiet
        return None
    return (
        'Wikipedia asks tools for a contact address: add contact = "you@example.org" to '
        f"{home / CONFIG_NAME} (or set REACT_CLI_CONTACT); shown once"
    )


def show_contact_hint(settings: Settings) -> None:
    """On stderr, when a run is about to call Wikipedia: :func:`contact_hint`, if due."""
    hint = contact_hint(settings, home_dir())
    if hint:
        print(f"hint: {hint}", file=sys.stderr, flush=True)


def build_tools(
    settings: Settings, debug_log: DebugLog | None = None, on_retry: RetryObserver | None = None
) -> Tools:
    from react_cli.wiki.base import WikiSession

    backend = build_backend(settings, debug_log, on_retry)
    return WikiSession(backend, max_observation_chars=settings.max_observation_chars)


def run_config(settings: Settings, template: PromptTemplate) -> RunConfig:
    """How a run with these settings is made, as its trace records it (never a secret)."""
    # every stop rule is the setting of its name, but --timeout (the run's, not a request's)
    same = {f.name: getattr(settings, f.name) for f in fields(Limits) if f.name != "timeout_s"}
    limits = Limits(timeout_s=settings.run_timeout_s, **same)
    copied = ("model", "api", "temperature", "max_tokens", "stream", "variant")
    return RunConfig(
        base_url=redact_url(settings.base_url),
        prompt_name=template.name,
        prompt_sha256=template.sha256,
        wiki=redact_url(settings.wiki) if "://" in settings.wiki else settings.wiki,
        limits=limits,
        **{name: getattr(settings, name) for name in copied},
    )


def max_tokens_warning(max_tokens: int, questions: int | None = None) -> str:
    """The one warning a command prints when replies stopped at ``max_tokens``."""
    where = f" in {plural(questions, 'question')}" if questions else ""
    return f"the model stopped at max_tokens={max_tokens}{where}; raise --max-tokens"


def run_cost(run: Run, settings: Settings) -> dict[str, Any] | None:
    """The run's cost at the configured prices (None without prices), for traces and JSON."""
    prices = settings.prices()
    return None if prices is None else prices.cost(run.usage).to_json()


def run_question(
    question: str,
    *,
    settings: Settings,
    template: PromptTemplate,
    model: Model,
    tools: Tools,
    observer: RunObserver | None = None,
    trace_path: Path | None = None,
    created: datetime | None = None,
    trace_extra: dict[str, Any] | None = None,
) -> Trace:
    """Run the loop once and write its trace (if ``trace_path``), whatever the outcome.

    ``trace_extra`` adds top-level fields to the trace (e.g. where a fork came from)."""
    created = created or now_utc()
    config = run_config(settings, template)
    agent = Agent(model, tools, limits=config.limits, observer=observer)
    run = agent.run(template.prefix(question), question.strip())
    return _finish(run, settings, config, template, trace_path, created, trace_extra)


def write_interrupted_trace(
    question: str,
    *,
    settings: Settings,
    template: PromptTemplate,
    path: Path,
    created: datetime,
    extra: dict[str, Any] | None = None,
) -> Trace:
    """The trace of a run Ctrl-C stopped before its first step (while it was being set up)."""
    duration = (now_utc() - created).total_seconds()
    run = Run(
        question=question.strip(),
        answer=None,
        stop_reason=StopReason.INTERRUPTED,
        steps=[],
        usage=Usage(),
        duration_s=max(0.0, duration),
        error="interrupted by the user",
    )
    config = run_config(settings, template)
    return _finish(run, settings, config, template, path, created, extra)


def _finish(
    run: Run,
    settings: Settings,
    config: RunConfig,
    template: PromptTemplate,
    trace_path: Path | None,
    created: datetime,
    trace_extra: dict[str, Any] | None,
) -> Trace:
    trace = Trace(
        run,
        config,
        id=new_run_id(),
        created=created.isoformat(),
        prompt_template=template.text,
        extra={"forced": run.forced, "cost": run_cost(run, settings), **(trace_extra or {})},
        path=trace_path,
    )
    if trace_path is not None:
        write_trace(trace_path, trace.to_json())
    return trace
