"""``--trace PATH`` never replaces what is not a regular file: a FIFO, a device, a socket or a
directory is refused before the run (exit 2, nothing sent to the model, the path untouched); a
symbolic link to a regular file (or to a new one) is written through, and stays a link."""

from __future__ import annotations

import json
import os
import socket
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI, scripted
from inproc import Runner, one_error_line

ANSWER = " Easy.\nAction 1: Finish[Paris]"


@pytest.fixture
def cli(home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Runner:
    return Runner(home, monkeypatch, capsys)


@pytest.fixture
def llm() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(scripted(ANSWER)) as server:
        yield server


def ask(cli: Runner, llm: FakeOpenAI, trace: Path) -> tuple[int, str, str]:
    result = cli(
        ["ask", "--trace", str(trace), "What is the capital of France?"],
        OPENAI_BASE_URL=llm.url,
        REACT_CLI_MODEL="m",
        REACT_CLI_CONTACT="tests@example.org",
    )
    return result.code, result.stdout, result.stderr


def fifo(path: Path) -> None:
    os.mkfifo(path)


def unix_socket(path: Path) -> None:
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.close()  # the socket file stays


def directory(path: Path) -> None:
    path.mkdir()


def link_to(target: str) -> Callable[[Path], None]:
    return lambda path: path.symlink_to(target)


REFUSED: dict[str, tuple[Callable[[Path], None], str]] = {
    "fifo": (fifo, "is a FIFO"),
    "socket": (unix_socket, "is a socket"),
    "directory": (directory, "is a directory"),
    "char-device-link": (link_to("/dev/null"), "links to a character device"),
    "dev-full-link": (link_to("/dev/full"), "links to a character device"),
    "directory-link": (link_to("/"), "links to a directory"),
    "link-loop": (lambda path: path.symlink_to(path.name), "is a symbolic link"),
}


@pytest.mark.parametrize("kind", sorted(REFUSED))
def test_what_is_not_a_regular_file_is_refused_untouched(
    cli: Runner, llm: FakeOpenAI, tmp_path: Path, kind: str
) -> None:
    make, problem = REFUSED[kind]
    path = tmp_path / "trace.json"
    make(path)
    before = os.lstat(path)
    code, out, err = ask(cli, llm, path)
    assert (code, out) == (2, "")
    line = one_error_line(err)
    assert line.startswith(f"Error: cannot write the trace to {path}: {problem}, not a regular")
    assert llm.requests == []
    after = os.lstat(path)
    assert after.st_ino == before.st_ino
    assert stat.S_IFMT(after.st_mode) == stat.S_IFMT(before.st_mode)


def test_the_device_itself_is_refused(cli: Runner, llm: FakeOpenAI) -> None:
    code, _, err = ask(cli, llm, Path("/dev/null"))
    assert code == 2 and "/dev/null: is a character device" in one_error_line(err)
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


@pytest.mark.parametrize("exists", [True, False])
def test_a_link_to_a_regular_file_is_written_through(
    cli: Runner, llm: FakeOpenAI, tmp_path: Path, exists: bool
) -> None:
    target = tmp_path / "real" / "trace.json"
    target.parent.mkdir()
    if exists:
        target.write_text("old", encoding="utf-8")
    link = tmp_path / "latest.json"
    link.symlink_to(target)
    code, out, err = ask(cli, llm, link)
    assert (code, out, err) == (0, "Paris\n", "")
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert json.loads(target.read_text(encoding="utf-8"))["answer"] == "Paris"


def test_a_regular_file_is_replaced_atomically(
    cli: Runner, llm: FakeOpenAI, tmp_path: Path
) -> None:
    path = tmp_path / "out" / "trace.json"
    path.parent.mkdir()
    path.write_text("old", encoding="utf-8")
    inode = path.stat().st_ino
    assert ask(cli, llm, path)[0] == 0
    assert path.stat().st_ino != inode  # a new file renamed over the old one
    assert json.loads(path.read_text(encoding="utf-8"))["answer"] == "Paris"
    assert [p.name for p in path.parent.iterdir()] == ["trace.json"]  # no temporary left
