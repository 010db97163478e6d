"""A scripted endpoint for every method of the paper, and a script over the six eval questions.

``MethodsEndpoint`` is a ``FakeOpenAI`` reply function: it tells the call from the prompt's end
(``Thought k:`` a ReAct step, ``Action k:`` an Act step, ``Answer:`` Standard's call, the CoT
cue: CoT's greedy call at temperature 0, else a CoT-SC sample) and answers from the question's
``Script``. Samples are handed out in order, per question, however they are requested.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from dataclasses import dataclass
from typing import Any

from eval_fakes import Q, finish, prompt_of, question_of, search
from fake_openai import Reply

_LOOP = re.compile(r"(Thought|Action) (\d+):$")


@dataclass(frozen=True)
class Script:
    """What the model writes for one question, per kind of call."""

    react: list[str]  # the ReAct steps, in order (the last repeats)
    act: list[str]
    standard: str  # after "Answer:"
    cot: str  # after the CoT cue, greedy
    samples: list[str]  # CoT-SC's samples, in order


def sample(answer: str | None) -> str:
    """A CoT-SC sample's text: a thought, then its Answer line (none: no Answer line)."""
    said = f"\nAnswer: {answer}" if answer is not None else ""
    return f" I think about it.{said}"


def samples(*groups: tuple[str | None, int]) -> list[str]:
    """Samples in blocks: ``("yes", 13), ("no", 8)`` is 13 answering yes, then 8 no."""
    return [sample(answer) for answer, count in groups for _ in range(count)]


class MethodsEndpoint:
    """Answers each call from its question's script (or ``default``); counts them by kind."""

    def __init__(self, scripts: dict[str, Script], default: Script | None = None) -> None:
        self.scripts, self.default = scripts, default
        self.kinds: Counter[str] = Counter()
        self._taken: Counter[str] = Counter()
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Reply:
        prompt, question = prompt_of(body), question_of(body)
        script = self.scripts.get(question) or self.default
        assert script is not None, question
        loop = _LOOP.search(prompt)
        if loop is not None:
            kind = "react" if loop.group(1) == "Thought" else "act"
            outputs = script.react if kind == "react" else script.act
            text = outputs[min(int(loop.group(2)), len(outputs)) - 1]
        elif prompt.endswith("Answer:"):
            kind, text = "standard", script.standard
        elif body.get("temperature") == 0:
            kind, text = "cot", script.cot
        else:
            with self._lock:
                number = self._taken[question]
                self._taken[question] += 1
            kind, text = "sample", script.samples[number % len(script.samples)]
        with self._lock:
            self.kinds[kind] += 1
        return Reply(text=text)


NEVER = [search(f"Page {k}", k) for k in range(1, 9)]  # eight Searches, no answer
LATE_NO = [*NEVER[:7], finish("no", 8)]  # answers at step 8, past the hybrids' 7

# The six HotpotQA questions, scripted so that every method and back-off is exercised (gold:
# yes, Chief of Protocol, Animorphs, no, Greenwich Village New York City, YG Entertainment).
SCRIPTS = {
    # every method right; CoT-SC 13/21: no back-off
    Q[0]: Script(
        react=[finish("yes")],
        act=[" Finish[yes]"],
        standard=" yes",
        cot=" They are both American.\nAnswer: yes",
        samples=samples(("yes", 13), ("no", 8)),
    ),
    # CoT-SC's majority has 10 of 21 votes (weak): CoT-SC → ReAct backs off to ReAct (right)
    Q[1]: Script(
        react=[search("Kiss and Tell"), finish("Chief of Protocol", 2)],
        act=[" Search[Kiss and Tell]", " Finish[Ambassador]"],
        standard=" Ambassador",
        cot=" She was an ambassador.\nAnswer: Ambassador",
        samples=samples(("Chief of Protocol", 10), ("Ambassador", 6), (None, 5)),
    ),
    # ReAct never answers: ReAct → CoT-SC backs off to CoT-SC, whose 11/21 is not weak
    Q[2]: Script(
        react=NEVER,
        act=[" Finish[Remnants]"],
        standard=" Animorphs",
        cot=" It is Remnants.\nAnswer: Remnants",
        samples=[sample("The Animorphs."), *samples(("animorphs", 10), ("Remnants", 10))],
    ),
    # a three-way tie, yes first (wins, weak); ReAct answers "no" only at step 8
    Q[3]: Script(
        react=LATE_NO,
        act=[" Finish[no]"],
        standard=" yes",
        cot=" Different places.\nAnswer: no",
        samples=samples(("yes", 7), ("no", 7), (None, 7)),
    ),
    # no Answer line anywhere: Standard and CoT give none, CoT-SC none (back off to ReAct)
    Q[4]: Script(
        react=[finish("Greenwich Village, New York City")],
        act=NEVER,
        standard="",
        cot=" I do not know.",
        samples=samples((None, 21)),
    ),
    # only CoT is right
    Q[5]: Script(
        react=NEVER,
        act=[" Finish[JYP]"],
        standard=" JYP",
        cot=" YG formed it.\nAnswer: YG Entertainment",
        samples=samples(("SM", 21)),
    ),
}

# Each method's exact match per question, as scripted above (the hybrids' ReAct limit is 7).
EXPECTED_EM = {
    "standard": [1, 0, 1, 0, 0, 0],
    "cot": [1, 0, 0, 1, 0, 1],
    "cot-sc": [1, 1, 1, 0, 0, 0],
    "act": [1, 0, 0, 1, 0, 0],
    "react": [1, 1, 0, 1, 1, 0],
    "cot-sc+react": [1, 1, 1, 0, 1, 0],
    "react+cot-sc": [1, 1, 1, 0, 1, 0],
}
# Which block answered, per question (None: no answer).
EXPECTED_BRANCH = {
    "cot-sc+react": ["cot-sc", "react", "cot-sc", None, "react", "cot-sc"],
    "react+cot-sc": ["react", "react", "cot-sc", "cot-sc", "react", "cot-sc"],
}
