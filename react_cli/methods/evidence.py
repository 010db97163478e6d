"""Evidence scores: did a run find the pages and sentences a dataset's gold evidence names?

A question's gold evidence is one or more alternative sets of facts (HotpotQA's
``supporting_facts`` are one set; FEVER lists alternatives, any one of which proves the
claim), each fact a page title and a sentence id, with the sentence's text where the dataset
carries it (HotpotQA's ``context`` does). Against a run's sources:

- page recall: the gold titles among the pages the run was shown (the best set's share);
- page precision: the run's pages that are gold titles (0 when it was shown none, as
  ``hotpot_evaluate_v1.py`` scores an empty prediction);
- sentence recall: the gold sentences the run was shown (the best set's share). A source
  whose sentences are numbered as the page numbers them (``SentenceIds.PAGE``: an archive
  ``wiki build-zim`` made from the HotpotQA file) is matched by sentence id, exactly; any
  other (live Wikipedia, whose text has moved on since the dataset) by text: the gold
  sentence, normalised as for exact match, among the sentences shown of that page. A set
  whose sentences cannot be matched either way (FEVER on live Wikipedia: no text) has none.

Titles match in any case, with underscores as spaces (FEVER writes ``Soul_Food``).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from react_cli.core.sources import PageSource, SentenceIds
from react_cli.methods.sources import contains


@dataclass(frozen=True)
class GoldFact:
    """One sentence of gold evidence: its page, its id there, and its text if known."""

    title: str
    sentence: int | None
    text: str | None = None


@dataclass(frozen=True)
class GoldEvidence:
    """A question's gold evidence: alternative sets of facts, any one of them complete."""

    sets: tuple[tuple[GoldFact, ...], ...]


@dataclass(frozen=True)
class Evidence:
    """A run's evidence scores, fractions from 0 to 1 (``sentence_recall`` None where the
    sentences cannot be matched)."""

    page_recall: float
    page_precision: float
    sentence_recall: float | None

    def to_json(self) -> dict[str, Any]:
        return {
            "page_recall": round(self.page_recall, 6),
            "page_precision": round(self.page_precision, 6),
            "sentence_recall": (
                None if self.sentence_recall is None else round(self.sentence_recall, 6)
            ),
        }


def title_key(title: str) -> str:
    """What two spellings of one title share: NFC, underscores as spaces, any case."""
    text = unicodedata.normalize("NFC", title).replace("_", " ")
    return " ".join(text.split()).casefold()


def score_evidence(gold: GoldEvidence, sources: Sequence[PageSource]) -> Evidence | None:
    """The scores of a run shown ``sources`` against ``gold``; None when ``gold`` names no
    page (a FEVER claim with NOT ENOUGH INFO)."""
    sets = [facts for facts in gold.sets if facts]
    if not sets:
        return None
    seen: dict[str, list[PageSource]] = {}
    for source in sources:
        seen.setdefault(title_key(source.title), []).append(source)
    gold_titles = {title_key(fact.title) for facts in sets for fact in facts}
    precision = len(gold_titles & seen.keys()) / len(seen) if seen else 0.0
    recalls = []
    for facts in sets:
        titles = {title_key(fact.title) for fact in facts}
        recalls.append(len(titles & seen.keys()) / len(titles))
    exact = bool(sources) and all(s.sentence_ids == SentenceIds.PAGE for s in sources)
    sentences = [_sentence_recall(facts, seen, exact) for facts in sets]
    known = [recall for recall in sentences if recall is not None]
    return Evidence(max(recalls), precision, max(known) if known else None)


def _sentence_recall(
    facts: tuple[GoldFact, ...], seen: dict[str, list[PageSource]], exact: bool
) -> float | None:
    """The share of ``facts`` the run was shown; None when they cannot all be matched: a
    fact without text needs every source numbered as the page numbers it (``exact``)."""
    wanted = [fact for fact in facts if fact.sentence is not None or fact.text is not None]
    if not wanted or not (exact or all(fact.text is not None for fact in wanted)):
        return None
    shown = sum(_shown(fact, seen.get(title_key(fact.title), [])) for fact in wanted)
    return shown / len(wanted)


def _shown(fact: GoldFact, sources: list[PageSource]) -> bool:
    """Whether a source of the fact's page showed it: by id where the source numbers its
    sentences as the page does, else by text."""
    for source in sources:
        if source.sentence_ids == SentenceIds.PAGE and fact.sentence is not None:
            if any(sentence.index == fact.sentence for sentence in source.sentences):
                return True
        elif fact.text is not None and contains(source.sentences, fact.text):
            return True
    return False
