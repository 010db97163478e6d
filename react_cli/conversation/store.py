"""The conversations kept in the home directory: ``conversations/<id>.json``, one a file.

``ask -c`` continues the most recent (the file written last), ``--conversation ID`` a given
one. A file here is read as untrusted input: a regular file only (a FIFO or a device is never
opened), at most :data:`MAX_CONVERSATION_BYTES`, strict JSON of the shape ``history`` writes;
anything else is one ``Error:`` line naming the file. Each turn rewrites its conversation's
file in one step (a link planted in the folder is replaced, never followed), under the folder's
lock and after reading the file again: two follow-ups of one conversation at once (two
terminals, a script) keep both turns, the one that ends last after the other's.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from react_cli.conversation.history import Conversation
from react_cli.core.conversation import ID_PATTERN
from react_cli.core.errors import ConversationError, UsageError
from react_cli.core.wording import quoted
from react_cli.infra.files import hold_lock, write_json_in
from react_cli.infra.untrusted import BadInput, dump_json, parse_json, read_text, size_text

FOLDER = "conversations"
SUFFIX = ".json"
MAX_CONVERSATION_BYTES = 16 << 20
"""A larger file is not read as a conversation (and a conversation is never saved larger)."""
LOCK = ".lock"
LOCK_WAIT_S = 10.0
"""How long a turn waits for another command writing the folder (it reads and writes one file)."""


class ConversationStore:
    """The home directory's ``conversations/`` folder."""

    def __init__(self, home: Path) -> None:
        self.folder = home / FOLDER

    def path(self, conversation_id: str) -> Path:
        return self.folder / f"{conversation_id}{SUFFIX}"

    def latest(self) -> Path | None:
        """The file of the conversation that went on last (by modification time, then name),
        None when there is none; only regular files count."""
        if not self.folder.is_dir():
            return None
        stamped = []
        for path in self.folder.glob(f"*{SUFFIX}"):
            try:
                if path.is_file() and not path.name.startswith("."):
                    stamped.append((path.stat().st_mtime_ns, path.name, path))
            except OSError:  # vanished meanwhile
                continue
        return max(stamped)[2] if stamped else None

    def chosen(
        self, created: datetime, *, latest: bool = False, conversation_id: str | None = None
    ) -> tuple[Conversation, str | None]:
        """The conversation a question goes on: ``conversation_id``'s, the latest (a new one
        when there is none yet), or a new one; and a note for the user, if any."""
        if latest and conversation_id is not None:
            raise UsageError("-c/--continue and --conversation contradict each other: give one")
        if conversation_id is not None:
            return self.load(conversation_id), None
        if latest:
            path = self.latest()
            if path is not None:
                return self.read(path), None
            return Conversation.start(created), "no conversation to continue yet: this starts one"
        return Conversation.start(created), None

    def load(self, conversation_id: str) -> Conversation:
        """Conversation ``conversation_id``; UsageError when there is no such conversation."""
        if not ID_PATTERN.fullmatch(conversation_id):
            shown = quoted(conversation_id)
            listed = "'react-cli traces' lists them"
            raise UsageError(f"--conversation takes a conversation's id ({listed}), not {shown}")
        path = self.path(conversation_id)
        if not path.exists() and not path.is_symlink():
            listed = "'react-cli traces' lists them"
            raise UsageError(f"no conversation {conversation_id} in {self.folder} ({listed})")
        return self.read(path)

    def read(self, path: Path) -> Conversation:
        """The conversation in ``path``; ConversationError naming it when it is not one."""
        try:
            text = read_text(path, MAX_CONVERSATION_BYTES)
        except FileNotFoundError:
            raise ConversationError(f"{path}: no such conversation file") from None
        except (OSError, BadInput) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            raise ConversationError(f"{path}: cannot read the conversation: {reason}") from None
        try:
            conversation = Conversation.from_json(parse_json(text))
        except BadInput as exc:
            raise ConversationError(f"{path}: not a react-cli conversation: {exc}") from None
        except (TypeError, ValueError) as exc:
            raise ConversationError(f"{path}: not a react-cli conversation ({exc})") from None
        if path.name != f"{conversation.id}{SUFFIX}":
            raise ConversationError(f"{path}: holds conversation {conversation.id}, not its own")
        return conversation

    def save(self, conversation: Conversation) -> None:
        """Keep the conversation's new turns (:attr:`Conversation.unsaved`) in its file: under
        the folder's lock, after the turns the file holds now (another command may have added
        some since it was read: ``conversation`` then holds them too, its own turns after
        them); ConversationError when the file cannot be read or written (nothing is)."""
        where = self.path(conversation.id)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            with hold_lock(self.folder / LOCK, LOCK_WAIT_S):
                kept = self._kept(where)
                base = conversation if kept is None else kept
                turns = conversation.turns if kept is None else kept.turns + conversation.unsaved
                self._write(Conversation(conversation.id, base.created, turns))
        except BlockingIOError:
            raise ConversationError(
                f"{self.folder} stayed locked by another react-cli for {LOCK_WAIT_S:g} s: "
                "the new turn is not kept"
            ) from None
        except OSError as exc:
            reason = exc.strerror or exc
            raise ConversationError(f"cannot save the conversation to {where}: {reason}") from None
        conversation.turns, conversation.saved = list(turns), len(turns)

    def _kept(self, path: Path) -> Conversation | None:
        """The conversation its file holds now (None: no file yet, or it was deleted)."""
        if not path.exists() and not path.is_symlink():
            return None
        try:
            return self.read(path)
        except ConversationError as exc:
            raise ConversationError(f"{exc}: the new turn is not kept") from None

    def _write(self, conversation: Conversation) -> None:
        document = conversation.to_json()
        if len(dump_json(document, indent=2).encode("utf-8")) >= MAX_CONVERSATION_BYTES:
            limit = size_text(MAX_CONVERSATION_BYTES)
            raise ConversationError(
                f"conversation {conversation.id} has grown past {limit}: its new turn is not "
                "kept (start a new conversation)"
            )
        write_json_in(self.folder, f"{conversation.id}{SUFFIX}", document)
