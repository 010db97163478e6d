"""What an Inspect AI log says its task was: named after the dataset, the method and (for a
method that runs the loop) the protocol, its arguments the method, protocol, prompt and tools
that ran, so a text eval's log and a tools eval's of the same dataset are told apart.

The prompt is the one the method's blocks were sent (an eval records each kind's under
``prompts`` when it is not the named one: ``hotpotqa-tools`` for the tools protocol's loop,
``hotpotqa-cot`` for CoT-SC), the tools those the traces' model was told of, and the files and
servers they came from (a file by its name and hash, never its local path).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from react_cli.core.method import Method
from react_cli.core.records import ProtocolName
from react_cli.eval.config import EvalConfig
from react_cli.share.text import one_line

Json = dict[str, Any]


def _method(name: str) -> Method | None:
    try:
        return Method(name)
    except ValueError:  # a newer writer's method
        return None


def task_protocol(config: EvalConfig, method: str) -> str | None:
    """The protocol of the method's loop (``text``: the paper's, and an eval's before
    protocols were recorded); None for a method that runs no loop."""
    known = _method(method)
    if known is not None and not known.uses_tools:
        return None
    protocol = config.run.get("protocol")
    return one_line(protocol, 40) if isinstance(protocol, str) else str(ProtocolName.TEXT)


def method_prompts(config: EvalConfig, method: str) -> list[Json]:
    """The name and hash of each prompt the method's blocks were sent, in their order."""
    sent = config.run.get("prompts")
    sent = sent if isinstance(sent, dict) else {}
    known = _method(method)
    kinds = [str(kind) for kind in known.prompts] if known is not None else [method]
    prompts: list[Json] = []
    for kind in dict.fromkeys(kinds):
        ref = sent.get(kind)
        if isinstance(ref, dict) and isinstance(ref.get("name"), str):
            name, sha = ref["name"], ref.get("sha256")
        else:
            name, sha = config.prompt_name, config.prompt_sha256
        prompts.append(
            {
                "name": one_line(Path(name).name if "/" in name else name),
                "sha256": one_line(sha) if isinstance(sha, str) else None,
            }
        )
    return prompts


def task_args(config: EvalConfig, method: str, protocol: str | None, tools: list[str]) -> Json:
    """The log's ``task_args``: what the task ran with (see the module docstring)."""
    prompts = method_prompts(config, method)
    args: Json = {
        "method": method,
        "protocol": protocol,
        "prompt": prompts[0]["name"] if len(prompts) == 1 else [p["name"] for p in prompts],
        "tools": tools,
        "wiki_tools": config.wiki_tools,
    }
    if config.tool_files:
        args["tool_files"] = [
            {"name": one_line(Path(f.path).name), "sha256": one_line(f.sha256)}
            for f in config.tool_files
        ]
    elif config.tools_from:
        args["tool_files"] = [{"name": one_line(Path(f).name)} for f in config.tools_from]
    if config.mcp:
        args["mcp"] = [one_line(server) for server in config.mcp]
    return args
