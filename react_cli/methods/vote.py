"""CoT-SC's majority vote over its samples' answers, and the hybrid's test of the majority.

Answers are grouped by the task's normalisation (HotpotQA: the official EM normalisation;
FEVER: the label the answer reads as), so ``Paris`` and ``paris.`` are one vote. A sample
without an answer, or whose answer normalises to nothing (FEVER: names no label), does not
vote. The winner is the group with the most votes, a tie going to the group that appeared
first; it is shown as its first answer as written.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from react_cli.core.method import Task
from react_cli.methods.scoring import fever_label, normalize_answer


@dataclass(frozen=True)
class Group:
    """The samples whose answers normalise alike: the first answer as written, and its votes."""

    answer: str
    votes: int


@dataclass(frozen=True)
class Vote:
    """The groups in the order they first appeared, and how many samples were asked for."""

    groups: tuple[Group, ...]
    samples: int

    @property
    def winner(self) -> Group | None:
        """The group with the most votes (the first of those tied); None when none voted."""
        return max(self.groups, key=lambda group: group.votes, default=None)

    @property
    def voters(self) -> int:
        return sum(group.votes for group in self.groups)

    @property
    def weak(self) -> bool:
        """The paper's back-off test: the majority answer has fewer than n/2 of the n votes
        (10 of 21 backs off, 11 of 21 does not); no answer at all is weak too."""
        winner = self.winner
        return winner is None or 2 * winner.votes < self.samples

    def counts(self) -> dict[str, int]:
        """``{answer: votes}`` in the order of first appearance (the tie-break order)."""
        return {group.answer: group.votes for group in self.groups}


def vote(answers: Sequence[str | None], task: Task) -> Vote:
    """Count ``answers`` (one per sample, None for a sample without one) by ``task``'s rule."""
    first: dict[str, str] = {}  # in insertion order: the order groups first appeared
    counts: Counter[str] = Counter()
    for answer in answers:
        key = _key(answer, task)
        if key is not None and answer is not None:
            first.setdefault(key, answer)
            counts[key] += 1
    return Vote(tuple(Group(first[key], counts[key]) for key in first), len(answers))


def _key(answer: str | None, task: Task) -> str | None:
    """What two answers must share to be one vote; None: the answer does not vote."""
    if answer is None:
        return None
    key = fever_label(answer) if task is Task.FEVER else normalize_answer(answer)
    return key or None
