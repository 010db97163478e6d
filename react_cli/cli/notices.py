"""What the commands say on stderr besides errors: debug lines, retry waits, the contact hint,
the max_tokens warning; and where a command's session tells its notices (:func:`told`)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from react_cli.core.records import RetryObserver, RetryWait
from react_cli.core.wording import plural
from react_cli.settings.resolve import CONFIG_NAME, home_dir
from react_cli.settings.settings import Settings

if TYPE_CHECKING:
    from react_cli.display.render import Renderer
    from react_cli.session import Told

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


def told(
    debug: bool,
    renderer: Renderer | None = None,
    *,
    on_retry: RetryObserver | None = None,
    note: Callable[[str], None] | None = None,
    hint: bool = True,
) -> Told:
    """Where a command's session tells its notices: through ``renderer`` when it shows the
    run (else as ``warning:`` lines on stderr), each retry wait to ``on_retry`` (else the
    renderer's, else stderr), what was learnt to ``note`` (else the renderer's, else a
    ``note:`` line on stderr), ``--debug`` (``debug``, or ``REACT_CLI_DEBUG``) lines on
    stderr, and the contact hint (``hint``) once a run is about to call Wikipedia."""
    from react_cli.cli.app import debug_enabled, print_note, print_warning
    from react_cli.session import Told

    return Told(
        warn=renderer.warning if renderer is not None else print_warning,
        note=note or (renderer.note if renderer is not None else print_note),
        on_retry=on_retry or (renderer.retry_waiting if renderer else stderr_retry_notice),
        debug_log=stderr_debug_log if debug or debug_enabled() else None,
        hint=show_contact_hint if hint else None,
    )
