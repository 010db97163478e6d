"""Older trace documents made today's, one version at a time (``traces.trace.load_trace``).

Version 2 added the method: every version-1 trace is a ReAct run. Version 3 made a step hold
what its protocol produced: its model calls (``replies``) and the actions its reply asked for
(``actions``, each with what its tool gave back), where a version-2 step was the union of
both protocols, with several native calls of one reply a step each (``reply_step`` naming the
first). A version-2 step becomes one reply or two (``raw`` and ``followup_raw``, with their
assistant messages) and one action (``action``, ``call``, ``observation`` and the tool's
facts); the steps of one reply become one step with their calls as its actions, numbered
again from 1. What a version-2 trace did not record is read from what it did, as the loop
reads it today: the call of a trace from before calls (its action read again by the text
protocol's parser) and the text each reply's loop ignored.

Everything here reads a document as hostile as any trace: what has the wrong shape is left
for ``Trace.from_json`` to refuse, naming it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from react_cli.core.method import Method, Task
from react_cli.core.records import ProtocolName, StopReason
from react_cli.core.trajectory import PARSE_ERROR, Cue
from react_cli.loop.text.parser import ignored_text, parse_action
from react_cli.tools.base import ToolSpec
from react_cli.tools.paper import PAPER_TOOLS

Document = dict[str, Any]
_FLAGS = ("forced", "max_tokens_reached", "cached", "cached_usage", "error")  # v2 details' own


def _from_version_1(document: Document) -> Document:
    """Version 1 knew one method, ReAct (a hand-made trace may name another: it is kept), and
    its task was its prompt's: FEVER's prompt, or HotpotQA's."""
    config = document.get("config")
    if isinstance(config, dict) and "task" not in config:
        prompt = config.get("prompt")
        name = prompt.get("name") if isinstance(prompt, dict) else None
        fever = isinstance(name, str) and name.startswith(str(Task.FEVER))
        config = {**config, "task": str(Task.FEVER if fever else Task.HOTPOTQA)}
    method = document.get("method", str(Method.REACT))
    return {**document, "version": 2, "method": method, "config": config}


def _from_version_2(document: Document) -> Document:
    """A version-2 document's steps as version 3 writes them (see the module)."""
    steps = document.get("steps")
    if not isinstance(steps, list) or not all(isinstance(step, dict) for step in steps):
        return {**document, "version": 3}
    reading = _Reading(document)
    upgraded: list[Document] = []
    for number, step in enumerate(steps):
        last = number == len(steps) - 1
        if step.get("reply_step") is not None and upgraded:  # a later call of the last reply
            _join(upgraded[-1], reading.action(step))
        else:
            upgraded.append(reading.step(step, len(upgraded) + 1, last))
    return {**document, "version": 3, "steps": upgraded}


UPGRADES: dict[int, Callable[[Document], Document]] = {1: _from_version_1, 2: _from_version_2}
"""Each older version's upgrade to the next."""


class _Reading:
    """What a version-2 document's steps are read with: its tools, its protocol, its loop."""

    def __init__(self, document: Document) -> None:
        config = document.get("config")
        config = config if isinstance(config, dict) else {}
        self.specs = _specs(config.get("tools"))
        self.text = config.get("protocol", str(ProtocolName.TEXT)) == str(ProtocolName.TEXT)
        self.thoughts = document.get("method") != str(Method.ACT)
        ended = (str(StopReason.LLM_ERROR), str(StopReason.INTERRUPTED))
        self.failed = document.get("stop_reason") in ended  # its last call may have failed

    def step(self, old: Document, index: int, last: bool) -> Document:
        details = old.get("details")
        details = details if isinstance(details, dict) else {}
        error = old.get("error")
        model_failed = isinstance(error, str) and error != PARSE_ERROR
        new: Document = {
            "index": index,
            "thought": old.get("thought", ""),
            "replies": self._replies(old, details, model_failed or (last and self.failed)),
            "actions": [] if _acted_on_nothing(old) else [self.action(old)],
            **_kept(old, usage="usage", latency_s="latency_s", retries="retries"),
            "error": error,
        }
        if details.get("forced") is True:
            new["forced"] = True
        if details.get("cached") is True:
            new.update(cached=True, cached_usage=details.get("cached_usage"))
        return new

    def _replies(self, old: Document, details: Document, failed: bool) -> list[Document]:
        """The step's model calls: its reply (none when the call failed before any text came)
        and its follow-up's."""
        raw, message, followup = old.get("raw", ""), old.get("message"), old.get("followup_raw")
        if failed and not raw and message is None and followup is None:
            return []
        forced = details.get("forced") is True
        cue = Cue.THOUGHT if self.thoughts and not forced else Cue.ACTION
        first = self._reply(cue, raw, message, forced)
        if details.get("max_tokens_reached") is True:
            first["max_tokens_reached"] = True
        if followup is None:
            return [first]
        return [first, self._reply(Cue.ACTION, followup, old.get("followup_message"), False)]

    def _reply(self, cue: Cue, text: Any, message: Any, forced: bool) -> Document:
        reply: Document = {"cue": str(cue), "text": text}
        if message is not None:
            reply["message"] = message
        if self.text and not forced and isinstance(text, str):
            ignored = ignored_text(text, thought_call=cue is Cue.THOUGHT, specs=self.specs)
            if ignored:
                reply["ignored"] = ignored
        return reply

    def action(self, old: Document) -> Document:
        details = old.get("details") or {}
        tool_error = details.get("error") if isinstance(details, dict) else None
        if isinstance(details, dict):  # anything else is left for the reader to refuse
            details = {key: value for key, value in details.items() if key not in _FLAGS}
        new: Document = {"action": old.get("action"), **self._call(old)}
        new.update(observation=old.get("observation", ""), details=details)
        new.update(_kept(old, latency_s="tool_latency_s", retries="tool_retries"))
        new.update(_kept(old, source="source", refused="refused"))
        if tool_error is not None:
            new["error"] = str(tool_error)
        return new

    def _call(self, old: Document) -> Document:
        """The recorded call; for a trace from before calls were recorded, the action read
        again (none for a step without a valid action)."""
        if old.get("call") is not None:
            return {"call": old["call"]}
        action = old.get("action")
        if old.get("error") is not None or not isinstance(action, str):
            return {}
        call = parse_action(action, self.specs)
        return {} if call is None else {"call": call.to_json()}


def _kept(old: Document, **names: str) -> Document:
    """The fields of ``old`` that it holds, each under its new name."""
    return {new: old[name] for new, name in names.items() if old.get(name) is not None}


def _acted_on_nothing(old: Document) -> bool:
    """Whether a version-2 step asked for nothing and was told nothing (its model call failed,
    or a forced answer gave none)."""
    return old.get("action") is None and not old.get("observation")


def _join(step: Document, action: Document) -> None:
    """A later call of a reply, as an action of the reply's step (a step has no valid action
    only when none of its calls could be made)."""
    step["actions"].append(action)
    if step.get("error") == PARSE_ERROR and "call" in action:
        step["error"] = None


def _specs(data: Any) -> tuple[ToolSpec, ...]:
    """The recorded tools (a trace that recorded none, or none readable: the paper's)."""
    if not isinstance(data, list):
        return PAPER_TOOLS
    try:
        return tuple(ToolSpec.from_json(item) for item in data) or PAPER_TOOLS
    except (TypeError, ValueError):
        return PAPER_TOOLS
