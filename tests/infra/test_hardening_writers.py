"""Files react-cli writes, against what anyone may put at their names (issue 18):

- an eval never writes through a symbolic link planted in its folder: a link at a trace's
  name, or at ``traces/``, is replaced (``--trace`` and ``-o`` still write through a link, as
  documented: ``test_trace_paths.py``);
- a replaced file keeps its mode (``--trace``, ``-o``, the eval folder's files).
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from eval_fakes import HOTPOT, PerQuestion, finish
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, Reply
from inproc import Runner, servers_env

ANSWER = finish("yes")
TRACE = Path(__file__).resolve().parents[1] / "fixtures" / "traces" / "answered.json"


@pytest.fixture(scope="module")
def llm() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(PerQuestion({}, default=[ANSWER])) as server:
        yield server


# --- 7. writers that follow planted links -------------------------------------------------------


def failed_then_resumed(cli: Runner, tmp_path: Path, plant: Callable[[Path], None]) -> Path:
    """An eval of two questions whose first failed; ``plant(out)`` runs before its resume,
    which runs (and traces) the first question again."""
    out = tmp_path / "run"
    question = json.loads(HOTPOT.read_text(encoding="utf-8"))[0]["question"]
    cli.config(retries=0)
    failing = PerQuestion({question: [Reply(status=503)]}, default=[ANSWER])
    with FakeOpenAI(failing) as llm:
        args = ["eval", str(HOTPOT), "--limit", "2", "--out", str(out)]
        first = cli(args, **servers_env(llm, llm))
    assert first.code == 1, first.stderr
    plant(out)
    with FakeOpenAI(PerQuestion({}, default=[ANSWER])) as llm:
        again = cli(["eval", "--resume", str(out)], **servers_env(llm, llm))
    assert again.code == 0, again.stderr
    return out


def test_a_link_planted_at_a_trace_s_name_is_replaced_not_written_through(
    cli: Runner, tmp_path: Path
) -> None:
    outside = tmp_path / "precious.txt"
    outside.write_text("keep me\n", encoding="utf-8")

    def plant(out: Path) -> None:
        (trace,) = [p for p in (out / "traces").iterdir() if p.name.startswith("00000-")]
        trace.unlink()
        trace.symlink_to(outside)

    out = failed_then_resumed(cli, tmp_path, plant)
    assert outside.read_text(encoding="utf-8") == "keep me\n"
    (trace,) = [p for p in (out / "traces").iterdir() if p.name.startswith("00000-")]
    assert not trace.is_symlink() and json.loads(trace.read_text("utf-8"))["answer"] == "yes"


def test_a_link_planted_at_the_traces_folder_is_replaced(cli: Runner, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"

    def plant(out: Path) -> None:
        (out / "traces").rename(elsewhere)
        (out / "traces").symlink_to(elsewhere)

    out = failed_then_resumed(cli, tmp_path, plant)
    assert not (out / "traces").is_symlink()
    assert [p.name[:6] for p in (out / "traces").iterdir()] == ["00000-"]
    assert len(list(elsewhere.iterdir())) == 2  # the first run's traces, untouched


# --- 8. a replaced file keeps its mode ----------------------------------------------------------


def test_replaced_files_keep_their_mode(
    cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    trace = tmp_path / "trace.json"
    trace.write_text("{}", encoding="utf-8")
    trace.chmod(0o600)
    asked = cli.ask(llm, wiki, "--trace", str(trace), question="Who is it?")
    assert asked.code == 0, asked.stderr
    assert stat.S_IMODE(trace.stat().st_mode) == 0o600 and "steps" in trace.read_text("utf-8")
    page = tmp_path / "page.html"
    page.write_text("old", encoding="utf-8")
    page.chmod(0o640)
    exported = cli(["replay", str(TRACE), "--format", "html", "-o", str(page)])
    assert exported.code == 0, exported.stderr
    assert stat.S_IMODE(page.stat().st_mode) == 0o640 and page.read_text("utf-8") != "old"
    new = tmp_path / "new.html"
    assert cli(["replay", str(TRACE), "--format", "html", "-o", str(new)]).code == 0
    assert stat.S_IMODE(new.stat().st_mode) == 0o666 & ~_umask()


def test_an_eval_folder_s_files_keep_their_mode(cli: Runner, tmp_path: Path) -> None:
    def plant(out: Path) -> None:
        for path in [out / "summary.json", out / "results.jsonl", *(out / "traces").iterdir()]:
            path.chmod(0o600)

    out = failed_then_resumed(cli, tmp_path, plant)
    files = [out / "summary.json", out / "results.jsonl", *(out / "traces").iterdir()]
    assert {stat.S_IMODE(path.stat().st_mode) for path in files} == {0o600}


def test_an_archive_replaced_with_force_keeps_its_mode(cli: Runner, tmp_path: Path) -> None:
    corpus, out = tmp_path / "corpus.jsonl", tmp_path / "out.zim"
    corpus.write_text(json.dumps({"title": "A", "text": "Some text."}) + "\n", encoding="utf-8")
    out.write_bytes(b"an older archive")
    out.chmod(0o600)
    built = cli(["wiki", "build-zim", str(corpus), str(out), "--force"])
    assert built.code == 0, built.stderr
    assert stat.S_IMODE(out.stat().st_mode) == 0o600 and out.read_bytes()[:4] == b"ZIM\x04"


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
