"""Gold evidence read from a dataset row: HotpotQA's ``supporting_facts``, FEVER's ``evidence``.

HotpotQA gives ``supporting_facts`` as ``[[title, sentence id], ...]`` (the original files) or
``{title: [...], sent_id: [...]}`` (the Hugging Face layout), and each sentence's text in the
row's ``context`` (either layout, as ``wiki build-zim`` reads it). FEVER gives ``evidence`` as
alternative sets, ``[[[annotation id, evidence id, page, sentence id], ...], ...]``, pages in
the dump's spelling (``Soul_Food_-LRB-film-RRB-``), and no text; a NOT ENOUGH INFO claim's
sets name no page. A row without these fields has no gold evidence; a row whose fields are
malformed is a ``BadGold`` naming the field, which the dataset reader turns into its error.
"""

from __future__ import annotations

from typing import Any

from react_cli.methods.evidence import GoldEvidence, GoldFact
from react_cli.wiki.titles import fever_title


class BadGold(ValueError):
    """A row's gold evidence that is not of the dataset's shape; the message names the field."""


def hotpot_gold(record: dict[str, Any]) -> GoldEvidence | None:
    """A HotpotQA row's supporting facts, with their sentences' text from its context."""
    facts = record.get("supporting_facts")
    if facts is None:
        return None
    if isinstance(facts, dict):
        titles, ids = facts.get("title"), facts.get("sent_id")
        if not isinstance(titles, list) or not isinstance(ids, list) or len(titles) != len(ids):
            raise BadGold("malformed 'supporting_facts'")
        pairs = list(zip(titles, ids, strict=True))
    elif isinstance(facts, list) and all(isinstance(f, list) and len(f) == 2 for f in facts):
        pairs = [(f[0], f[1]) for f in facts]
    else:
        raise BadGold("malformed 'supporting_facts'")
    if not all(isinstance(title, str) and _sentence_id(sent) for title, sent in pairs):
        raise BadGold("a supporting fact is not a title and a sentence id")
    context = _context(record.get("context"))
    return GoldEvidence(
        (tuple(GoldFact(title, sent, _sentence(context, title, sent)) for title, sent in pairs),)
    )


def fever_gold(record: dict[str, Any]) -> GoldEvidence | None:
    """A FEVER claim's evidence sets (a NOT ENOUGH INFO claim's are empty)."""
    sets = record.get("evidence")
    if sets is None:
        return None
    if not isinstance(sets, list) or not all(isinstance(one, list) for one in sets):
        raise BadGold("malformed 'evidence'")
    read = []
    for one in sets:
        facts = []
        for item in one:
            if not isinstance(item, list) or len(item) != 4:
                raise BadGold("an evidence item is not [annotation, evidence, page, sentence]")
            page, sent = item[2], item[3]
            if page is None:
                continue
            if not isinstance(page, str) or not _sentence_id(sent):
                raise BadGold("an evidence item is not a page and a sentence id")
            facts.append(GoldFact(fever_title(page), sent))
        read.append(tuple(facts))
    return GoldEvidence(tuple(read))


def _sentence_id(value: Any) -> bool:
    return type(value) is int and value >= 0


Context = dict[str, list[Any]]


def _context(context: Any) -> Context:
    """A HotpotQA context's paragraphs by title (the first of a title; anything malformed
    leaves the facts without text, not the row unreadable)."""
    pairs: list[tuple[Any, Any]] = []
    if isinstance(context, dict):
        titles, paragraphs = context.get("title"), context.get("sentences")
        if isinstance(titles, list) and isinstance(paragraphs, list):
            pairs = list(zip(titles, paragraphs, strict=False))
    elif isinstance(context, list):
        pairs = [
            (item[0], item[1]) for item in context if isinstance(item, list) and len(item) == 2
        ]
    found: Context = {}
    for title, sentences in pairs:
        if isinstance(title, str) and isinstance(sentences, list):
            found.setdefault(title, sentences)
    return found


def _sentence(context: Context, title: str, index: int) -> str | None:
    sentences = context.get(title, [])
    text = sentences[index] if index < len(sentences) else None
    return text if isinstance(text, str) and text.strip() else None
