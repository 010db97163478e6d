"""Output that is not lost and says what it means (issue 18, classes 13-15), through the real
CLI in-process: whatever happens to stdout and stderr (a full disk, an encoding that cannot
hold the text, a reader that went away) the trace is written and every command ends cleanly;
``ask -v`` shows its whole trajectory at any width (``eval show``, ``compare`` and ``replay``:
``test_share_cli``); a command printed for pasting is the shell's exact quoting of what it
names. (A full disk on a real process's stdout: ``test_cli_process``.)
"""

from __future__ import annotations

import errno
import io
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from eval_fakes import HOTPOT, PerQuestion
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, scripted
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
    only_trace,
    servers_env,
)

from react_cli.display.terminal import MAX_WIDTH

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


@cli_fuzz(8)
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


def test_ask_shows_its_trajectory_at_any_width(cli: Runner, wiki: FakeMediaWiki) -> None:
    """``COLUMNS=0`` made ``ask -v`` show no trajectory at all (issue 18, class 14)."""
    with FakeOpenAI(PerQuestion({QUESTION: list(GOOD_RUN)})) as llm:
        env = servers_env(llm, wiki)
        reference = cli(["ask", "-v", "--no-trace", QUESTION], COLUMNS=str(MAX_WIDTH), **env)
        assert reference.code == 0, reference.stderr
        assert "Observation 2: First for Women" in reference.stderr
        for width in ODD_WIDTHS:
            shown = cli(["ask", "-v", "--no-trace", QUESTION], COLUMNS=width, **env)
            assert (shown.code, shown.stdout) == (0, "Arthur's Magazine\n"), shown.stderr
            assert glyphs(trajectory(shown.stderr)) == glyphs(trajectory(reference.stderr))


class _Failing(io.RawIOBase):
    """A file every write to fails with ``error``: a full disk, a reader that went away."""

    def __init__(self, error: OSError) -> None:
        self.error = error

    def writable(self) -> bool:
        return True

    def write(self, data: object) -> int:
        raise self.error


def full_disk() -> io.TextIOWrapper:
    return io.TextIOWrapper(_Failing(OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))))


def closed_pipe() -> io.TextIOWrapper:
    return io.TextIOWrapper(_Failing(BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))))


def ascii_only() -> io.TextIOWrapper:
    """A terminal whose encoding holds ASCII alone (``LANG=C`` on an old system)."""
    return io.TextIOWrapper(io.BytesIO(), encoding="ascii", errors="strict", line_buffering=True)


def written(stream: io.TextIOWrapper) -> str:
    stream.flush()
    buffer = stream.buffer
    assert isinstance(buffer, io.BytesIO)
    return buffer.getvalue().decode("ascii")


ANSWER = "Łódź 张伟 😀"
STREAMS: dict[str, Callable[[], io.TextIOWrapper]] = {
    "full": full_disk,
    "closed": closed_pipe,
    "ascii": ascii_only,
}


@pytest.mark.parametrize("verbose", [False, True])
@pytest.mark.parametrize("kind", STREAMS)
def test_ask_writes_its_trace_whatever_happens_to_its_output(
    cli: Runner, wiki: FakeMediaWiki, monkeypatch: pytest.MonkeyPatch, kind: str, verbose: bool
) -> None:
    """``ask`` printed before it wrote the trace: a full disk or a closed pipe on stdout lost
    the trace, and an encoding without the answer's characters was an internal error (with
    ``-v`` mid-run, stderr's). Now the trace is always written; a full disk is one ``Error:``
    line and exit 1, a closed pipe (``ask -v … 2>&1 | head -c 1``: stderr too) ends quietly
    with exit 1, and characters the encoding lacks are replaced (exit 0)."""
    stdout = STREAMS[kind]()
    stderr = stdout if kind == "closed" else ascii_only() if kind == "ascii" else None
    monkeypatch.setattr(sys, "stdout", stdout)
    if stderr is not None:
        monkeypatch.setattr(sys, "stderr", stderr)
    args = ["ask", f"{QUESTION} ({ANSWER})", "--json" if not verbose else "-v"]
    with FakeOpenAI(scripted(GOOD_RUN[0], f" Found.\nAction 2: Finish[{ANSWER}]")) as llm:
        result = cli(args, **servers_env(llm, wiki))
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert only_trace(cli.home)["answer"] == ANSWER
    if kind == "full":
        assert result.code == 1
        assert result.stderr.splitlines()[-1] == "Error: cannot write the output: " + (
            "No space left on device"
        )
    elif kind == "closed":
        assert (result.code, result.stderr) == (1, "")
    else:
        assert result.code == 0
        shown = written(stdout)
        if verbose:
            assert shown == "??d? ?? ?\n"
            assert "Observation 1: Arthur's Magazine (1844" in written(stderr)
        else:
            assert json.loads(shown)["answer"] == ANSWER  # escaped, not replaced


def test_ask_started_without_stdout_and_stderr_still_writes_its_trace(
    cli: Runner, wiki: FakeMediaWiki, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``react-cli ask -v … >&- 2>&-``: Python starts with ``sys.stdout`` and ``sys.stderr``
    None, and every write would be an internal error."""
    monkeypatch.setattr(sys, "stdout", None)
    monkeypatch.setattr(sys, "stderr", None)
    with FakeOpenAI(scripted(*GOOD_RUN)) as llm:
        result = cli(["ask", "-v", QUESTION], **servers_env(llm, wiki))
    assert result.code == 0
    assert only_trace(cli.home)["answer"] == "Arthur's Magazine"


@pytest.mark.parametrize("kind", STREAMS)
def test_every_command_that_prints_ends_cleanly_whatever_its_stdout(
    cli: Runner, wiki: FakeMediaWiki, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """``wiki search`` crashed on a stdout that cannot hold its text; every command that
    prints ends as ``ask`` does: one ``Error:`` line for a full disk, quietly for a closed
    pipe, with replacement characters for an encoding that lacks some."""
    page = wiki.pages["Arthur's Magazine"]
    wiki.pages["Arthur's Magazine"] = f"{page} {ANSWER}"
    trace = cli.record(wiki, GOOD_RUN[0], f" Found.\nAction 2: Finish[{ANSWER}]")
    examples = Path(__file__).resolve().parents[2] / "examples" / "traces"
    commands = [
        ["wiki", "search", "Arthur's Magazine"],
        ["wiki", "lookup", "Arthur's Magazine", "1844"],
        ["replay", str(trace)],
        ["replay", str(trace), "--json"],
        ["replay", str(trace), "--format", "markdown"],
        ["replay", str(examples / "kiss-and-tell-cot-sc-react.json")],
        ["traces"],
        ["traces", "--json"],
        ["prompts"],
        ["prompts", "show", "hotpotqa"],
        ["config"],
        ["config", "path"],
    ]
    try:
        for args in commands:
            stdout = STREAMS[kind]()
            monkeypatch.setattr(sys, "stdout", stdout)
            result = cli(args, REACT_CLI_WIKI=wiki.url, REACT_CLI_CONTACT=ANSWER)
            assert "Traceback" not in result.stderr, args
            if kind == "full":
                assert result.code == 1, (args, result.stderr)
                assert one_error_line(result.stderr).startswith("Error: cannot write the output")
            elif kind == "closed":
                assert (result.code, result.stderr) == (1, ""), args
            else:
                assert (result.code, result.stderr) == (0, ""), args
                assert written(stdout), args
    finally:
        wiki.pages["Arthur's Magazine"] = page
