"""``react-cli wiki``: the Wikipedia tools used directly, and ZIM building."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from react_cli.cli.app import HELP_OPTIONS, debug_enabled, help_when_bare, print_json
from react_cli.cli.options import (
    DebugOpt,
    LangOpt,
    VariantOpt,
    WikiOpt,
    run_settings,
    wiki_flags,
    with_options,
)
from react_cli.core.errors import ReactCliError, UsageError

if TYPE_CHECKING:
    from react_cli.tools.base import ToolResult
    from react_cli.tools.wikipedia import WikiSession


wiki_app = typer.Typer(
    help="Use the Wikipedia tools directly (what the agent would observe); build ZIM archives.",
    short_help="Search and Lookup as the agent would; build ZIM archives.",
    rich_markup_mode=None,
    context_settings=HELP_OPTIONS,
)
wiki_app.callback(invoke_without_command=True)(help_when_bare)


JsonOpt = Annotated[bool, typer.Option("--json", help="Print the details as JSON too.")]


@dataclass(frozen=True)
class WikiOptions:
    """The options of the commands that use the Wikipedia tools (None or off: not given)."""

    wiki: WikiOpt = None
    lang: LangOpt = None
    variant: VariantOpt = None
    as_json: JsonOpt = False
    debug: DebugOpt = False


NO_WIKI_OPTIONS = WikiOptions()


def _wiki_session(options: WikiOptions) -> WikiSession:
    from react_cli.cli.notices import show_contact_hint, stderr_debug_log, stderr_retry_notice
    from react_cli.session import build_backend
    from react_cli.tools.wikipedia import WikiSession

    settings = run_settings(wiki=wiki_flags(options.wiki, options.lang), variant=options.variant)
    debug_log = stderr_debug_log if options.debug or debug_enabled() else None
    backend = build_backend(settings, debug_log, stderr_retry_notice)
    show_contact_hint(settings)
    return WikiSession(backend, max_observation_chars=settings.max_observation_chars)


def _observe(result: ToolResult, as_json: bool) -> None:
    """Print one observation (or, with --json, it, its details and its source); backend
    failures exit 1."""
    from react_cli.core.errors import WikiError
    from react_cli.display.terminal import plain

    if result.error is not None:
        raise WikiError(result.error)
    if as_json:
        source = None if result.source is None else result.source.to_json()
        print_json({"observation": result.observation, "details": result.details, "source": source})
    else:
        print(plain(result.observation))


@wiki_app.command("search")
@with_options(WikiOptions)
def wiki_search(
    entity: Annotated[
        str, typer.Argument(metavar="ENTITY", help="What the agent would write in Search[...].")
    ],
    options: WikiOptions = NO_WIKI_OPTIONS,
) -> None:
    """Print the observation Search[ENTITY] gives."""
    from react_cli.infra.deadline import NO_DEADLINE
    from react_cli.infra.untrusted import clean_text

    session = _wiki_session(options)
    _observe(session.search(clean_text(entity), deadline=NO_DEADLINE), options.as_json)


@wiki_app.command("lookup")
@with_options(WikiOptions)
def wiki_lookup(
    entity: Annotated[
        str, typer.Argument(metavar="ENTITY", help="The page to load, as in Search[...].")
    ],
    keyword: Annotated[
        str, typer.Argument(metavar="KEYWORD", help="What the agent would write in Lookup[...].")
    ],
    count: Annotated[
        int, typer.Option("-n", metavar="N", help="How many successive Lookups to print.")
    ] = 1,
    options: WikiOptions = NO_WIKI_OPTIONS,
) -> None:
    """Print what N successive Lookup[KEYWORD] show on ENTITY's page."""
    from react_cli.core.errors import WikiError
    from react_cli.infra.deadline import NO_DEADLINE
    from react_cli.infra.untrusted import clean_text
    from react_cli.tools.wikipedia import NO_MORE

    entity, keyword = clean_text(entity), clean_text(keyword)
    if count < 1:
        raise UsageError("-n must be at least 1")
    session = _wiki_session(options)
    found = session.search(entity, deadline=NO_DEADLINE)
    if found.error is not None:
        raise WikiError(found.error)
    if "resolved_title" not in found.details or found.details.get("disambiguation"):
        raise ReactCliError(f"no page to look in: {found.observation}")
    for _ in range(count):
        result = session.lookup(keyword, deadline=NO_DEADLINE)
        _observe(result, options.as_json)
        if result.observation == NO_MORE:
            break


@wiki_app.command("build-zim")
def wiki_build_zim(
    corpus: Annotated[
        Path,
        typer.Argument(
            metavar="CORPUS",
            help="JSONL of {title, text}, FEVER wiki-pages, or a HotpotQA distractor file.",
        ),
    ],
    out: Annotated[Path, typer.Argument(metavar="OUT", help="The .zim file to write.")],
    language: Annotated[
        str,
        typer.Option(
            metavar="CODE", help="ISO 639-3 language of the text, for the full-text index."
        ),
    ] = "eng",
    title: Annotated[
        str | None, typer.Option(metavar="TITLE", help="Archive title [CORPUS's name].")
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace OUT if it exists.")] = False,
) -> None:
    """Build a ZIM archive with a full-text index, for --wiki zim:OUT."""
    from react_cli.infra.untrusted import clean_text, not_regular
    from react_cli.wiki.zimbuild import build_zim

    language, title = clean_text(language), title and clean_text(title)
    kind = not_regular(corpus, follow_symlinks=True)
    if kind is not None:
        raise UsageError(f"corpus {str(corpus)!r} is {kind}, not a regular file")
    if not corpus.is_file():
        raise UsageError(f"corpus not found: {str(corpus)!r}")
    report = build_zim(corpus, out, language=language, name=title or "", force=force)
    from react_cli.core.wording import plural

    repeated = plural(report.duplicates, "repeated title")
    skipped = f", {repeated} skipped" if report.duplicates else ""
    from react_cli.display.terminal import plain, shell_word

    shown, option = plain(str(out)), shell_word(f"zim:{out}")
    print(f"{shown}: {plural(report.articles, 'article')}{skipped}; use --wiki {option}")
