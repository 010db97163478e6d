"""Settings resolution: command-line flag > environment variable > config file > default.

The home directory holds ``config.toml`` and ``traces/``; it is the platform's user data dir
unless ``REACT_CLI_HOME`` points elsewhere. The values are checked by ``validation`` once
resolved; ``urls`` turns a Wikipedia URL given as a page or its API into its host root.
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
from react_cli.settings.environment import ENV_VARS, HOME_ENV
from react_cli.settings.mcp import MCP_TABLE, mcp_servers
from react_cli.settings.settings import Settings
from react_cli.settings.urls import default_variant, wiki_root
from react_cli.settings.validation import validate

if TYPE_CHECKING:
    pass

CONFIG_NAME = "config.toml"
MAX_CONFIG_BYTES = 1 << 20


def home_dir(env: Mapping[str, str] = os.environ) -> Path:
    if env.get(HOME_ENV):
        return Path(env[HOME_ENV]).expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir("react-cli", appauthor=False))


PRICES_TABLE = "prices"  # [prices] "model name" = { input = 0.15, output = 0.60 }


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
    except OSError as exc:
        raise UsageError(f"config file {path}: {exc.strerror or exc}") from None
    except RecursionError:
        raise UsageError(f"config file {path}: nested too deeply") from None
    except (BadInput, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"config file {path}: {exc}") from None
    except ValueError:  # int() refuses integers of more than 4,300 digits
        raise UsageError(f"config file {path}: a number too long to read") from None
    unknown = sorted(set(data) - set(_FIELD_TYPES) - {PRICES_TABLE})
    if unknown:
        named = ", ".join(did_you_mean(key, (*_FIELD_TYPES, PRICES_TABLE)) for key in unknown)
        raise UsageError(f"config file {path}: unknown setting(s): {named}")
    return data


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
    unknown = sorted(set(entry) - {"input", "output"})
    if unknown:
        raise UsageError(
            f"config file {path}: [{PRICES_TABLE}] {quoted(model)}: unknown key(s) "
            f"{', '.join(map(clipped, unknown))} (use input and output)"
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
        if name not in (PRICES_TABLE, MCP_TABLE):
            values[name] = _coerce(name, value, f"config file {path}")
            origins[name] = Origin(Source.FILE)
    for name, names in ENV_VARS.items():
        for var in names:
            if env.get(var):
                values[name] = _coerce(name, env[var], f"environment variable {var}")
                origins[name] = Origin(Source.ENV, var)
                break
    for name, value in flags.items():
        if value is not None and name != MCP_TABLE:
            values[name] = _coerce(name, value, f"option for {name}")
            origins[name] = Origin(Source.FLAG)
    given = flags.get(MCP_TABLE) or ()
    values[MCP_TABLE] = mcp_servers(data.get(MCP_TABLE), given, path)
    if values[MCP_TABLE]:
        origins[MCP_TABLE] = Origin(Source.FLAG if given else Source.FILE)
    if PRICES_TABLE in data:
        model_prices = _model_prices(data[PRICES_TABLE], values.get("model"), path)
        for name, value in model_prices.items():
            values[name] = _coerce(name, value, f"config file {path} [{PRICES_TABLE}]")
            origins[name] = Origin(Source.FILE, f"[{PRICES_TABLE}]")
    settings = Settings(**values)
    if settings.base_url.endswith("/"):
        values["base_url"] = settings.base_url.rstrip("/")
    values["wiki"] = wiki_root(settings.wiki)
    if settings.variant is None:
        values["variant"] = default_variant(settings.wiki)
    settings = Settings(**values)
    api = origins["api"]
    validate(settings, api.describe() if api.source != Source.FLAG else "--api")
    return settings, origins
