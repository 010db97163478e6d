"""``react-cli traces``: the saved runs, newest first."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from react_cli.cli.app import app, print_json
from react_cli.cli.help import Panel, examples
from react_cli.core.errors import UsageError


@app.command(
    short_help="List recent runs, newest first.",
    epilog=examples("react-cli traces", "react-cli traces -n 5 --json"),
)
def traces(
    limit: Annotated[
        int,
        typer.Option("-n", metavar="N", help="Show at most N runs.", rich_help_panel=Panel.OUTPUT),
    ] = 20,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print a JSON list.", rich_help_panel=Panel.OUTPUT)
    ] = False,
) -> None:
    """List recent runs, newest first; '#' is the number 'replay -n' takes."""
    from react_cli.settings.resolve import home_dir
    from react_cli.traces.store import summarize, trace_files

    if limit < 1:
        raise UsageError("-n must be at least 1")
    rows = [
        {"n": n, **summarize(path)}
        for n, path in enumerate(trace_files(home_dir())[:limit], start=1)
    ]
    if as_json:
        print_json(rows, indent=2)
        return
    if not rows:
        from react_cli.display.terminal import plain

        print(f"no traces in {plain(str(home_dir() / 'traces'))} yet", file=sys.stderr)
        return
    _print_traces(rows)


def _print_traces(rows: list[dict[str, Any]]) -> None:
    """One line per run, fixed columns, untrusted text cleaned and shortened."""
    from react_cli.display.terminal import plain
    from react_cli.traces.store import local_time

    def short(text: str, width: int) -> str:
        text = " ".join(plain(text).split())  # file names may hold any bytes
        return text if len(text) <= width else text[: width - 1] + "…"

    print(
        f"{'#':>3}  {'time':<16}  {'method':<12}  {'stop':<15}  {'steps':>5}  {'model':<20}"
        f"  {'conversation':<16}  question → answer"
    )
    for row in rows:
        if "error" in row:
            name = short(Path(row["path"]).name, 60)
            print(
                f"{row['n']:>3}  {'?':<16}  {'':<12}  {'broken':<15}  {'':>5}  {'':<20}"
                f"  {'':<16}  {name}: {short(row['error'], 80)}"
            )
            continue
        answer = "—" if row["answer"] is None else short(row["answer"], 40)
        created = short(local_time(row["created"]), 16)
        turn = row["conversation"]
        conversation = "" if turn is None else f"{turn['id']} #{turn['turn']}"
        print(
            f"{row['n']:>3}  {created:<16}  {short(row['method'], 12):<12}"
            f"  {short(row['stop_reason'], 15):<15}"
            f"  {row['steps']:>5}  {short(str(row['model'] or ''), 20):<20}"
            f"  {short(conversation, 16):<16}  {short(row['question'], 60)} → {answer}"
        )
