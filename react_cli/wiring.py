"""Wiring: the model client, the Wikipedia backend and tools, and their notices, from settings.

Shared by ``ask`` and by batch commands, so a run means the same thing everywhere; ``runs``
runs a question with them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from react_cli.config import CONFIG_NAME, Settings, home_dir
from react_cli.errors import UsageError
from react_cli.records import LanguageModel, RetryObserver, RetryWait, Tools
from react_cli.wiki.base import WikiBackend
from react_cli.wording import plural

if TYPE_CHECKING:
    from react_cli.llm import OpenAIClient
    from react_cli.llm.sampling import EndpointFacts
    from react_cli.retry import RetryPolicy

DebugLog = Callable[[str], None]
OPENAI_HOST = "api.openai.com"
WIKIMEDIA_DOMAINS = ("wikipedia.org", "wikimedia.org", "wikidata.org", "wiktionary.org")
WIKIMEDIA_SUFFIXES = tuple(f".{domain}" for domain in WIKIMEDIA_DOMAINS)
CONTACT_HINT_MARK = ".contact-hint-shown"


def stderr_debug_log(line: str) -> None:
    """One ``--debug`` line on stderr (it shows what servers answered: cleaned)."""
    from react_cli.terminal import plain

    print(f"debug: {plain(line)}", file=sys.stderr, flush=True)


def stderr_retry_notice(wait: RetryWait) -> None:
    """Each retry wait on stderr as it starts, so a slow run never looks hung."""
    from react_cli.terminal import plain

    print(plain(str(wait)), file=sys.stderr, flush=True)


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
    settings: Settings,
    debug_log: DebugLog | None = None,
    on_retry: RetryObserver | None = None,
    facts: EndpointFacts | None = None,
) -> LanguageModel:
    """The client a run calls, for its loop and its samples; ``facts`` what it learns about
    the endpoint (shared by an eval's clients)."""
    if not settings.model:
        raise UsageError(
            "no model configured: pass -m/--model, set REACT_CLI_MODEL, "
            'or put model = "..." in the config file'
        )
    return model_client(settings, debug_log, on_retry, facts)


def model_client(
    settings: Settings,
    debug_log: DebugLog | None = None,
    on_retry: RetryObserver | None = None,
    facts: EndpointFacts | None = None,
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
        sample_concurrency=settings.sample_concurrency,
        facts=facts,
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
    from react_cli.terminal import plain

    hint = contact_hint(settings, home_dir())
    if hint:
        print(f"hint: {plain(hint)}", file=sys.stderr, flush=True)


def build_tools(
    settings: Settings, debug_log: DebugLog | None = None, on_retry: RetryObserver | None = None
) -> Tools:
    from react_cli.wiki.base import WikiSession

    backend = build_backend(settings, debug_log, on_retry)
    return WikiSession(backend, max_observation_chars=settings.max_observation_chars)


def max_tokens_warning(max_tokens: int, questions: int | None = None) -> str:
    """The one warning a command prints when replies stopped at ``max_tokens``."""
    where = f" in {plural(questions, 'question')}" if questions else ""
    return f"the model stopped at max_tokens={max_tokens}{where}; raise --max-tokens"
