"""A fake model that answers each question from its own script, whatever the order of calls.

Used as ``FakeOpenAI(PerQuestion({...}))``: the question (or claim) and the step number are read
from the prompt, so concurrent runs get the same answers as sequential ones.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from fake_openai import Reply

_QUESTION = re.compile(r"^(?:Question|Claim): (.*)$", re.MULTILINE)
_STEP = re.compile(r"Thought (\d+):$")


def prompt_of(body: dict[str, Any]) -> str:
    messages = body.get("messages") or []
    return "".join(str(m.get("content", "")) for m in messages) or str(body.get("prompt", ""))


def question_of(body: dict[str, Any]) -> str:
    """The last ``Question: …`` / ``Claim: …`` line of the prompt (the examples come first)."""
    found = _QUESTION.findall(prompt_of(body))
    return found[-1] if found else ""


@dataclass
class PerQuestion:
    """``scripts[question]`` is the list of replies for steps 1, 2, …; the last one repeats.

    A script item is the model's text, or a ``Reply`` for faults. Unknown questions get
    ``default``.
    """

    scripts: dict[str, list[str | Reply]]
    default: list[str | Reply] = field(default_factory=lambda: [" ok\nAction 1: Finish[unknown]"])
    delay_s: float = 0.0

    def __call__(self, body: dict[str, Any]) -> Reply:
        script = self.scripts.get(question_of(body), self.default)
        match = _STEP.search(prompt_of(body))
        step = int(match.group(1)) if match else 1
        item = script[min(step, len(script)) - 1]
        if isinstance(item, Reply):
            return item
        return Reply(text=item, delay_s=self.delay_s)


def finish(answer: str, step: int = 1) -> str:
    return f" I know this.\nAction {step}: Finish[{answer}]"


def search(entity: str, step: int = 1) -> str:
    return f" I need to search {entity}.\nAction {step}: Search[{entity}]"
