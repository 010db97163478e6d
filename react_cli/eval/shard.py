"""``--shard I/N``: the I-th of N parts of an eval's questions, the same on every machine.

A question goes to the part its id names: the SHA-256 of the dataset's own id of the question
(its index in the file when it has none) modulo N. It depends on nothing but the question, so
N processes given ``1/N`` … ``N/N`` on any machines, in any order, run every question of the
selection once between them, and ``eval merge`` puts their folders back together.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from react_cli.core.errors import UsageError
from react_cli.core.wording import quoted

MAX_SHARDS = 10_000
_FORM = re.compile(r"\s*(\d{1,5})\s*/\s*(\d{1,5})\s*")


@dataclass(frozen=True)
class Shard:
    """Part ``index`` (from 1) of ``count``."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str, option: str = "--shard") -> Shard:
        """``2/3`` as a shard; UsageError for anything else."""
        match = _FORM.fullmatch(text)
        if match is None:
            raise UsageError(f"{option} must be I/N (e.g. 2/3), not {quoted(text)}")
        index, count = int(match.group(1)), int(match.group(2))
        if not 1 <= count <= MAX_SHARDS:
            raise UsageError(f"{option}: N must be from 1 to {MAX_SHARDS:,}, not {count}")
        if not 1 <= index <= count:
            raise UsageError(f"{option}: I must be from 1 to N ({count}), not {index}")
        return cls(index, count)

    def holds(self, question_id: str | int | None, index: int) -> bool:
        """Whether the question of this id (None: the one at ``index`` of the file) is this
        part's."""
        key = f"index:{index}" if question_id is None else f"id:{question_id}"
        digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest()
        return int.from_bytes(digest[:8], "big") % self.count == self.index - 1

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"
