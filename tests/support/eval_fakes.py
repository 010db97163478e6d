"""Eval fixtures (six HotpotQA questions, six FEVER claims) and a fake model that answers each
question from its own script, whatever the order of calls.

Used as ``FakeOpenAI(PerQuestion({...}))``: the question (or claim) and the step number are read
from the prompt, so concurrent runs get the same answers as sequential ones.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fake_openai import Reply

from react_cli.core.method import Method
from react_cli.eval.datasets import Selection, load_dataset
from react_cli.eval.plan import EvalPlan
from react_cli.loop.prompts import prompt_set
from react_cli.settings.settings import Settings

EVAL_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "eval"
HOTPOT = EVAL_FIXTURES / "hotpotqa_dev_first6.json"
FEVER = EVAL_FIXTURES / "fever_paper_dev_first6.jsonl"
Q = [row["question"] for row in json.loads(HOTPOT.read_text(encoding="utf-8"))]
CLAIMS = [json.loads(line)["claim"] for line in FEVER.read_text(encoding="utf-8").splitlines()]
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


# Answers to the six HotpotQA questions: right, partly right, wrong, or none at all (question 5
# never finishes: a step limit of 3 ends it).
HOTPOT_SCRIPTS: dict[str, list[str | Reply]] = {
    Q[0]: [finish("yes")],
    Q[1]: [search("Kiss and Tell"), finish("Chief of Protocol of the United States", 2)],
    Q[2]: [search("Arthur's Magazine"), finish("The Animorphs", 2)],
    Q[3]: [finish("yes")],
    Q[4]: [finish("Greenwich Village")],
    Q[5]: [search(f"Page {k}", k) for k in range(1, 4)],
}


def rows_of(out: Path) -> list[dict[str, Any]]:
    """The rows of an eval folder's ``results.jsonl``, in question order."""
    lines = (out / "results.jsonl").read_text(encoding="utf-8").split("\n")[:-1]  # JSON Lines
    return sorted((json.loads(line) for line in lines), key=lambda row: row["index"])


def summary_of(out: Path) -> dict[str, Any]:
    """An eval folder's ``summary.json``."""
    data: dict[str, Any] = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    return data


def react_plan(settings: Settings, dataset: Path, folder: Path, concurrency: int) -> EvalPlan:
    """The plan of a ReAct eval of every question of ``dataset``, as ``react-cli eval`` would
    make it, for a test driving the eval's parts itself."""
    data = load_dataset(dataset)
    return EvalPlan(
        dataset=data,
        examples=data.examples,
        selection=Selection(),
        settings=settings,
        methods=(Method.REACT,),
        prompts=prompt_set(settings.prompt, [Method.REACT]),
        folder=folder,
        concurrency=concurrency,
    )
