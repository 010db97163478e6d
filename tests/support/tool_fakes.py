"""A scripted endpoint that speaks both protocols: native tool calls for a request that
declares tools (each question's ``ToolScript``, by how many replies its chat holds), the
paper's text for every other (``method_fakes.MethodsEndpoint``).

``tools_script(script)`` turns a text script's ReAct and Act steps into the same steps as tool
calls (the thought as the reply's text, the action as its one call), so both protocols answer a
question the same way, and ``eval compare`` of a text eval with a tools eval shows no flip but
where a script says otherwise.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from dataclasses import dataclass
from typing import Any

from fake_openai import Reply
from method_fakes import MethodsEndpoint, Script

from react_cli.loop.text.parser import parse_step
from react_cli.tools.paper import PAPER_TOOLS


def tool_call(name: str, **arguments: Any) -> dict[str, Any]:
    """A native call as a ``Reply`` sends it."""
    return {"name": name, "arguments": json.dumps(arguments)}


def as_tool_reply(text: str) -> Reply:
    """A text-protocol step as a reply with one native call (none: the text alone)."""
    parsed = parse_step(text)
    if parsed.call is None:
        return Reply(text=parsed.thought)
    spec = next(s for s in PAPER_TOOLS if s.name == parsed.call.name)
    call = tool_call(spec.function_name, **{spec.argument: parsed.call.argument})
    return Reply(text=parsed.thought, tool_calls=[call])


@dataclass(frozen=True)
class ToolScript:
    react: list[Reply]  # the replies of ReAct's chat, in order (the last repeats)
    act: list[Reply]


def tools_script(script: Script) -> ToolScript:
    return ToolScript(
        [as_tool_reply(text) for text in script.react], [as_tool_reply(text) for text in script.act]
    )


class ProtocolsEndpoint:
    """Tool requests from ``tools[question]``, the rest from ``text``; counts tool requests."""

    def __init__(self, text: MethodsEndpoint, tools: dict[str, ToolScript]) -> None:
        self.text, self.tools = text, tools
        self.kinds: Counter[str] = Counter()
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Reply:
        if not body.get("tools"):
            return self.text(body)
        messages = body["messages"]
        question = str(messages[1]["content"]).split(": ", 1)[-1]
        act = "without any explanation" in str(messages[0]["content"])  # the Act prompt's
        script = self.tools[question]
        replies = script.act if act else script.react
        made = sum(message["role"] == "assistant" for message in messages)
        with self._lock:
            self.kinds["act-tools" if act else "react-tools"] += 1
        return replies[min(made, len(replies) - 1)]
