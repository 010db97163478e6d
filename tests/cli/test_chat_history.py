"""The chat prompt's history file as untrusted input: a FIFO, a directory, a file too large,
bytes that are not UTF-8, control characters, an unwritable file: each read safely or said in
one warning, never a hang or a crash. (Through a real terminal: ``test_chat_pty.py``.)"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from react_cli.cli.history import MAX_HISTORY_BYTES, KeptHistory


def history(path: Path) -> tuple[KeptHistory, list[str]]:
    warnings: list[str] = []
    return KeptHistory(path, warnings.append), warnings


def test_entries_are_kept_in_prompt_toolkits_format_and_read_back_newest_first(
    tmp_path: Path,
) -> None:
    path = tmp_path / "home" / "chat_history"
    kept, warnings = history(path)
    kept.store_string("Who directed Ed Wood?")
    kept.store_string("two\nlines")
    text = path.read_text(encoding="utf-8")
    assert (
        text.count("\n# ") == 2 and "+Who directed Ed Wood?\n" in text and "+two\n+lines\n" in text
    )
    assert list(history(path)[0].load_history_strings()) == ["two\nlines", "Who directed Ed Wood?"]
    assert oct(path.stat().st_mode & 0o777) == "0o600" and warnings == []


def test_hostile_bytes_and_control_characters_are_read_as_plain_text(tmp_path: Path) -> None:
    path = tmp_path / "chat_history"
    path.write_bytes(
        b"garbage\x00\n+\xff\xfeok\n\n+\x1b[2J\x1b]0;title\x07clear\n#\n+\n#\n+\xc2\x9bx\n"
    )
    assert list(history(path)[0].load_history_strings()) == ["x", "clear", "\ufffd\ufffdok"]


def test_a_file_too_large_is_read_from_its_newest_entries(tmp_path: Path) -> None:
    path = tmp_path / "chat_history"
    entry = "\n# 2026-12-01 12:00:00\n+" + "q" * 98 + "\n"
    path.write_text(
        "\n# old\n+oldest\n" + entry * (2 * MAX_HISTORY_BYTES // len(entry)) + "\n# new\n+newest\n"
    )
    kept, warnings = history(path)
    strings = list(kept.load_history_strings())
    assert strings[0] == "newest" and "oldest" not in strings and warnings == []
    assert all(s == "newest" or s == "q" * 98 for s in strings)


@pytest.mark.timeout(10)
def test_a_fifo_is_never_opened_and_said_once(tmp_path: Path) -> None:
    path = tmp_path / "chat_history"
    os.mkfifo(path)
    kept, warnings = history(path)
    assert list(kept.load_history_strings()) == []
    kept.store_string("a question")  # never written through (no reader: it would block)
    assert warnings == [f"the chat history {path} is a FIFO, not a regular file: it is not kept"]


def test_a_directory_or_an_unwritable_file_is_one_warning(tmp_path: Path) -> None:
    folder = tmp_path / "chat_history"
    folder.mkdir()
    kept, warnings = history(folder)
    assert list(kept.load_history_strings()) == []
    kept.store_string("q")
    assert len(warnings) == 1 and "cannot be used: Is a directory" in warnings[0]
    if os.geteuid() == 0:
        return  # root writes anywhere
    path = tmp_path / "locked"
    path.write_text("\n# t\n+kept\n")
    path.chmod(0o400)
    kept, warnings = history(path)
    assert list(kept.load_history_strings()) == ["kept"]
    kept.store_string("q")
    kept.store_string("r")
    assert warnings == [
        f"the chat history {path} cannot be used: Permission denied: it is not kept"
    ]


def test_a_planted_link_is_not_read_and_is_replaced_by_the_first_entry(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("\n# t\n+the victim's\n")
    path = tmp_path / "chat_history"
    path.symlink_to(victim)
    kept, warnings = history(path)
    assert list(kept.load_history_strings()) == []
    kept.store_string("typed")
    assert victim.read_text() == "\n# t\n+the victim's\n" and not path.is_symlink()
    assert list(history(path)[0].load_history_strings()) == ["typed"] and warnings == []
    assert oct(path.stat().st_mode & 0o777) == "0o600"
