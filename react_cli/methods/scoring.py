"""Answer scoring: the official HotpotQA exact match and token F1, and FEVER label accuracy.

``normalize_answer``, ``exact_match`` and ``f1_score`` follow ``hotpot_evaluate_v1.py`` (the
SQuAD normalisation): lower-case, drop ASCII punctuation, drop the articles a/an/the, collapse
white space. F1 is zero when either side normalises to yes/no/noanswer and the two differ.
"""

from __future__ import annotations

import re
import string
from collections import Counter

_PUNCTUATION = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_SPECIAL = frozenset({"yes", "no", "noanswer"})

SUPPORTS = "SUPPORTS"
REFUTES = "REFUTES"
NOT_ENOUGH_INFO = "NOT ENOUGH INFO"
_LABEL_FORMS = {
    "supports": SUPPORTS,
    "support": SUPPORTS,
    "supported": SUPPORTS,
    "refutes": REFUTES,
    "refute": REFUTES,
    "refuted": REFUTES,
    "not enough info": NOT_ENOUGH_INFO,
    "not enough information": NOT_ENOUGH_INFO,
    "nei": NOT_ENOUGH_INFO,
}


def normalize_answer(text: str) -> str:
    """The official normalisation, in the official order."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def exact_match(prediction: str | None, gold: str) -> float:
    """1.0 when both sides normalise to the same string; a missing answer scores 0."""
    if prediction is None:
        return 0.0
    return float(normalize_answer(prediction) == normalize_answer(gold))


def f1_score(prediction: str | None, gold: str) -> float:
    """Token-level F1 of the normalised strings, with the yes/no/noanswer special case."""
    if prediction is None:
        return 0.0
    pred, truth = normalize_answer(prediction), normalize_answer(gold)
    if (pred in _SPECIAL or truth in _SPECIAL) and pred != truth:
        return 0.0
    pred_tokens, truth_tokens = pred.split(), truth.split()
    same = sum((Counter(pred_tokens) & Counter(truth_tokens)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred_tokens), same / len(truth_tokens)
    return 2 * precision * recall / (precision + recall)


def best_scores(prediction: str | None, golds: list[str]) -> tuple[float, float]:
    """(EM, F1) against the best-matching of several acceptable gold answers."""
    return (
        max(exact_match(prediction, gold) for gold in golds),
        max(f1_score(prediction, gold) for gold in golds),
    )


def fever_label(answer: str | None) -> str | None:
    """SUPPORTS / REFUTES / NOT ENOUGH INFO from a model's answer (any case, punctuation,
    underscores, or the forms SUPPORTED, REFUTED, NOT ENOUGH INFORMATION, NEI); else None."""
    if answer is None:
        return None
    words = re.sub(r"[^a-z]+", " ", answer.lower()).split()
    return _LABEL_FORMS.get(" ".join(words))
