"""``react-cli eval merge``: the shards of one eval (``eval --shard I/N``) joined in one folder."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from react_cli.cli.app import print_json
from react_cli.cli.evaluate import eval_app
from react_cli.cli.help import Panel, examples


@eval_app.command(
    "merge",
    short_help="Join the shards of one eval (eval --shard I/N) into one eval folder.",
    epilog=examples(
        "react-cli eval merge runs/part-1 runs/part-2 runs/part-3 --out runs/all",
        "react-cli eval merge runs/part-1 runs/part-3 --out runs/some --partial",
    ),
)
def eval_merge(
    folders: Annotated[
        list[Path],
        typer.Argument(metavar="DIR...", help="The shards' eval folders."),
    ],
    out: Annotated[
        Path,
        typer.Option(
            metavar="DIR",
            help="The merged eval folder (new, or empty).",
            rich_help_panel=Panel.OUTPUT,
        ),
    ],
    partial: Annotated[
        bool,
        typer.Option(
            "--partial",
            help="Merge even when shards are missing or unfinished (status 'partial'; "
            "--resume on the merged folder runs what they held).",
            rich_help_panel=Panel.DATASET,
        ),
    ] = False,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="Print the merged summary object instead of its path.",
            rich_help_panel=Panel.OUTPUT,
        ),
    ] = False,
) -> None:
    """Join the folders of 'eval DATASET --shard I/N' runs (1/N … N/N, on any machines) into
    the eval folder DIR, as one eval of all their questions: rows, traces and a summary
    computed over them. Refuses shards of different datasets, selections or settings (the
    endpoint's URL and the concurrency may differ), a question in two shards, and a missing
    or unfinished shard unless --partial.

    Exit codes: 0 merged; 2 the folders are not the shards of one eval, or DIR is not empty.
    """
    from react_cli.display.terminal import plain
    from react_cli.eval.files import SUMMARY
    from react_cli.eval.merge import merge_shards

    merged = merge_shards(folders, out.absolute(), partial=partial)
    if as_json:
        print_json(merged.to_json())
    else:
        print(plain(str(out / SUMMARY)))
