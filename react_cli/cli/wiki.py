"""``react-cli wiki``: the Wikipedia tools used directly, and ZIM building."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from react_cli.cli.app import help_when_bare, print_json
from react_cli.cli.downloads import ForceOpt, ListJsonOpt, print_table
from react_cli.cli.help import Commands, Panel, examples
from react_cli.cli.options import DebugOpt, LangOpt, VariantOpt, WikiOpt
from react_cli.cli.run_options import run_settings, wiki_flags, with_options
from react_cli.core.errors import ReactCliError, UsageError

if TYPE_CHECKING:
    from react_cli.tools.base import ToolResult
    from react_cli.tools.wikipedia import Wikipedia


wiki_app = Commands(
    help="Use the Wikipedia tools directly (what the agent would observe); build ZIM archives.",
    short_help="Search and Lookup as the agent would; build ZIM archives.",
    epilog=examples(
        "react-cli wiki search 'Ed Wood'",
        "react-cli wiki lookup 'Ed Wood' born",
        "react-cli wiki build-zim hotpot_dev_distractor_v1.json hotpot.zim",
    ),
)
wiki_app.callback(invoke_without_command=True)(help_when_bare)


JsonOpt = Annotated[
    bool,
    typer.Option("--json", help="Print the details as JSON too.", rich_help_panel=Panel.OUTPUT),
]


@dataclass(frozen=True)
class WikiOptions:
    """The options of the commands that use the Wikipedia tools (None or off: not given)."""

    wiki: WikiOpt = None
    lang: LangOpt = None
    variant: VariantOpt = None
    as_json: JsonOpt = False
    debug: DebugOpt = False


NO_WIKI_OPTIONS = WikiOptions()


@contextmanager
def _wikipedia(options: WikiOptions) -> Iterator[Wikipedia]:
    """A run's Wikipedia tools, in a session of their own."""
    from react_cli.cli.notices import told
    from react_cli.session import open_session
    from react_cli.tools.wikipedia import Wikipedia

    settings = run_settings(wiki=wiki_flags(options.wiki, options.lang), variant=options.variant)
    with open_session(settings, told=told(options.debug)) as opened:
        yield opened.toolbox(Wikipedia)


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


@wiki_app.command(
    "search",
    epilog=examples(
        'react-cli wiki search "Arthur\'s Magazine"',
        "react-cli wiki search --lang zh '李白'",
        "react-cli wiki search --wiki zim:hotpot.zim --json 'Ed Wood'",
    ),
)
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

    with _wikipedia(options) as wikipedia:
        _observe(wikipedia.search(clean_text(entity), deadline=NO_DEADLINE), options.as_json)


