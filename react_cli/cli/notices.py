"""What the commands say on stderr besides errors: debug lines, retry waits, the contact hint,
the max_tokens warning."""

from __future__ import annotations

import sys
from pathlib import Path
from urllib.parse import urlsplit

from react_cli.core.records import RetryWait
from react_cli.core.wording import plural
from react_cli.settings.resolve import CONFIG_NAME, home_dir
from react_cli.settings.settings import Settings

WIKIMEDIA_DOMAINS = ("wikipedia.org", "wikimedia.org", "wikidata.org", "wiktionary.org")
WIKIMEDIA_SUFFIXES = tuple(f".{domain}" for domain in WIKIMEDIA_DOMAINS)
CONTACT_HINT_MARK = ".contact-hint-shown"


def stderr_debug_log(line: str) -> None:
    """One ``--debug`` line on stderr (it shows what servers answered: cleaned)."""
    from react_cli.display.terminal import plain

    print(f"debug: {plain(line)}", file=sys.stderr, flush=True)


def stderr_retry_notice(wait: RetryWait) -> None:
    """Each retry wait on stderr as it starts, so a slow run never looks hung."""
    from react_cli.display.terminal import plain

    print(plain(str(wait)), file=sys.stderr, flush=True)


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
    from react_cli.display.terminal import plain

    hint = contact_hint(settings, home_dir())
    if hint:
        print(f"hint: {plain(hint)}", file=sys.stderr, flush=True)


def max_tokens_warning(max_tokens: int, questions: int | None = None) -> str:
    """The one warning a command prints when replies stopped at ``max_tokens``."""
    where = f" in {plural(questions, 'question')}" if questions else ""
    return f"the model stopped at max_tokens={max_tokens}{where}; raise --max-tokens"
