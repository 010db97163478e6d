"""No exemplar among the questions it scores: a distilled prompt's ``questions`` (ids and text
hashes, see ``loop.prompts.question_key``) against an eval's selection.

A prompt whose examples are questions of the eval would score what it was shown: ``eval``
refuses it, naming how many and the first ones, unless ``--allow-overlap`` says it is meant
(the summary's config then records them as ``prompt_overlap``).
"""

from __future__ import annotations

from collections.abc import Sequence

from react_cli.core.errors import UsageError
from react_cli.eval.datasets import Example
from react_cli.loop.prompts import PromptSet, question_key

MAX_NAMED = 3


def overlap(prompts: PromptSet, examples: Sequence[Example]) -> tuple[str, ...]:
    """The exemplar keys of ``prompts`` that name questions of ``examples``, in order."""
    recorded = {key for template in prompts.templates.values() for key in template.exemplars}
    if not recorded:
        return ()
    found: dict[str, None] = {}
    for example in examples:
        keys = [question_key(example.question)]
        if example.id is not None:
            keys.insert(0, str(example.id))
        hits = [key for key in keys if key in recorded]
        if hits:
            found.setdefault(hits[0])
    return tuple(found)


def checked_overlap(
    prompts: PromptSet, examples: Sequence[Example], allowed: bool
) -> tuple[str, ...]:
    """:func:`overlap`, refused with a UsageError unless ``allowed``."""
    found = overlap(prompts, examples)
    if found and not allowed:
        named = ", ".join(found[:MAX_NAMED]) + (", …" if len(found) > MAX_NAMED else "")
        raise UsageError(
            f"the prompt {prompts.named.name!r} has {len(found)} of this eval's questions as "
            f"exemplars ({named}): distill from a train split or a disjoint slice and evaluate "
            "on another, or give --allow-overlap to score it anyway"
        )
    return found
