"""Settings resolution: command-line flag > environment variable > config file > default.

The home directory holds ``config.toml`` and ``traces/``; it is the platform's user data dir
unless ``REACT_CLI_HOME`` points elsewhere.
"""

from __future__ import annotations

import math
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from react_cli.errors import UsageError

HOME_ENV = "REACT_CLI_HOME"
CONFIG_NAME = "config.toml"
APIS = ("chat", "completions")


def home_dir(env: Mapping[str, str] = os.environ) -> Path:
    if env.get(HOME_ENV):
        return Path(env[HOME_ENV]).expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir("react-cli", appauthor=False))


@dataclass(frozen=True)
class Settings:
    """Everything a run needs to know; built only by :func:`resolve`."""

    model: str | None = None
    base_url: str = "https://api.openai.com/v1"
    api_key: str | None = None
    api: str = "chat"
    prompt: str = "hotpotqa"
    max_steps: int = 8
    temperature: float = 0.0
    max_tokens: int | None = None
    wiki: str = "https://en.wikipedia.org"
    variant: str | None = None
    contact: str | None = None
    max_observation_chars: int = 1500
    max_parse_errors: int = 3
    max_repeats: int = 3
    max_total_tokens: int | None = None
    max_tool_errors: int = 2
    run_timeout_s: float | None = None  # --timeout: the whole run
    force_answer: bool = False
    stream: bool = True
    timeout_s: float = 120.0  # one model request
    wiki_timeout_s: float = 20.0  # one Wikipedia request
    retries: int = 4
    retry_backoff_s: float = 0.5  # backoff base, doubled per retry (jitter up to half of it)
    max_retry_after_s: float = 30.0  # the longest Retry-After we honour


# Environment variables read for each setting (first one set wins).
ENV_VARS: dict[str, tuple[str, ...]] = {
    "model": ("REACT_CLI_MODEL",),
    "base_url": ("OPENAI_BASE_URL", "OPENAI_API_BASE"),
    "api_key": ("OPENAI_API_KEY",),
    "api": ("REACT_CLI_API",),
    "prompt": ("REACT_CLI_PROMPT",),
    "wiki": ("REACT_CLI_WIKI",),
    "variant": ("REACT_CLI_VARIANT",),
    "contact": ("REACT_CLI_CONTACT",),
    "run_timeout_s": ("REACT_CLI_TIMEOUT",),
}

_FIELD_TYPES = {f.name: f.type for f in fields(Settings)}
LANG_CODE = re.compile(r"[a-z][a-z0-9]{1,2}(?:-[a-z0-9]{2,8})*")
VARIANT_CODE = re.compile(r"[a-z]{2,3}(?:-[a-z0-9]{2,8})*")
ZH_DEFAULT_VARIANT = "zh-cn"


def lang_host(lang: str) -> str:
    """The live Wikipedia of a language code: ``zh`` -> ``https://zh.wikipedia.org``."""
    code = lang.strip().lower()
    if not LANG_CODE.fullmatch(code):
        raise UsageError(f"--lang must be a Wikipedia language code such as en or zh, not {lang!r}")
    return f"https://{code}.wikipedia.org"


def default_variant(wiki: str) -> str | None:
    """zh-cn for Chinese Wikipedia hosts, so text is not a mix of scripts; else none."""
    from urllib.parse import urlsplit

    host = urlsplit(wiki).hostname or ""
    return ZH_DEFAULT_VARIANT if host.startswith("zh.") else None


def load_config_file(path: Path) -> dict[str, Any]:
    """The ``[defaults]``-free flat TOML table of settings; missing file = empty."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    try:
        with path.open("rb") as handle:
            data = tomllib.load(handle)
    except FileNotFoundError:
        return {}
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"config file {path}: {exc}") from None
    except UnicodeDecodeError as exc:  # TOML must be UTF-8
        raise UsageError(f"config file {path}: not UTF-8 text ({exc.reason})") from None
    unknown = sorted(set(data) - set(_FIELD_TYPES))
    if unknown:
        raise UsageError(f"config file {path}: unknown setting(s): {', '.join(unknown)}")
    return data


def _coerce(name: str, value: Any, origin: str) -> Any:
    kind = _FIELD_TYPES[name]
    try:
        if value is None:
            return None
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
        return str(value)
    except (TypeError, ValueError):
        raise UsageError(f"{origin}: invalid value {value!r} for {name}") from None


def _validate(settings: Settings) -> None:
    if settings.api not in APIS:
        raise UsageError(f"--api must be one of {', '.join(APIS)}, not {settings.api!r}")
    checks = [
        (settings.max_steps >= 1, "--max-steps must be at least 1"),
        (0 <= settings.temperature <= 2, "--temperature must be between 0 and 2"),
        (settings.max_tokens is None or settings.max_tokens >= 1, "--max-tokens must be ≥ 1"),
        (settings.max_observation_chars >= 50, "max_observation_chars must be at least 50"),
        (settings.timeout_s > 0, "timeout_s must be positive"),
        (settings.wiki_timeout_s > 0, "wiki_timeout_s must be positive"),
        (
            settings.run_timeout_s is None or settings.run_timeout_s > 0,
            "--timeout must be positive",
        ),
        (settings.retries >= 0, "retries must be ≥ 0"),
        (settings.retry_backoff_s >= 0, "retry_backoff_s must be ≥ 0"),
        (settings.max_retry_after_s >= 0, "max_retry_after_s must be ≥ 0"),
        (settings.max_parse_errors >= 1, "max_parse_errors must be at least 1"),
        (settings.max_tool_errors >= 1, "max_tool_errors must be at least 1"),
        (settings.max_repeats >= 2, "max_repeats must be at least 2"),
        (
            settings.max_total_tokens is None or settings.max_total_tokens >= 1,
            "--max-total-tokens must be ≥ 1",
        ),
    ]
    for ok, message in checks:
        if not ok:
            raise UsageError(message)
    from react_cli.redaction import check_api_key

    check_api_key(settings.api_key)
    if settings.variant is not None and not VARIANT_CODE.fullmatch(settings.variant):
        raise UsageError(f"--variant must look like zh-cn or zh-tw, not {settings.variant!r}")
    if not settings.base_url.startswith(("http://", "https://")):
        raise UsageError(f"--base-url must be an http(s) URL, not {settings.base_url!r}")


def resolve(
    flags: Mapping[str, Any],
    env: Mapping[str, str] = os.environ,
    config_path: Path | None = None,
) -> Settings:
    """Merge the four sources; ``flags`` holds only options the user actually gave."""
    path = config_path if config_path is not None else home_dir(env) / CONFIG_NAME
    values: dict[str, Any] = {}
    for name, value in load_config_file(path).items():
        values[name] = _coerce(name, value, f"config file {path}")
    for name, names in ENV_VARS.items():
        for var in names:
            if env.get(var):
                values[name] = _coerce(name, env[var], f"environment variable {var}")
                break
    for name, value in flags.items():
        if value is not None:
            values[name] = _coerce(name, value, f"option for {name}")
    settings = Settings(**values)
    if settings.base_url.endswith("/"):
        values["base_url"] = settings.base_url.rstrip("/")
    if settings.variant is None:
        values["variant"] = default_variant(settings.wiki)
    settings = Settings(**values)
    _validate(settings)
    return settings
