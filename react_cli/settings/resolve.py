"""Settings resolution: command-line flag > environment variable > config file > default.

The home directory holds ``config.toml``, ``traces/``, ``data/`` and ``zim/``; it is the
platform's user data dir unless ``REACT_CLI_HOME`` points elsewhere. The values are checked
by ``validation`` once resolved; ``urls`` turns a Wikipedia URL given as a page or its API
into its host root; ``archives`` finds ``zim:NAME`` in ``<home>/zim``.

Paths are absolute once resolved (the home directory, ``--tools-from`` files, a ``zim:``
archive), ``~`` expanded: a tool that changes the working directory (it is the process's, its
threads' too) cannot move what react-cli reads or writes.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, fields
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from react_cli.core.errors import UsageError
from react_cli.core.wording import clipped, did_you_mean, quoted
from react_cli.infra.untrusted import BadInput, clean_text, read_text
from react_cli.settings.archives import find_archive, is_bare_name
from react_cli.settings.environment import ENV_VARS, HOME_ENV
from react_cli.settings.mcp import MCP_TABLE, mcp_servers
from react_cli.settings.models import MODELS_TABLE, model_entries
from react_cli.settings.settings import Settings
from react_cli.settings.tools import RULES, TOOLS_TABLE, tool_rules
from react_cli.settings.urls import default_variant, wiki_root
from react_cli.settings.validation import validate

if TYPE_CHECKING:
    pass

CONFIG_NAME = "config.toml"
MAX_CONFIG_BYTES = 1 << 20


def home_dir(env: Mapping[str, str] = os.environ) -> Path:
    if env.get(HOME_ENV):
        return absolute_path(env[HOME_ENV])
    from platformdirs import user_data_dir

    return Path(user_data_dir("react-cli", appauthor=False))


def absolute_path(text: str | Path) -> Path:
    """``text`` as an absolute path, ``~`` expanded (links are not resolved: a link the user
    named stays the path used)."""
    return Path(text).expanduser().absolute()


PRICES_TABLE = "prices"  # [prices] "model name" = { input = 0.15, output = 0.60 }
PRICE_KEYS = ("input", "output", "cached_input", "flex_factor", "priority_factor", "batch_factor")
"""What a model's ``[prices]`` entry may set (each the ``price_`` setting of its name)."""
FLEX_TIMEOUT_S = 900.0
"""One request's time limit on the flex tier unless one is set: flex calls may take minutes."""


class Source(str, Enum):
    """Where a setting's value came from, highest precedence first."""

    FLAG = "flag"
    ENV = "env"
    FILE = "file"
    DEFAULT = "default"


@dataclass(frozen=True)
class Origin:
    """A setting's source and, for env and file, which variable or table gave it."""

    source: Source
    name: str = ""

    def __str__(self) -> str:
        return f"{self.source.value} {self.name}" if self.name else self.source.value

    def describe(self) -> str:
        """How an error message names it: ``environment variable REACT_CLI_API``."""
        names = {
            Source.FLAG: "option",
            Source.ENV: "environment variable",
            Source.FILE: "config file",
            Source.DEFAULT: "default",
        }
        return f"{names[self.source]} {self.name}".rstrip()


_FIELD_TYPES = {f.name: f.type for f in fields(Settings)}
_RULES = frozenset(RULES.values())  # set by the [tools] table and the flags, added together
_PATHS = frozenset({"prompt", "wiki"})
"""Settings that may name a file: kept as the OS gave them, so any file name can be opened."""


