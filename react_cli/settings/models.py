"""Per-model endpoints: the config file's ``[models.NAME]`` tables, so a local and a hosted
model run side by side (``eval -m local -m hosted``) and ``-m NAME`` alone says where a model
is served.

```toml
[models.local-qwen]
model = "qwen2.5-3b-instruct"      # the name the endpoint serves [the table's name]
base_url = "http://127.0.0.1:8080/v1"
api = "completions"
[models."deepseek-chat"]
base_url = "https://api.deepseek.com/v1"
api_key_env = "DEEPSEEK_API_KEY"   # or api_key = "..."
```

An entry is more specific than the file's own keys and the environment, so it wins over
both; an option given on the command line wins over it. A key goes only where its entry says:
an entry that names a ``base_url`` but no key sends none (``OPENAI_API_KEY`` is for the
endpoint it was set for), unless ``--api-key`` is given.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from react_cli.core.errors import UsageError
from react_cli.core.wording import clipped, quoted

MODELS_TABLE = "models"
ENTRY_KEYS = ("model", "base_url", "api", "api_key", "api_key_env")
VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
MAX_NAME_CHARS = 512


@dataclass(frozen=True)
class ModelEntry:
    """One ``[models.NAME]`` table: the settings it gives the model it names."""

    name: str  # the table's name: what ``-m`` gives
    served: str  # the name the endpoint serves (``model``, else ``name``)
    base_url: str | None = None
    api: str | None = None
    api_key: str | None = None
    api_key_env: str | None = None  # the variable that holds its key, read when it is used
    where: str = ""  # how errors name it

    def settings(self, env: Mapping[str, str]) -> dict[str, Any]:
        """The settings the entry gives (the model's served name, its endpoint, its key: none
        when it names an endpoint but no key); UsageError when its key's variable is unset."""
        given: dict[str, Any] = {"model": self.served}
        if self.base_url is not None:
            given["base_url"] = self.base_url
        if self.api is not None:
            given["api"] = self.api
        key = self.api_key
        if self.api_key_env is not None:
            key = env.get(self.api_key_env) or None
            if key is None:
                raise UsageError(
                    f"{self.where}: api_key_env names {self.api_key_env}, which is not set"
                )
        if key is not None or self.base_url is not None:
            given["api_key"] = key
        return given


def model_entries(table: Any, path: Path) -> dict[str, ModelEntry]:
    """The ``[models]`` table's entries by name; UsageError naming the one that is wrong."""
    where = f"config file {path}: [{MODELS_TABLE}]"
    if table is None:
        return {}
    if not isinstance(table, dict) or not all(isinstance(v, dict) for v in table.values()):
        raise UsageError(f"{where} holds one table per model: [{MODELS_TABLE}.NAME]")
    return {name: _entry(name, entry, f"{where} {quoted(name)}") for name, entry in table.items()}


def _entry(name: str, entry: dict[str, Any], where: str) -> ModelEntry:
    unknown = sorted(set(entry) - set(ENTRY_KEYS))
    if unknown:
        raise UsageError(
            f"{where}: unknown key(s) {', '.join(map(clipped, unknown))} "
            f"(use {', '.join(ENTRY_KEYS)})"
        )
    texts = {key: _text(entry.get(key), key, where) for key in ENTRY_KEYS}
    if texts["api_key"] is not None and texts["api_key_env"] is not None:
        raise UsageError(f"{where}: give api_key or api_key_env, not both")
    variable = texts["api_key_env"]
    if variable is not None and not VARIABLE.fullmatch(variable):
        raise UsageError(f"{where}: api_key_env {quoted(variable)} is no variable name")
    return ModelEntry(
        name=name,
        served=texts["model"] or name,
        base_url=texts["base_url"],
        api=texts["api"],
        api_key=texts["api_key"],
        api_key_env=variable,
        where=where,
    )


def _text(value: object, key: str, where: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_NAME_CHARS:
        shown = "" if key == "api_key" else f" {quoted(value)}"
        raise UsageError(f"{where}: invalid value{shown} for {key}")
    return value
