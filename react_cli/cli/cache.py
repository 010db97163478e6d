"""``react-cli cache``: what the cache holds (``stats``), and starting it afresh (``clear``)."""

from __future__ import annotations

from typing import Annotated

import typer

from react_cli.cli.app import print_json
from react_cli.cli.help import Commands, Panel, examples
from react_cli.core.errors import ReactCliError

cache_app = Commands(
    help="The cache of model calls at temperature 0 and Wikipedia answers (--cache).",
    short_help="Show what the cache holds, or clear it.",
    no_args_is_help=True,
    epilog=examples(
        "react-cli ask --cache -m gpt-4o-mini 'Who directed the film Ed Wood?'",
        "react-cli cache stats",
        "react-cli cache clear",
    ),
)


@cache_app.command(
    "stats", epilog=examples("react-cli cache stats", "react-cli cache stats --json")
)
def cache_stats(
    as_json: Annotated[
        bool,
        typer.Option("--json", help="Print the same as JSON.", rich_help_panel=Panel.OUTPUT),
    ] = False,
) -> None:
    """Where the cache is, its entries and bytes by kind (model calls, Wikipedia answers),
    its file's size and its cap (cache_max_mb)."""
    from react_cli.cache import cache_path
    from react_cli.cache.store import CacheStore, CacheUnusable
    from react_cli.display.terminal import plain
    from react_cli.infra.untrusted import size_text
    from react_cli.settings.resolve import home_dir, resolve

    settings = resolve({})
    path = cache_path(home_dir())
    max_bytes = settings.cache_max_mb << 20
    if not path.exists() and not path.is_symlink():
        stats = None
    else:
        warnings: list[str] = []
        store = CacheStore(path, max_bytes, warnings.append)
        try:
            stats = store.stats()
        except CacheUnusable:
            said = warnings[0] if warnings else f"the cache {path} cannot be used"
            raise ReactCliError(said) from None
        finally:
            store.close()
    entries = stats.entries if stats else {}
    sizes = stats.bytes if stats else {}
    if as_json:
        print_json(
            {
                "path": str(path),
                "exists": stats is not None,
                "entries": entries,
                "bytes": sizes,
                "file_bytes": stats.file_bytes if stats else 0,
                "max_bytes": max_bytes,
            },
            indent=2,
        )
        return
    print(f"cache  {plain(str(path))}{'' if stats else ' (none yet)'}")
    for kind, label in (("model", "model calls"), ("wiki", "Wikipedia answers")):
        count, size = entries.get(kind, 0), sizes.get(kind, 0)
        print(f"{label:<18} {count:>8,}  {size_text(size) if size else '0 bytes'}")
    file_bytes = stats.file_bytes if stats else 0
    print(f"{'file':<18} {'':>8}  {size_text(file_bytes) if file_bytes else '0 bytes'}")
    print(f"{'cap (cache_max_mb)':<18} {'':>8}  {size_text(max_bytes)}")


@cache_app.command("clear", epilog=examples("react-cli cache clear"))
def cache_clear() -> None:
    """Delete the cache (a corrupt one too); the next --cache run starts it afresh."""
    from react_cli.cache import cache_path
    from react_cli.cache.store import clear
    from react_cli.display.terminal import plain
    from react_cli.infra.untrusted import size_text
    from react_cli.settings.resolve import home_dir

    path = cache_path(home_dir())
    try:
        freed = clear(path)
    except OSError as exc:
        raise ReactCliError(f"cannot clear the cache {path}: {exc.strerror or exc}") from None
    said = f"freed {size_text(freed)}" if freed else "it was empty"
    print(f"cleared {plain(str(path))} ({said})")
