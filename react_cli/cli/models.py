"""``react-cli models``: the names the endpoint serves, so a user can find what ``-m`` takes."""

from __future__ import annotations

from typing import Annotated

import typer

from react_cli.cli.app import app, print_json, print_note
from react_cli.cli.help import Panel, examples
from react_cli.cli.options import ApiKeyOpt, BaseUrlOpt, DebugOpt
from react_cli.cli.run_options import run_settings

MAX_NAME_CHARS = 1000  # a longer name is cut (saying so): no one types it after -m


@app.command(
    short_help="List the endpoint's models (the names -m takes).",
    epilog=examples(
        "react-cli models",
        "react-cli models --base-url http://127.0.0.1:11434/v1",
        "react-cli models --json",
    ),
)
def models(
    base_url: BaseUrlOpt = None,
    api_key: ApiKeyOpt = None,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="Print the endpoint's model objects as JSON.",
            rich_help_panel=Panel.OUTPUT,
        ),
    ] = False,
    debug: DebugOpt = False,
) -> None:
    """List the models the endpoint serves (GET <base URL>/models), one name a line.

    Exit codes: 0 listed; 1 the endpoint failed (after retries); 2 usage or configuration
    error (no key for OpenAI, a rejected key, a base URL with no model list).
    """
    from react_cli.cli.notices import told
    from react_cli.session import Uses, open_session
    from react_cli.share.text import one_line

    settings = run_settings(base_url=base_url, api_key=api_key)
    with open_session(settings, uses=Uses.ENDPOINT, told=told(debug, hint=False)) as opened:
        found = opened.endpoint.list_models()
    if as_json:
        print_json(found, indent=2)
        return
    names = [one_line(str(model.get("id", "?")), limit=MAX_NAME_CHARS) for model in found]
    for name in names:  # one line each: a name holding a line break is not two models
        print(name)
    paths = [name for name in names if _file_like(name)]
    if paths:
        print_note(_path_note(paths[0]))


def _file_like(name: str) -> bool:
    """Whether a model's id is the path of the file a server loaded (llama-cpp-python names
    its model so without ``--model_alias``)."""
    return name.startswith(("/", "~", "./", "../")) or "\\" in name or name.endswith(".gguf")


def _path_note(path: str) -> str:
    """What to do with a model named by its file: -m takes the name as printed; a short one
    needs the server's --model_alias."""
    import re

    stem = path.replace("\\", "/").rsplit("/", 1)[-1].removesuffix(".gguf")
    alias = stem if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,59}", stem) else "NAME"
    return (
        "the server names its model by the file it loaded (llama-cpp-python does without "
        f"--model_alias): -m takes that name as printed, or restart the server with "
        f"--model_alias {alias} and pass -m {alias}"
    )
