"""What an eval was made with (its summary's ``config``): the run settings, its methods and its
concurrency."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from react_cli.core import fields

# Settings a summary records, by the name ``settings.Settings`` gives them.
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
    "service_tier": "service_tier",
}
_OWN = (
    "concurrency",
    "wiki_concurrency",
    "max_concurrency",
    "methods",
    "tools_from",
    "tool_files",
    "wiki_tools",
    "mcp",
    "tool_allow",
    "tool_deny",
)
MAX_TOOL_SOURCES = 256  # files or MCP servers an eval's summary may name
AUTO = "auto"
_REACT_ONLY = ("react",)


@dataclass(frozen=True)
class EvalConfig:
    """The run settings every question of the eval used, as ``traces.runconfig.run_config``
    records them in a trace (no secret), how many model and Wikipedia requests ran at once: a
    number, or ``"auto"`` (learnt from the endpoint, up to ``max_concurrency``), and where its
    tools beyond Wikipedia's came from: ``--tools-from`` files (their paths, and each with the
    hash of the text that ran: ``tool_files``), whether Search and Lookup were on, and MCP
    servers as shown (without credentials). A folder names no code that runs: ``--resume`` is
    given the files and the servers again, and checks them against these (:func:`tools_differ`).
    Its consent rules (``--allow-tool``, ``--deny-tool``) are never taken from a folder either
    (it could otherwise allow what the user did not): ``--resume`` is told them again."""

    run: dict[str, Any]
    concurrency: int | str | None  # None: not recorded
    wiki_concurrency: int | str | None
    methods: tuple[str, ...] = _REACT_ONLY  # in the order their results are shown
    max_concurrency: int | None = None  # auto's cap, where recorded
    tools_from: tuple[str, ...] = ()
    wiki_tools: bool = True
    mcp: tuple[str, ...] = ()  # each server's ``McpServer.describe()``
    tool_files: tuple[ToolFile, ...] = ()  # none recorded before hashes were (or no file)
    tool_allow: tuple[str, ...] = ()
    tool_deny: tuple[str, ...] = ()

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
        """The recorded settings, as ``settings.resolve`` flags (``resolve`` checks them)."""
        flags = {
            name: self.run[key]
            for key, name in _RECORDED_SETTINGS.items()
            if self.run.get(key) is not None
        }
        flags["prompt"] = self.prompt_name
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
        if self.tool_files:
            data["tool_files"] = [{"path": f.path, "sha256": f.sha256} for f in self.tool_files]
        if not self.wiki_tools:
            data["wiki_tools"] = False
        if self.mcp:
            data["mcp"] = list(self.mcp)
        if self.tool_allow:
            data["tool_allow"] = list(self.tool_allow)
        if self.tool_deny:
            data["tool_deny"] = list(self.tool_deny)
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
        files = _files(data.get("tool_files"))
        allow, deny = _texts(data.get("tool_allow")), _texts(data.get("tool_deny"))
        if tools_from is None or mcp is None or files is None or allow is None or deny is None:
            return None
        return cls(
            run,
            *workers,
            names,
            _count(data.get("max_concurrency")),
            tools_from,
            data.get("wiki_tools") is not False,
            mcp,
            files,
            allow,
            deny,
        )


@dataclass(frozen=True)
class ToolFile:
    """A ``--tools-from`` file as an eval ran it: its path, and the hash of its text."""

    path: str
    sha256: str

    def describe(self) -> str:
        return f"{self.path} (sha256 {self.sha256[:12]})"


SHA256 = re.compile(r"[0-9a-f]{64}")


def _files(value: object) -> tuple[ToolFile, ...] | None:
    """Recorded tool files (absent: none; anything but a short list of paths with their
    hashes: None)."""
    if value is None:
        return ()
    if not isinstance(value, list) or len(value) > MAX_TOOL_SOURCES:
        return None
    found = []
    for item in value:
        if not isinstance(item, dict):
            return None
        path, sha = item.get("path"), item.get("sha256")
        if not (isinstance(path, str) and 0 < len(path) <= 4096):
            return None
        if not (isinstance(sha, str) and SHA256.fullmatch(sha)):
            return None
        found.append(ToolFile(path, sha))
    return tuple(found)


def tools_differ(recorded: EvalConfig, given: tuple[ToolFile, ...]) -> str | None:
    """How the tool files ``given`` now differ from those the eval ran with, by their text
    (their hash: a file moved or renamed is the same file), or None when they are the same.
    An eval recorded before hashes were is checked by its files' names alone."""
    if recorded.tool_files or not recorded.tools_from:
        ran = [(f.sha256, f.describe()) for f in recorded.tool_files]
        now = [(f.sha256, f.describe()) for f in given]
    else:
        ran = [(PurePath(path).name, path) for path in recorded.tools_from]
        now = [(PurePath(f.path).name, f.path) for f in given]
    missing, extra = _unmatched(ran, now), _unmatched(now, ran)
    parts = []
    if missing:
        parts.append(f"it ran {', '.join(missing)}, not given now")
    if extra:
        parts.append(f"{', '.join(extra)} given now, which it did not run")
    return "; ".join(parts) or None


def _unmatched(these: list[tuple[str, str]], others: list[tuple[str, str]]) -> list[str]:
    """How each of ``these`` (key, shown) is shown that ``others`` has fewer of by key."""
    left = Counter(key for key, _ in others)
    shown = []
    for key, text in these:
        if left[key]:
            left[key] -= 1
        else:
            shown.append(text)
    return shown


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
