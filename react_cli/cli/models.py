"""``react-cli models``: the names the endpoint serves, so a user can find what ``-m`` takes."""

from __future__ import annotations

from typing import Annotated

import typer

from react_cli.cli.app import app, debug_enabled, print_json
from react_cli.cli.options import ApiKeyOpt, BaseUrlOpt, DebugOpt, run_settings

MAX_NAME_CHARS = 1000  # a longer name is cut (saying so): no one types it after -m


@app.command(short_help="List the endpoint's models (the names -m takes).")
def models(
    base_url: BaseUrlOpt = None,
    api_key: ApiKeyOpt = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the endpoint's model objects as JSON.")
    ] = False,
    debug: DebugOpt = False,
) -> None:
    """List the models the endpoint serves (GET <base URL>/models), one name a line.

    Exit codes: 0 listed; 1 the endpoint failed (after retries); 2 usage or configuration
    error (no key for OpenAI, a rejected key, a base URL with no model list).
    """
    from react_cli.cli.notices import stderr_debug_log, stderr_retry_notice
    from react_cli.session import model_client
    from react_cli.share.text import one_line

    settings = run_settings(base_url=base_url, api_key=api_key)
    debug_log = stderr_debug_log if debug or debug_enabled() else None
    found = model_client(settings, debug_log, stderr_retry_notice).list_models()
    if as_json:
        print_json(found, indent=2)
        return
    for model in found:  # one line each: a name holding a line break is not two models
        print(one_line(str(model.get("id", "?")), limit=MAX_NAME_CHARS))
