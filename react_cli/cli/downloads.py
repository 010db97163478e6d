"""What ``data get`` and ``wiki get`` share: the fetcher the settings make, a progress bar on
stderr (bytes, rate, time left; nothing when stderr is not a terminal), and the error a failed
download ends in: with the URL to fetch by hand and where to put the file."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from react_cli.cli.help import Panel
from react_cli.core.errors import DownloadError, InterruptError, ReactCliError, UsageError

if TYPE_CHECKING:
    from react_cli.infra.download import Fetcher, Progress
    from react_cli.infra.pins import Pin

ForceOpt = Annotated[
    bool,
    typer.Option(
        "--force",
        help="Download again even if installed and checked.",
        rich_help_panel=Panel.GENERAL,
    ),
]
ListJsonOpt = Annotated[
    bool,
    typer.Option("--json", help="Print the same as JSON.", rich_help_panel=Panel.OUTPUT),
]


@contextmanager
def progress_bar(label: str) -> Iterator[Progress | None]:
    """A bar for one download on stderr while the block runs (None: stderr is no terminal)."""
    from react_cli.display.terminal import make_console

    console = make_console()
    if not console.is_terminal:
        yield None
        return
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    columns = (
        TextColumn("{task.description}", markup=False),  # a name shown as it is
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task(label, total=None)
        yield lambda done, total: bar.update(task, completed=done, total=total)


def fetch_file(
    fetcher: Fetcher,
    official: str,
    mirror: str | None,
    dest: Path,
    pin: Pin,
    *,
    again: str,
    then: str,
    force: bool = False,
) -> str:
    """``dest`` as ``pin`` says: installed and checked (UsageError naming ``again --force``
    when it is not the file pinned), else downloaded from ``official`` (or its ``mirror``);
    what it took: ``installed``, or the size downloaded."""
    from react_cli.core.wording import byte_text
    from react_cli.infra.download import mirrored
    from react_cli.infra.pins import verify

    if dest.is_file() and not force:
        wrong = verify(dest, pin)
        if wrong is not None:
            raise UsageError(
                f"{dest} is not the file pinned ({wrong}): '{again} --force' downloads it again"
            )
        return "installed"
    download(fetcher, mirrored(official, mirror), dest, pin, official=official, then=then)
    return byte_text(dest.stat().st_size)


def checked(pin: Pin) -> str:
    """How a file was checked, as ``data get`` and ``wiki get`` say it."""
    return "SHA-256 checked" if pin.sha256 else "size checked (no checksum is pinned)"


def print_table(rows: Sequence[tuple[str, ...]]) -> None:
    """Rows in columns as wide as their widest cell (the last column left free), plain text."""
    from react_cli.display.terminal import plain

    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        print(plain("  ".join([*cells, row[-1]]).rstrip()))


def download(
    fetcher: Fetcher,
    url: str,
    dest: Path,
    pin: Pin,
    *,
    official: str,
    then: str,
    limit: int | None = None,
) -> str:
    """``url`` saved as ``dest`` with a progress bar; its SHA-256. A failure says how to get
    the file by hand (``official``, its official URL; ``then``, what checks it once there);
    Ctrl-C says what was kept for the next attempt to resume."""
    from react_cli.core.wording import byte_text
    from react_cli.display.terminal import shell_word
    from react_cli.infra.download import part_path
    from react_cli.infra.interrupts import interrupted

    try:
        with progress_bar(dest.name) as progress:
            return fetcher.download(url, dest, pin, progress, limit)
    except DownloadError as exc:
        offline = "offline or behind a firewall? " if exc.unreachable else ""
        raise DownloadError(
            f"{exc}; {offline}fetch {official} by hand and put it at {shell_word(str(dest))} "
            f"({then}), or set REACT_CLI_DATA_URL to a mirror that holds it",
            unreachable=exc.unreachable,
        ) from None
    except BlockingIOError:
        raise ReactCliError(
            f"another react-cli is downloading {dest} now: wait for it to finish"
        ) from None
    except KeyboardInterrupt:
        part = part_path(dest)
        kept = part.stat().st_size if part.is_file() else 0
        said = f"{byte_text(kept)} kept in {part}: run the same command to resume" if kept else ""
        raise InterruptError("; ".join(filter(None, [interrupted(), said]))) from None


def done(line: str) -> None:
    """What a download brought, on stderr (the file's path goes to stdout)."""
    from react_cli.display.terminal import plain

    print(plain(line), file=sys.stderr, flush=True)
