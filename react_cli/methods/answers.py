"""Reading the answer out of one Standard or CoT completion; pure, never raising.

Standard's prompt ends with ``Answer:``, so its answer is the first line the model writes (an
echoed ``Answer:`` label dropped). CoT's prompt ends with its cue (``Thought: Let's think step by
step.``), and its answer is what follows the first line labelled ``Answer:``; a completion
without one gave no answer (a CoT-SC sample without one does not vote).
"""

from __future__ import annotations

import re

from react_cli.core.method import Method
from react_cli.loop.text.cutter import cut_at_observation, strip_think

# "Answer:", "**Answer:**", "> answer :" at the start of a line. Matched once per line, at its
# start: the classes are separated by the word, so a long run of marks costs one pass.
_ANSWER_LABEL = re.compile(r"[ \t>#*_`\-]*answer[ \t*_]*[:：]", re.IGNORECASE)
_MARKS = " \t*_`"


def read_answer(kind: Method, text: str) -> str | None:
    """The answer a completion of a ``kind`` prompt (standard or CoT) gives, if any."""
    lines = cut_at_observation(strip_think(text)).splitlines()
    if kind is Method.STANDARD:
        first = next((line for line in lines if line.strip()), "")
        label = _ANSWER_LABEL.match(first)
        return _cleaned(first[label.end() :] if label else first)
    for line in lines:
        label = _ANSWER_LABEL.match(line)
        if label:
            return _cleaned(line[label.end() :])
    return None


def _cleaned(text: str) -> str | None:
    """The answer without surrounding space and emphasis marks; None when nothing is left."""
    answer = " ".join(text.strip(_MARKS).split())
    return answer or None
