"""What a batch eval keeps in its folder, so that a killed eval resumed never pays twice.

``batch/batches.jsonl`` records each batch as it is created (its wave, id, input file and the
key of every request in it: SHA-256 of the request's body, the call's identity), and then
that it was read; ``batch/answers.jsonl`` the answer of every request that got one, by key.
A resumed eval runs its questions again: a call whose key has an answer is answered from it
(nothing sent), one whose key is in a batch created but never read waits for that batch
(polled again, never sent again). Both files are read back as untrusted input: a line that is
not a record (a torn last line, an edit) is skipped, and its call is simply asked again.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from react_cli.infra.files import open_appending
from react_cli.infra.untrusted import BadInput, lines, loads, read_text

BATCH_DIR = "batch"
BATCHES = "batches.jsonl"
ANSWERS = "answers.jsonl"
MAX_LEDGER_BYTES = 1 << 30


def request_key(body: dict[str, Any]) -> str:
    """A request's key: the SHA-256 of its body as canonical JSON (no secret is in a body)."""
    canonical = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


def is_batch_folder(folder: Path) -> bool:
    """Whether an eval folder is a batch eval's (``--resume`` then goes on in batches)."""
    return (folder / BATCH_DIR / BATCHES).is_file()


@dataclass
class Sent:
    """A batch as created: its wave, id, input file, and its requests' keys by custom_id."""

    wave: int
    batch: str
    input_file: str
    keys: dict[str, str]

    def to_json(self) -> dict[str, Any]:
        return {
            "wave": self.wave,
            "batch": self.batch,
            "input_file": self.input_file,
            "keys": self.keys,
        }


@dataclass
class Ledger:
    """A batch eval's records (see the module docstring), appended as they happen."""

    folder: Path
    answers: dict[str, dict[str, Any]] = field(default_factory=dict)
    unread: dict[str, Sent] = field(default_factory=dict)  # created, never read
    waves: int = 0  # the last wave recorded
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def open(cls, folder: Path) -> Ledger:
        ledger = cls(folder)
        (folder / BATCH_DIR).mkdir(exist_ok=True)
        read: set[str] = set()
        for record in _records(folder / BATCH_DIR / BATCHES):
            if isinstance(record.get("read"), str):
                read.add(record["read"])
                continue
            sent = _sent(record)
            if sent is not None:
                ledger.unread[sent.batch] = sent
                ledger.waves = max(ledger.waves, sent.wave)
        for batch in read:
            ledger.unread.pop(batch, None)
        for record in _records(folder / BATCH_DIR / ANSWERS):
            key, body = record.get("key"), record.get("body")
            if isinstance(key, str) and isinstance(body, dict):
                ledger.answers[key] = body
        return ledger

    def created(self, sent: Sent) -> None:
        """Record a batch as soon as it exists (a kill after this polls it again)."""
        with self._lock:
            self.unread[sent.batch] = sent
            self.waves = max(self.waves, sent.wave)
            self._append(BATCHES, sent.to_json())

    def answered(self, key: str, body: dict[str, Any]) -> None:
        with self._lock:
            self.answers[key] = body
            self._append(ANSWERS, {"key": key, "body": body})

    def read(self, batch: str) -> None:
        """Record that a batch's answers are all kept (it is never polled again)."""
        with self._lock:
            self.unread.pop(batch, None)
            self._append(BATCHES, {"read": batch})

    def waiting_in(self, key: str) -> Sent | None:
        """The batch created but not read that holds the request ``key``, if one does."""
        with self._lock:
            return next((s for s in self.unread.values() if key in s.keys.values()), None)

    def _append(self, name: str, record: dict[str, Any]) -> None:
        line = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8", "replace")
        fd = open_appending(self.folder / BATCH_DIR / name)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)


def _records(path: Path) -> list[dict[str, Any]]:
    try:
        text = read_text(path, MAX_LEDGER_BYTES)
    except FileNotFoundError:
        return []
    except (OSError, BadInput):
        return []  # unreadable: every call is asked again
    found = []
    for line in lines(text):
        try:
            record = loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            found.append(record)
    return found


def _sent(record: dict[str, Any]) -> Sent | None:
    wave, batch, input_file, keys = (record.get(k) for k in ("wave", "batch", "input_file", "keys"))
    if type(wave) is not int or not isinstance(batch, str) or not isinstance(input_file, str):
        return None
    if not isinstance(keys, dict) or not all(isinstance(v, str) for v in keys.values()):
        return None
    return Sent(wave, batch, input_file, {str(k): v for k, v in keys.items()})