def load_config_file(path: Path) -> dict[str, Any]:
    """The ``[defaults]``-free flat TOML table of settings; missing file = empty."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    try:
        data = tomllib.loads(read_text(path, MAX_CONFIG_BYTES))  # a regular file, or BadInput
    except FileNotFoundError:
        return {}
    except NotADirectoryError:
        raise UsageError(_not_a_folder(path)) from None
    except OSError as exc:
        raise UsageError(f"config file {path}: {exc.strerror or exc}") from None
    except RecursionError:
        raise UsageError(f"config file {path}: nested too deeply") from None
    except (BadInput, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"config file {path}: {exc}") from None
    except ValueError:  # int() refuses integers of more than 4,300 digits
        raise UsageError(f"config file {path}: a number too long to read") from None
    known = (
        *(name for name in _FIELD_TYPES if name not in _RULES),
        PRICES_TABLE,
        TOOLS_TABLE,
        MODELS_TABLE,
    )
    unknown = sorted(set(data) - set(known))
    if unknown:
        named = ", ".join(_suggested(key, known) for key in unknown)
        raise UsageError(f"config file {path}: unknown setting(s): {named}")
    return data


_FLAG_SETTINGS = {
    "timeout": ("run_timeout_s", "--timeout"),
    "tool_timeout": ("tool_timeout_s", "--tool-timeout"),
    "no_stream": ("stream = false", "--no-stream"),
    "no_wiki": ("wiki_tools = false", "--no-wiki"),
    "allow_tool": ("allow in [tools]", "--allow-tool"),
    "deny_tool": ("deny in [tools]", "--deny-tool"),
    "lang": ("wiki", "--lang"),
}
"""Options whose setting has another name: a config key written as the option is named."""


def _suggested(key: str, known: tuple[str, ...]) -> str:
    """An unknown config key with the setting meant: the one its option sets, else the
    closest name (``timeout``: ``run_timeout_s``, which ``--timeout`` sets, not ``timeout_s``,
    one request's)."""
    if key in _FLAG_SETTINGS:
        setting, option = _FLAG_SETTINGS[key]
        return f"{key} (did you mean {setting}? {option} sets it)"
    return did_you_mean(key, known)


def _not_a_folder(config: Path) -> str:
    """What to do when the home directory (or a folder on the way to it) is a file."""
    home = config.parent
    blocker = next((p for p in [home, *home.parents] if p.exists() and not p.is_dir()), home)
    where = f"the home directory {home}"
    if blocker != home:
        where = f"{blocker} (on the way to the home directory {home})"
    return (
        f"{where} is a file, not a folder: set {HOME_ENV} to a folder (react-cli keeps its "
        "config, traces and data there), or move the file away"
    )


def _model_prices(table: Any, model: str | None, path: Path) -> dict[str, float]:
    """``price_input``/``price_output`` from the ``[prices]`` entry of the run's model."""
    if not isinstance(table, dict) or not all(isinstance(v, dict) for v in table.values()):
        raise UsageError(
            f"config file {path}: [{PRICES_TABLE}] maps model names to {{ input = 0.15, "
            "output = 0.60 }} (per million tokens)"
        )
    entry = table.get(model) if model else None
    if entry is None:
        return {}
    unknown = sorted(set(entry) - set(PRICE_KEYS))
    if unknown:
        raise UsageError(
            f"config file {path}: [{PRICES_TABLE}] {quoted(model)}: unknown key(s) "
            f"{', '.join(map(clipped, unknown))} (use {', '.join(PRICE_KEYS)})"
        )
    return {f"price_{key}": value for key, value in entry.items()}


def _coerce(name: str, value: Any, origin: str) -> Any:
    kind = _FIELD_TYPES[name]
    try:
        if value is None:
            return None
        if kind.startswith("tuple"):  # file names: a list, or one text as PATH separates them
            items = value.split(os.pathsep) if isinstance(value, str) else value
            if not isinstance(items, (list, tuple)) or not all(isinstance(i, str) for i in items):
                raise TypeError(value)
            return tuple(item for item in items if item.strip())
        if "bool" in kind:
            if isinstance(value, str):
                lowered = value.strip().lower()
                if lowered not in {"1", "0", "true", "false", "yes", "no", "on", "off"}:
                    raise ValueError(value)
                return lowered in {"1", "true", "yes", "on"}
            return bool(value)
        if "int" in kind:
            if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                raise ValueError(value)
            return int(value)
        if "float" in kind:
            number = float(value)
            if isinstance(value, bool) or not math.isfinite(number):
                raise ValueError(value)
            return number
        if isinstance(value, (list, dict)):
            raise TypeError(value)
        text = str(value)
        return text if name in _PATHS else clean_text(text)
    except (TypeError, ValueError):
        shown = "" if name == "api_key" else f" {quoted(value)}"
        raise UsageError(f"{origin}: invalid value{shown} for {name}") from None


def _archive(wiki: str, home: Path) -> str:
    """A ``zim:PATH`` value with its path absolute (``zim:NAME``, a bare name that is no
    file: the newest archive of that name in ``<home>/zim``); any other value as it is."""
    scheme, colon, path = wiki.partition(":")
    if colon and scheme.lower() == "zim" and path:
        given = absolute_path(path)
        if is_bare_name(path) and not given.exists():
            given = find_archive(path, home) or given
        return f"{scheme}:{given}"
    return wiki


def resolve(
    flags: Mapping[str, Any],
    env: Mapping[str, str] = os.environ,
    config_path: Path | None = None,
) -> Settings:
    """Merge the four sources; ``flags`` holds only options the user actually gave."""
    return resolve_with_origins(flags, env, config_path)[0]


def resolve_with_origins(
    flags: Mapping[str, Any],
    env: Mapping[str, str] = os.environ,
    config_path: Path | None = None,
) -> tuple[Settings, dict[str, Origin]]:
    """:func:`resolve`, plus where each setting came from (for ``react-cli config``)."""
    path = config_path if config_path is not None else home_dir(env) / CONFIG_NAME
    values: dict[str, Any] = {}
    origins = {name: Origin(Source.DEFAULT) for name in _FIELD_TYPES}
    data = load_config_file(path)
    for name, value in data.items():
        if name not in (PRICES_TABLE, MCP_TABLE, TOOLS_TABLE, MODELS_TABLE):
            values[name] = _coerce(name, value, f"config file {path}")
            origins[name] = Origin(Source.FILE)
    for name, names in ENV_VARS.items():
        for var in names:
            if env.get(var):
                values[name] = _coerce(name, env[var], f"environment variable {var}")
                origins[name] = Origin(Source.ENV, var)
                break
    for name, value in flags.items():
        if value is not None and name != MCP_TABLE and name not in _RULES:
            values[name] = _coerce(name, value, f"option for {name}")
            origins[name] = Origin(Source.FLAG)
    entries = model_entries(data.get(MODELS_TABLE), path)
    entry = entries.get(values["model"]) if isinstance(values.get("model"), str) else None
    if entry is not None:  # more specific than the file's keys and the environment
        for name, value in entry.settings(env).items():
            if name == "model" or origins[name].source != Source.FLAG:
                values[name] = _coerce(name, value, f"config file {path} [{MODELS_TABLE}]")
                if name != "model":
                    origins[name] = Origin(Source.FILE, f"[{MODELS_TABLE}.{entry.name}]")
    values.update(tool_rules(data.get(TOOLS_TABLE), {k: flags.get(k) for k in _RULES}, path))
    for name in _RULES:
        if flags.get(name):
            origins[name] = Origin(Source.FLAG)
        elif values[name]:
            origins[name] = Origin(Source.FILE, f"[{TOOLS_TABLE}]")
    given = flags.get(MCP_TABLE) or ()
    values[MCP_TABLE] = mcp_servers(data.get(MCP_TABLE), given, path)
    if values[MCP_TABLE]:
        origins[MCP_TABLE] = Origin(Source.FLAG if given else Source.FILE)
    if PRICES_TABLE in data:
        priced = values.get("model")
        table = data[PRICES_TABLE]
        if entry is not None and isinstance(table, dict) and entry.name in table:
            priced = entry.name  # [prices] may name the model as -m does
        model_prices = _model_prices(data[PRICES_TABLE], priced, path)
        for name, value in model_prices.items():
            values[name] = _coerce(name, value, f"config file {path} [{PRICES_TABLE}]")
            origins[name] = Origin(Source.FILE, f"[{PRICES_TABLE}]")
    settings = Settings(**values)
    if settings.service_tier == "flex" and origins["timeout_s"].source is Source.DEFAULT:
        values["timeout_s"] = FLEX_TIMEOUT_S
    if settings.base_url.endswith("/"):
        values["base_url"] = settings.base_url.rstrip("/")
    values["replicas"] = tuple(url.rstrip("/") for url in settings.replicas)
    values["wiki"] = _archive(wiki_root(settings.wiki), home_dir(env))
    values["tools_from"] = tuple(str(absolute_path(path)) for path in settings.tools_from)
    if settings.variant is None:
        values["variant"] = default_variant(settings.wiki)
    settings = Settings(**values)
    api = origins["api"]
    validate(settings, api.describe() if api.source != Source.FLAG else "--api")
    return settings, origins
