"""A run's sources: the pages whose text its observations showed, in the order first seen.

One function, :func:`run_sources`, derives them from a run's steps (each observation's
``PageSource``), for ``ask``, ``--json``, traces, exports and eval alike. A page is one
revision of one title on one wiki; its sentences are every sentence any observation showed of
it. ``supports`` is a plain text-match heuristic: the shown sentences contain the answer,
both normalised as for exact match (``scoring.normalize_answer``), on word boundaries; or both
normalised with punctuation read as a space, so that "1844" is found in "(1844-1846)". Yes/no
answers never count (they are not spans of text), nor does a missing answer.
"""

from __future__ import annotations

import string
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from react_cli.core.sources import PageSource, Revision, Sentence
from react_cli.core.trajectory import Step, actions_of
from react_cli.methods.scoring import normalize_answer

_NOT_SPANS = frozenset({"", "yes", "no", "noanswer"})
_SPACED = str.maketrans(string.punctuation, " " * len(string.punctuation))


@dataclass(frozen=True)
class RunSource:
    """A page a run was shown, with every sentence shown of it, and whether they contain the
    run's answer."""

    page: PageSource
    supports: bool

    def to_json(self) -> dict[str, Any]:
        return {**self.page.to_json(), "supports": self.supports}


def run_sources(steps: Iterable[Step], answer: str | None) -> tuple[RunSource, ...]:
    """The pages ``steps`` showed, first seen first, each with its shown sentences in page
    order, marked ``supports`` when they contain ``answer``."""
    pages: dict[tuple[str, str, Revision | None], PageSource] = {}
    shown: dict[tuple[str, str, Revision | None], dict[int, Sentence]] = {}
    for source in (action.source for action in actions_of(steps)):
        if source is None:
            continue
        pages.setdefault(source.page, source)
        sentences = shown.setdefault(source.page, {})
        for sentence in source.sentences:
            sentences.setdefault(sentence.index, sentence)
    found = []
    for key, page in pages.items():
        ordered = tuple(shown[key][index] for index in sorted(shown[key]))
        merged = PageSource(
            page.wiki, page.title, page.url, page.revision, ordered, page.sentence_ids
        )
        found.append(RunSource(merged, answer is not None and contains(ordered, answer)))
    return tuple(found)


def contains(sentences: Iterable[Sentence], text: str) -> bool:
    """Whether the sentences hold ``text`` as whole words, both normalised as for exact match
    (or both with punctuation as spaces); never for yes, no or nothing."""
    shown = " ".join(sentence.text for sentence in sentences)
    for form in (normalize_answer, _spaced):
        wanted = form(text)
        if wanted in _NOT_SPANS:
            return False
        if f" {wanted} " in f" {form(shown)} ":
            return True
    return False


def _spaced(text: str) -> str:
    return normalize_answer(text.translate(_SPACED))
