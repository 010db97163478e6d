"""``react-cli data``: the datasets the paper used, by name (``data list``, ``data get``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from react_cli.cli.app import print_json
from react_cli.cli.downloads import ForceOpt, ListJsonOpt, print_table
from react_cli.cli.help import Commands, examples
from react_cli.cli.options import DebugOpt

if TYPE_CHECKING:
    from react_cli.eval.catalog import Named

data_app = Commands(
    help="The datasets the paper used, by name: download them checked, see what is installed.",
    short_help="Download the paper's datasets by name; list them.",
    no_args_is_help=True,
    epilog=examples(
        "react-cli data list",
        "react-cli data get hotpotqa-dev",
        "react-cli eval hotpotqa-dev --limit 100 -m MODEL",
    ),
)


@data_app.command(
    "list",
    short_help="Every dataset by name: its size, its pin, whether it is installed.",
    epilog=examples("react-cli data list", "react-cli data list --json"),
)
def data_list(as_json: ListJsonOpt = False) -> None:
    """Every dataset by name: its size, how it is checked (SHA-256 or its size alone), whether
    it is installed in <home>/data, and what it is."""
    from react_cli.core.wording import byte_text
    from react_cli.display.terminal import plain
    from react_cli.eval.catalog import (
        SAMPLE,
        SAMPLE_FILE,
        SAMPLE_TITLE,
        State,
        data_folder,
        manifest,
        state,
    )

    entries = manifest()
    if as_json:
        sample = {"name": SAMPLE, "state": str(State.SHIPPED), "path": str(SAMPLE_FILE)}
        rows = [{**sample, "title": SAMPLE_TITLE}, *(_json(entry) for entry in entries)]
        print_json({"folder": str(data_folder()), "datasets": rows}, indent=2)
        return
    table = [("name", "size", "checked by", "installed", "what")]
    size = SAMPLE_FILE.stat().st_size
    table.append((SAMPLE, byte_text(size), "-", str(State.SHIPPED), SAMPLE_TITLE))
    for entry in entries:
        shown = byte_text(entry.pin.size) if entry.pin.size else "?"
        table.append((entry.name, shown, entry.pin.kind, str(state(entry)), entry.title))
    print_table(table)
    print()
    print(plain(f"folder: {data_folder()}; 'react-cli data get NAME' downloads one"))


def _json(entry: Named) -> dict[str, object]:
    from react_cli.eval.catalog import state

    return {
        "name": entry.name,
        "state": str(state(entry)),
        "path": str(entry.installed()),
        "title": entry.title,
        "url": entry.url,
        "size": entry.pin.size,
        "sha256": entry.pin.sha256,
        "checked_by": entry.pin.kind,
        "pin_source": entry.pin_source,
        "license": entry.license,
    }


@data_app.command(
    "get",
    short_help="Download datasets by name into <home>/data, checked.",
    epilog=examples(
        "react-cli data get hotpotqa-dev",
        "react-cli eval hotpotqa-dev --limit 100 -m MODEL",
        "react-cli data get react-hotpotqa-dev react-fever-dev",
    ),
)
def data_get(
    names: Annotated[
        list[str] | None,
        typer.Argument(metavar="NAME", help="Datasets to download ('data list' names them)."),
    ] = None,
    force: ForceOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Download datasets by name into <home>/data, each checked against its pinned SHA-256
    (or size) before it is used; the installed paths on stdout, progress on stderr.

    A partial download is resumed; a file that is not the one pinned is removed. Offline,
    the error says which URL to fetch by hand and where to put the file; REACT_CLI_DATA_URL
    (or data_url in the config file) points every download at a mirror. Exit codes: 0
    installed; 1 a download failed or brought another file; 2 an unknown name; 130 Ctrl-C
    (what arrived is kept for the next attempt).
    """
    from react_cli.cli.downloads import checked, done, fetch_file
    from react_cli.cli.notices import told
    from react_cli.cli.run_options import run_settings
    from react_cli.core.errors import UsageError
    from react_cli.display.terminal import plain
    from react_cli.eval.catalog import SAMPLE, SAMPLE_FILE, find
    from react_cli.session import Uses, open_session

    if not names:
        raise UsageError("name the datasets to download ('react-cli data list' shows them)")
    asked = list(dict.fromkeys(names))
    entries = [find(name) for name in asked if name != SAMPLE]  # all known, before any starts
    settings = run_settings()
    if SAMPLE in asked:
        done(f"{SAMPLE}: shipped with react-cli")
        print(plain(str(SAMPLE_FILE)))
    with open_session(settings, uses=Uses.DOWNLOADS, told=told(debug, hint=False)) as opened:
        fetcher = opened.fetcher
        for entry in entries:
            path, command = entry.installed(), entry.get_command()
            took = fetch_file(
                fetcher,
                entry.url,
                settings.data_url,
                path,
                entry.pin,
                again=command,
                then=f"'{command}' checks it",
                force=force,
            )
            done(f"{entry.name}: {took}, {checked(entry.pin)}")
            print(plain(str(path)))
