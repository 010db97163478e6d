"""Command-line layer: a thin typer application over the library.

Only typer and light modules are imported at start-up; requests, bs4 and rich are imported
inside commands, so ``react-cli --help`` stays fast. Each command lives in its own module,
which registers itself on ``app`` when imported here.
"""

from react_cli.cli import (  # noqa: F401  (register them)
    ask,
    chat,
    distill,
    evalfolder,
    evalmerge,
    models,
    replay,
    traces,
)
from react_cli.cli.app import app, main
from react_cli.cli.cache import cache_app
from react_cli.cli.config import config_app
from react_cli.cli.data import data_app
from react_cli.cli.evaluate import eval_app
from react_cli.cli.prompts import prompts_app
from react_cli.cli.tools import tools_app
from react_cli.cli.wiki import wiki_app

app.add_typer(eval_app, name="eval")
app.add_typer(prompts_app, name="prompts")
app.add_typer(wiki_app, name="wiki")
app.add_typer(tools_app, name="tools")
app.add_typer(data_app, name="data")
app.add_typer(config_app, name="config")
app.add_typer(cache_app, name="cache")

__all__ = ["app", "main"]
