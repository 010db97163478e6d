"""An entry's key: the SHA-256 of what identifies the call, as canonical JSON (sorted keys,
ASCII), so the same call always finds its entry and the file never holds the call's text
as a key."""

from __future__ import annotations

import hashlib
import json
from typing import Any

KEY_VERSION = 1
"""Bumped when what a key covers changes: older entries are then never found (and age out)."""


def digest(kind: str, identity: dict[str, Any]) -> str:
    """The key of a call of ``kind`` (``model``, ``wiki``) identified by ``identity``."""
    text = json.dumps(
        {"v": KEY_VERSION, "kind": kind, **identity},
        sort_keys=True,
        ensure_ascii=True,
        separators=(",", ":"),
    )
    return hashlib.sha256(text.encode("ascii")).hexdigest()
