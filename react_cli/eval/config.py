"""What an eval was made with (its summary's ``config``): the run settings, its methods and its
concurrency."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from react_cli.core import fields

# Settings a summary records, by the name ``config.Settings`` gives them.
_RECORDED_SETTINGS = {
    "model": "model",
    "base_url": "base_url",
    "api": "api",
    "protocol": "protocol",
    "temperature": "temperature",
    "max_steps": "max_steps",
    "max_tokens": "max_tokens",
    "max_total_tokens": "max_total_tokens",
    "max_parse_errors": "max_parse_errors",
    "max_repeats": "max_repeats",
    "max_tool_errors": "max_tool_errors",
    "stream": "stream",
    "timeout_s": "run_timeout_s",
    "force_answer": "force_answer",
    "constrain": "constrain",
    "wiki": "wiki",
    "variant": "variant",
    "method": "method",
    "samples": "samples",
    "sample_temperature": "sample_temperature",
    "hybrid_max_steps": "hybrid_max_steps",
    "max_cost": "max_cost",
    "max_no_progress": "max_no_progress",
}
_OWN = (
    "concurrency",
    "wiki_concurrency",
    "max_concurrency",
    "methods",
    "tools_from",
    "wiki_tools",
    "mcp",
)
MAX_TOOL_SOURCES = 256  # files or MCP servers an eval's summary may name
AUTO = "auto"
_REACT_ONLY = ("react",)


@dataclass(frozen=True)
class EvalConfig:
    """The run settings every question of the eval used, as ``wiring.run_config`` records them
    in a trace (no secret), how many model and Wikipedia requests ran at once: a number,
    or ``"auto"`` (learnt from the endpoint, up to ``max_concurrency``), and where its tools
    beyond Wikipedia's came from: ``--tools-from`` files as given, whether Search and Lookup
    were on, and MCP servers as shown (without credentials: ``--resume`` is told them again)."""

    run: dict[str, Any]
    concurrency: int | str | None  # None: not recorded
    wiki_concurrency: int | str | None
    methods: tuple[str, ...] = _REACT_ONLY  # in the order their results are shown
    max_concurrency: int | None = None  # auto's cap, where recorded
    tools_from: tuple[str, ...] = ()
    wiki_tools: bool = True
    mcp: tuple[str, ...] = ()  # each server's ``McpServer.describe()``

    @property
    def model(self) -> str:
        return str(self.run["model"])  # text, as from_json checks

    @property
    def prompt_name(self) -> str:
        return str(self.run["prompt"]["name"])

    @property
    def prompt_sha256(self) -> str | None:
        sha = self.run["prompt"].get("sha256")
        return sha if isinstance(sha, str) else None

    @property
    def method(self) -> str | None:
        """The method, where an eval records one (the paper's methods); else None."""
        method = self.run.get("method")
        return method if isinstance(method, str) else None

    def prompt_shas(self) -> dict[str, str]:
        """The hash of the prompt of each kind the eval sent (an eval before methods were
        recorded sent the one ReAct prompt)."""
        sent = self.run.get("prompts")
        if isinstance(sent, dict):
            return {
                str(kind): ref["sha256"]
                for kind, ref in sent.items()
                if isinstance(ref, dict) and isinstance(ref.get("sha256"), str)
            }
        sha = self.prompt_sha256
        return {} if sha is None else {self.method or "react": sha}

    def settings(self) -> dict[str, Any]:
        """The recorded settings, as ``config.resolve`` flags (``resolve`` checks them)."""
        flags = {
            name: self.run[key]
            for key, name in _RECORDED_SETTINGS.items()
            if self.run.get(key) is not None
        }
        flags["prompt"] = self.prompt_name
        if self.tools_from:
            flags["tools_from"] = self.tools_from
        if not self.wiki_tools:
            flags["wiki_tools"] = False
        return flags

    def to_json(self) -> dict[str, Any]:
        data = {
            **self.run,
            "concurrency": self.concurrency,
            "wiki_concurrency": self.wiki_concurrency,
        }
        if self.max_concurrency is not None:
            data["max_concurrency"] = self.max_concurrency
        if self.methods != _REACT_ONLY:
            data["methods"] = list(self.methods)
        if self.tools_from:
            data["tools_from"] = list(self.tools_from)
        if not self.wiki_tools:
            data["wiki_tools"] = False
        if self.mcp:
            data["mcp"] = list(self.mcp)
        return data

    @classmethod
    def from_json(cls, data: object) -> EvalConfig | None:
        """The config ``data`` holds; None unless it names a model and a prompt, and its
        methods (where it lists them) by their names."""
        if not isinstance(data, dict) or not isinstance(data.get("prompt"), dict):
            return None
        named = (data.get("model"), data["prompt"].get("name"))
        if not all(isinstance(name, str) for name in named):
            return None
        run = {key: value for key, value in data.items() if key not in _OWN}
        methods = data.get("methods")
        if not isinstance(methods, list) or not methods:
            method = run.get("method")
            methods = [method if isinstance(method, str) else "react"]
        if not all(isinstance(name, str) for name in methods):
            return None
        names = tuple(dict.fromkeys(methods))
        workers = (_level(data.get("concurrency")), _level(data.get("wiki_concurrency")))
        tools_from, mcp = _texts(data.get("tools_from")), _texts(data.get("mcp"))
        if tools_from is None or mcp is None:
            return None
        return cls(
            run,
            *workers,
            names,
            _count(data.get("max_concurrency")),
            tools_from,
            data.get("wiki_tools") is not False,
            mcp,
        )


def _texts(value: object) -> tuple[str, ...] | None:
    """A recorded list of names (absent: none; anything but a short list of text: None)."""
    if value is None:
        return ()
    if not isinstance(value, list) or len(value) > MAX_TOOL_SOURCES:
        return None
    if not all(isinstance(item, str) and 0 < len(item) <= 4096 for item in value):
        return None
    return tuple(value)


def _level(value: object) -> int | str | None:
    """A recorded number of requests at once, or ``"auto"`` (anything else: not recorded)."""
    return AUTO if value == AUTO else _count(value)


def _count(value: object) -> int | None:
    """A recorded number of workers (anything but a whole number ≥ 1: not recorded)."""
    try:
        return fields.whole(value, "workers", low=1)
    except fields.FieldError:
        return None
