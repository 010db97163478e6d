"""Wiring: build the model client and the tools from settings, run one question, keep a trace.

Shared by ``ask`` and by batch commands, so a run means the same thing everywhere.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from react_cli.agent import MAX_TOKENS_REACHED, Agent, Limits, RunObserver, RunResult
from react_cli.config import CONFIG_NAME, Settings, home_dir
from react_cli.errors import UsageError
from react_cli.prompts import PromptTemplate
from react_cli.records import Model, RetryObserver, RetryWait, Tools, Usage
from react_cli.redaction import redact_url
from react_cli.trace import new_run_id, now_utc, trace_document, write_trace
from react_cli.wiki.base import WikiBackend
from react_cli.wording import plural

if TYPE_CHECKING:
    from react_cli.http import RetryPolicy
    from react_cli.llm import OpenAIClient

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
    from react_cli.http import RetryPolicy

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


def run_config(settings: Settings, template: PromptTemplate) -> dict[str, Any]:
    """What a trace records about how the run was made (never a secret)."""
    return {
        "model": settings.model,
        "base_url": redact_url(settings.base_url),
        "api": settings.api,
        "prompt": {"name": template.name, "sha256": template.sha256},
        "temperature": settings.temperature,
        "max_steps": settings.max_steps,
        "max_tokens": settings.max_tokens,
        "max_total_tokens": settings.max_total_tokens,
        "max_parse_errors": settings.max_parse_errors,
        "max_repeats": settings.max_repeats,
        "max_tool_errors": settings.max_tool_errors,
        "stream": settings.stream,
        "timeout_s": settings.run_timeout_s,
        "force_answer": settings.force_answer,
        "wiki": redact_url(settings.wiki) if "://" in settings.wiki else settings.wiki,
        "variant": settings.variant,
    }


def reached_max_tokens(result: RunResult) -> bool:
    """Whether a reply of the run stopped at ``max_tokens`` before its action."""
    return any(step.details.get(MAX_TOKENS_REACHED) for step in result.steps)


def max_tokens_warning(max_tokens: int, questions: int | None = None) -> str:
    """The one warning a command prints when replies stopped at ``max_tokens``."""
    where = f" in {plural(questions, 'question')}" if questions else ""
    return f"the model stopped at max_tokens={max_tokens}{where}; raise --max-tokens"


def run_cost(result: RunResult, settings: Settings) -> dict[str, Any] | None:
    """The run's cost at the configured prices (None without prices), for traces and JSON."""
    prices = settings.prices()
    return None if prices is None else prices.cost(result.usage).to_dict()


@dataclass
class Outcome:
    result: RunResult
    trace: dict[str, Any]
    trace_path: Path | None


def run_question(
    question: str,
    *,
    settings: Settings,
    template: PromptTemplate,
    model: Model,
    tools: Tools,
    observer: RunObserver | None = None,
    trace_path: Path | None = None,
    limits: Limits | None = None,
    created: datetime | None = None,
    trace_extra: dict[str, Any] | None = None,
) -> Outcome:
    """Run the loop once and write its trace (if ``trace_path``), whatever the outcome.

    ``trace_extra`` adds top-level fields to the trace (e.g. where a fork came from)."""
    created = created or now_utc()
    limits = limits or Limits(
        max_steps=settings.max_steps,
        max_parse_errors=settings.max_parse_errors,
        max_repeats=settings.max_repeats,
        max_total_tokens=settings.max_total_tokens,
        timeout_s=settings.run_timeout_s,
        max_tool_errors=settings.max_tool_errors,
        force_answer=settings.force_answer,
    )
    agent = Agent(model, tools, limits=limits, observer=observer)
    result = agent.run(template.prefix(question), question.strip())
    return _finish(result, settings, template, trace_path, created, trace_extra)


def write_interrupted_trace(
    question: str,
    *,
    settings: Settings,
    template: PromptTemplate,
    path: Path,
    created: datetime,
    extra: dict[str, Any] | None = None,
) -> Outcome:
    """The trace of a run Ctrl-C stopped before its first step (while it was being set up)."""
    duration = (now_utc() - created).total_seconds()
    result = RunResult(
        question=question.strip(),
        answer=None,
        stop_reason="interrupted",
        steps=[],
        usage=Usage(),
        duration_s=max(0.0, duration),
        error="interrupted by the user",
    )
    return _finish(result, settings, template, path, created, extra)


def _finish(
    result: RunResult,
    settings: Settings,
    template: PromptTemplate,
    trace_path: Path | None,
    created: datetime,
    trace_extra: dict[str, Any] | None,
) -> Outcome:
    document = trace_document(
        result,
        run_id=new_run_id(),
        created=created,
        config=run_config(settings, template),
        prompt_template=template.text,
        extra={"forced": result.forced, "cost": run_cost(result, settings), **(trace_extra or {})},
    )
    if trace_path is not None:
        write_trace(trace_path, document)
    return Outcome(result, document, trace_path)
