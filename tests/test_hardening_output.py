"""Output that is not lost and says what it means (issue 18, classes 13-15), through the real
CLI in-process: ``ask -v`` shows its whole trajectory at any width (``eval show``, ``compare``
and ``replay``: ``test_share_cli``), and a command printed for pasting is the shell's exact
quoting of what it names.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from eval_fakes import HOTPOT, PerQuestion
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI
from hostile import cli_fuzz
from hypothesis import example, given
from hypothesis import strategies as st
from inproc import (
    GOOD_RUN,
    ODD_WIDTHS,
    QUESTION,
    Runner,
    glyphs,
    one_error_line,
    servers_env,
)

from react_cli.terminal import MAX_WIDTH

# Pieces of folder names that quoting gets wrong: white space of every kind (runs of it too),
# quotes, shell syntax, escape sequences, bytes that are not UTF-8, letters of other scripts.
_NAME_PIECES = st.sampled_from(
    [
        *(b"a", b"  ", b"\t", b"\n", b"\r", b"'", b'"', b"$(x)", b"`id`", b"!", b"\\", b"*"),
        *(b"\xff", b"\xc3", b"\x1b[2J", b"\x1b]52;c;eA==\x07", b"\x7f", b"\xc2\x9b", b"~"),
        *("é".encode(), "\u00a0".encode(), "\u202e".encode(), "张".encode(), b"-x", b"#", b";"),
    ]
)
folder_name = st.lists(_NAME_PIECES, min_size=1, max_size=6).map(b"".join)


def shell_words(command: str) -> list[bytes]:
    """What bash makes of ``command`` pasted at its prompt: its words, as bytes."""
    script = f"set -- {command}; printf '%s\\0' \"$@\""
    done = subprocess.run(["bash", "-c", script], capture_output=True, check=True, timeout=10)
    return done.stdout.split(b"\0")[:-1]


@cli_fuzz(15)
@given(name=folder_name)
@example(name=b"two  spaces")
@example(name=b"line\nbreak\ttab")
def test_the_resume_hint_names_the_folder_exactly(cli: Runner, tmp_path: Path, name: bytes) -> None:
    """The ``Error:`` line's "continue it with: ..." is pasted into bash as it is and names the
    folder byte for byte, whatever the name holds (it collapsed double spaces, and printed
    control characters raw or not at all)."""
    folder = tmp_path / os.fsdecode(name)
    folder.mkdir(exist_ok=True)
    (folder / "results.jsonl").write_text("", encoding="utf-8")
    result = cli(
        ["eval", str(HOTPOT), "--out", str(folder)],
        REACT_CLI_MODEL="m",
        OPENAI_BASE_URL="http://127.0.0.1:9/v1",
    )
    line = one_error_line(result.stderr)
    assert result.code == 2, line
    command = line.partition("continue it with: ")[2]
    assert command.startswith("react-cli eval --resume ")
    words = shell_words(command)
    assert words == [b"react-cli", b"eval", b"--resume", os.fsencode(folder)]


def test_the_build_zim_hint_names_the_archive_exactly(cli: Runner, tmp_path: Path) -> None:
    """``use --wiki zim:OUT`` is one word for the shell, naming the archive just built."""
    pytest.importorskip("libzim")
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"title": "A", "text": "A is a letter."}\n', encoding="utf-8")
    out = tmp_path / "my  archive's \x1b[2J \t é.zim"
    built = cli(["wiki", "build-zim", str(corpus), str(out)])
    assert built.code == 0, built.stderr
    assert "\x1b" not in built.stdout
    command = built.stdout.rstrip("\n").partition("; use ")[2]
    assert shell_words(command) == [b"--wiki", b"zim:" + os.fsencode(out)]


def trajectory(stderr: str) -> str:
    """``ask -v``'s trajectory without the lines of timings, which differ from run to run."""
    lines = stderr.splitlines()
    return "\n".join(line for line in lines if not line.startswith(("  (", "stop: ")))


@pytest.mark.parametrize("width", ODD_WIDTHS)
def test_ask_shows_its_trajectory_at_any_width(
    cli: Runner, wiki: FakeMediaWiki, width: str
) -> None:
    """``COLUMNS=0`` made ``ask -v`` show no trajectory at all (issue 18, class 14)."""
    with FakeOpenAI(PerQuestion({QUESTION: list(GOOD_RUN)})) as llm:
        reference = cli(["ask", "-v", QUESTION], COLUMNS=str(MAX_WIDTH), **servers_env(llm, wiki))
        shown = cli(["ask", "-v", QUESTION], COLUMNS=width, **servers_env(llm, wiki))
    assert (reference.code, shown.code) == (0, 0), shown.stderr
    assert shown.stdout == "Arthur's Magazine\n"
    assert "Observation 2: First for Women" in shown.stderr
    assert glyphs(trajectory(shown.stderr)) == glyphs(trajectory(reference.stderr))