@wiki_app.command(
    "lookup",
    epilog=examples(
        "react-cli wiki lookup 'Ed Wood' director",
        "react-cli wiki lookup -n 3 --wiki zim:hotpot.zim 'Ed Wood' film",
    ),
)
@with_options(WikiOptions)
def wiki_lookup(
    entity: Annotated[
        str, typer.Argument(metavar="ENTITY", help="The page to load, as in Search[...].")
    ],
    keyword: Annotated[
        str, typer.Argument(metavar="KEYWORD", help="What the agent would write in Lookup[...].")
    ],
    count: Annotated[
        int,
        typer.Option(
            "-n",
            metavar="N",
            help="How many successive Lookups to print.",
            rich_help_panel=Panel.OUTPUT,
        ),
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
    with _wikipedia(options) as wikipedia:
        found = wikipedia.search(entity, deadline=NO_DEADLINE)
        if found.error is not None:
            raise WikiError(found.error)
        if "resolved_title" not in found.details or found.details.get("disambiguation"):
            raise ReactCliError(f"no page to look in: {found.observation}")
        for _ in range(count):
            result = wikipedia.lookup(keyword, deadline=NO_DEADLINE)
            _observe(result, options.as_json)
            if result.observation == NO_MORE:
                break


@wiki_app.command(
    "build-zim",
    epilog=examples(
        "react-cli wiki build-zim hotpot_dev_distractor_v1.json hotpot.zim",
        "react-cli wiki build-zim pages.jsonl notes.zim --title 'My notes' --force",
    ),
)
def wiki_build_zim(
    corpus: Annotated[
        Path,
        typer.Argument(
            metavar="CORPUS",
            help="JSONL of {title, text}, FEVER wiki-pages, or a HotpotQA distractor file "
            "(or its dataset name: hotpotqa-sample, hotpotqa-dev).",
        ),
    ],
    out: Annotated[
        Path | None,
        typer.Argument(
            metavar="[OUT]",
            help="The .zim file to write [<home>/zim/<CORPUS's name>.zim: zim:NAME finds it].",
        ),
    ] = None,
    language: Annotated[
        str,
        typer.Option(
            metavar="CODE",
            help="ISO 639-3 language of the text, for the full-text index.",
            rich_help_panel=Panel.WIKIPEDIA,
        ),
    ] = "eng",
    title: Annotated[
        str | None,
        typer.Option(
            metavar="TITLE",
            help="Archive title [CORPUS's name].",
            rich_help_panel=Panel.WIKIPEDIA,
        ),
    ] = None,
    force: Annotated[
        bool,
        typer.Option("--force", help="Replace OUT if it exists.", rich_help_panel=Panel.OUTPUT),
    ] = False,
) -> None:
    """Build a ZIM archive with a full-text index, for --wiki zim:OUT (or, without OUT,
    --wiki zim:NAME)."""
    from react_cli.eval.catalog import named_dataset
    from react_cli.infra.untrusted import clean_text, not_regular
    from react_cli.settings.archives import is_bare_name, zim_folder
    from react_cli.settings.resolve import home_dir
    from react_cli.wiki.zimbuild import build_zim

    language, title = clean_text(language), title and clean_text(title)
    named = None if corpus.exists() or corpus.is_symlink() else named_dataset(str(corpus))
    name = str(corpus) if named is not None else corpus.stem
    corpus = named or corpus  # a file, or a dataset's name
    if out is None:
        out = zim_folder(home_dir()) / f"{name}.zim"
        out.parent.mkdir(parents=True, exist_ok=True)
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

    at_home = out.absolute().parent == zim_folder(home_dir()) and is_bare_name(out.stem)
    shown, option = plain(str(out)), shell_word(f"zim:{out.stem if at_home else out}")
    print(f"{shown}: {plural(report.articles, 'article')}{skipped}; use --wiki {option}")


@wiki_app.command(
    "get",
    short_help="Download a Kiwix archive by its catalog name, checked, for --wiki zim:NAME.",
    epilog=examples(
        "react-cli wiki get wikipedia_en_100_nopic",
        "react-cli ask --wiki zim:wikipedia_en_100_nopic -m MODEL 'Who wrote Hamlet?'",
        "react-cli wiki get wikipedia_en_top_nopic",
    ),
)
def wiki_get(
    name: Annotated[
        str,
        typer.Argument(
            metavar="NAME",
            help="The archive's catalog name and flavour: wikipedia_en_100_nopic, "
            "wikipedia_en_top_nopic, wikipedia_en_all_nopic, ...",
        ),
    ],
    force: ForceOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Download a Kiwix ZIM archive by its name in Kiwix's catalog (library.kiwix.org) into
    <home>/zim, checked against its SHA-256 (its Metalink's, else the .sha256 beside it; else
    its size) before it is used; then --wiki zim:NAME answers from it, offline.

    Its path goes to stdout, progress to stderr; a partial download is resumed. Offline, the
    error says which URL to fetch by hand and where to put the file; REACT_CLI_DATA_URL (or
    data_url) points the catalog and the download at a mirror. Exit codes: 0 installed; 1 a
    download failed or brought another file; 2 no such archive in the catalog.
    """
    from react_cli.cli.downloads import checked, done, fetch_file
    from react_cli.cli.notices import told
    from react_cli.core.errors import DownloadError
    from react_cli.display.terminal import plain, shell_word
    from react_cli.session import Uses, open_session
    from react_cli.settings.archives import zim_folder
    from react_cli.settings.resolve import home_dir
    from react_cli.wiki.kiwix import CATALOG, book_pin, find_book

    settings = run_settings()
    folder = zim_folder(home_dir())
    with open_session(settings, uses=Uses.DOWNLOADS, told=told(debug, hint=False)) as opened:
        fetcher = opened.fetcher
        try:
            book = find_book(fetcher, clean_name(name), settings.data_url)
            pin = book_pin(fetcher, book, settings.data_url)
        except DownloadError as exc:
            offline = "offline or behind a firewall? " if exc.unreachable else ""
            raise DownloadError(
                f"{exc}; {offline}Kiwix's catalog ({CATALOG}) could not be read: download "
                f"the archive by hand from https://download.kiwix.org/zim/ into {folder} "
                "(--wiki zim:NAME finds it there), or set REACT_CLI_DATA_URL to a mirror",
                unreachable=exc.unreachable,
            ) from None
        if pin.kind == "none":
            raise DownloadError(f"the catalog gives no size or checksum for {book.full_name}")
        dest = folder / book.local_file
        took = fetch_file(
            fetcher,
            book.url,
            settings.data_url,
            dest,
            pin,
            again=f"react-cli wiki get {book.full_name}",
            then=f"--wiki zim:{book.full_name} then finds it",
            force=force,
        )
    option = shell_word(f"zim:{book.full_name}")
    done(
        f"{book.full_name} ({book.date}): {took}, {checked(pin)}; use --wiki {option}{_no_libzim()}"
    )
    print(plain(str(dest)))


def clean_name(name: str) -> str:
    from react_cli.infra.untrusted import clean_text

    return clean_text(name).strip()


def _no_libzim() -> str:
    """What reading an archive still needs, if it does."""
    import importlib.util

    if importlib.util.find_spec("libzim") is not None:
        return ""
    from react_cli.wiki.zim import INSTALL_ZIM

    return f" (reading it needs libzim: {INSTALL_ZIM})"


@wiki_app.command(
    "list",
    short_help="The archives installed in <home>/zim: name, language, date, articles, size.",
    epilog=examples("react-cli wiki list", "react-cli wiki list --json"),
)
def wiki_list(
    as_json: ListJsonOpt = False,
) -> None:
    """The ZIM archives in <home>/zim (those 'wiki get' downloaded and 'wiki build-zim'
    built there), each as --wiki zim:NAME finds it: its name, language, date, articles and
    size as the archive says them, and whether a SHA-256 checked it."""
    from react_cli.core.wording import byte_text
    from react_cli.display.terminal import plain
    from react_cli.settings.archives import zim_folder
    from react_cli.settings.resolve import home_dir
    from react_cli.wiki.library import installed

    archives = installed()
    folder = zim_folder(home_dir())
    if as_json:
        rows = [
            {
                "name": a.name,
                "path": str(a.path),
                "month": a.month or None,
                "title": a.title,
                "language": a.language,
                "date": a.date,
                "articles": a.articles,
                "size": a.size,
                "readable": a.readable,
                "sha256": a.sha256,
            }
            for a in archives
        ]
        print_json({"folder": str(folder), "archives": rows}, indent=2)
        return
    if not archives:
        print(plain(f"no archives in {folder} yet: 'react-cli wiki get NAME' downloads one"))
        return
    table = [("name", "language", "date", "articles", "size", "checked")]
    for a in archives:
        articles = "unreadable" if a.readable is False else f"{a.articles:,}" if a.articles else "?"
        checked = "sha256" if a.sha256 else "-"
        row = (a.name, a.language or "?", a.date or "?", articles, byte_text(a.size), checked)
        table.append(row)
    print_table(table)
    print()
    print(plain(f"folder: {folder}; use --wiki zim:NAME"))
