"""``react-cli config``: where the settings live and what each one is now, and from where."""

from __future__ import annotations

from typing import Annotated

import typer

from react_cli.cli.app import print_json
from react_cli.cli.help import Commands, Panel, examples
from react_cli.cli.run_options import NO_RUN_OPTIONS, RunOptions, with_options

config_app = Commands(
    help="Show the settings, where each comes from, and the config file's path.",
    short_help="Show the settings and where each comes from.",
    epilog=examples(
        "react-cli config",
        "react-cli config -m gpt-4o-mini --max-steps 10 --json",
        "react-cli config path",
    ),
)

SECRETS = frozenset({"api_key"})
URLS = frozenset({"base_url", "wiki", "data_url"})


@config_app.callback(invoke_without_command=True)
@with_options(RunOptions)
def config_show(
    ctx: typer.Context,
    as_json: Annotated[
        bool,
        typer.Option("--json", help="Print the same as JSON.", rich_help_panel=Panel.OUTPUT),
    ] = False,
    options: RunOptions = NO_RUN_OPTIONS,
) -> None:
    """Show every setting ask and eval would use (with these options) and its source.

    Sources, highest first: flag, env (the variable), file (the config file), default.
    Secrets are masked and URLs shown without credentials or query string.
    """
    if ctx.invoked_subcommand is not None:
        return
    from react_cli.settings.resolve import CONFIG_NAME, home_dir, resolve_with_origins

    flags = options.flags()
    home = home_dir()
    path = home / CONFIG_NAME
    settings, origins = resolve_with_origins(flags)
    rows = {name: (_shown(name, v), str(origins[name])) for name, v in vars(settings).items()}
    if as_json:
        print_json(
            {
                "home": str(home),
                "config_file": str(path),
                "config_file_exists": path.is_file(),
                "settings": {name: {"value": v, "from": o} for name, (v, o) in rows.items()},
            },
            indent=2,
        )
        return
    from react_cli.display.terminal import plain

    state = "" if path.is_file() else " (not created yet)"
    print(f"home         {plain(str(home))}")
    print(f"config file  {plain(str(path))}{state}")
    print()
    width = max(map(len, rows))
    print(f"{'setting':<{width}}  {'value':<32}  from")
    for name, (value, origin) in rows.items():
        text = "-" if value is None else " ".join(plain(str(value)).split())
        print(f"{name:<{width}}  {text:<32}  {plain(origin)}")


@config_app.command("path", epilog=examples("react-cli config path"))
def config_path() -> None:
    """Print the config file's path (it may not exist yet)."""
    from react_cli.display.terminal import plain
    from react_cli.settings.resolve import CONFIG_NAME, home_dir

    print(plain(str(home_dir() / CONFIG_NAME)))


def _shown(name: str, value: object) -> object:
    """A value fit to show: secrets masked, URLs without credentials or query string."""
    if value is None:
        return None
    if name == "mcp":  # its servers, each as it is reached (never its env or headers)
        return [server.describe() for server in value] or None  # type: ignore[attr-defined]
    if name == "replicas":  # URLs, each without credentials or query string
        from react_cli.infra.credentials import redact_url

        return [redact_url(str(url)) for url in value]  # type: ignore[attr-defined]
    if isinstance(value, tuple):  # tools_from: a list, as the config file writes it
        return list(value)
    if name in SECRETS:
        from react_cli.infra.redaction import MASK

        return MASK
    if name in URLS and "://" in str(value):
        from react_cli.infra.credentials import redact_url

        return redact_url(str(value))
    return value
