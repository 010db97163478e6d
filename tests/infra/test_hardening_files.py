"""Files react-cli reads, against what anyone may put at their names (issue 18):

- JSON Lines are split at ``\\n`` (and ``\\r\\n``) alone: U+2028, U+2029 and U+0085, which JSON
  allows raw inside strings, are text (datasets, FEVER files, build-zim corpora);
- every file read must be a regular file, checked without blocking: a FIFO or a device at any
  name read (a trace, a dataset, a prompt, a ZIM, a corpus; or the paths a summary records)
  is one ``Error:`` line or a note, never a hang (a FIFO among an eval's traces, under
  ``eval report`` and ``compare``: ``test_hardening_evalfolder.py``).

FIFOs are only made here, never opened; each test that would hang on one has a timeout.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from eval_fakes import FEVER, HOTPOT, PerQuestion, finish
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI
from hostile import text
from hypothesis import given, settings
from hypothesis import strategies as st
from inproc import Runner, one_error_line, servers_env

from react_cli.infra.untrusted import json_records

ANSWER = finish("yes")
TRACE = Path(__file__).resolve().parents[1] / "fixtures" / "traces" / "answered.json"
SEPARATORS = ["\u2028", "\u2029", "\x85"]  # line breaks to str.splitlines, text to JSON
HANG = pytest.mark.timeout(20)  # a FIFO opened for reading would wait forever for a writer


@pytest.fixture(scope="module")
def llm() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(PerQuestion({}, default=[ANSWER])) as server:
        yield server


def one_line(text: str) -> str:
    """A dataset's question as eval records it: white space (line breaks too) collapsed."""
    return " ".join(text.split())


def rows(out: Path) -> list[dict[str, Any]]:
    lines = (out / "results.jsonl").read_text(encoding="utf-8").split("\n")
    return sorted((json.loads(line) for line in lines if line), key=lambda row: row["index"])


# --- 3. JSON Lines split where JSON allows the character ----------------------------------------

with_breaks = st.lists(st.one_of(text, st.sampled_from(SEPARATORS)), max_size=8).map("".join)


@settings(max_examples=30, deadline=None)
@given(texts=st.lists(with_breaks, min_size=1, max_size=4), crlf=st.booleans())
def test_json_lines_are_split_at_newlines_alone(texts: list[str], crlf: bool) -> None:
    records = [{"question": t, "n": n} for n, t in enumerate(texts)]
    end = "\r\n" if crlf else "\n"
    data = "".join(json.dumps(r, ensure_ascii=False) + end for r in records)
    read = list(json_records(data, "f"))
    assert read == [(f"f line {n}", r) for n, r in enumerate(records, 1)]


def test_a_jsonl_dataset_holding_unicode_line_breaks_runs_every_question(
    cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    dataset, out = tmp_path / "data.jsonl", tmp_path / "run"
    questions = [f"Who{separator}is it, {n}?" for n, separator in enumerate(SEPARATORS)]
    records = [{"question": q, "answer": "yes"} for q in questions]
    dataset.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\r\n" for r in records), encoding="utf-8"
    )
    result = cli(["eval", str(dataset), "--out", str(out)], **servers_env(llm, wiki, "m"))
    assert result.code == 0, result.stderr
    assert [row["question"] for row in rows(out)] == [one_line(q) for q in questions]
    assert [row["em"] for row in rows(out)] == [1.0] * 3


def test_fever_files_and_corpora_holding_unicode_line_breaks(
    cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    claims = [json.loads(line) for line in FEVER.read_text(encoding="utf-8").splitlines()[:2]]
    for claim, separator in zip(claims, SEPARATORS, strict=False):
        claim["claim"] = claim["claim"].replace(" ", separator, 1)
    fever = tmp_path / "fever.jsonl"
    fever.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in claims), "utf-8")
    out = tmp_path / "fever"
    result = cli(["eval", str(fever), "--out", str(out)], **servers_env(llm, wiki, "m"))
    assert result.code == 0, result.stderr
    assert [row["question"] for row in rows(out)] == [one_line(c["claim"]) for c in claims]
    corpus = tmp_path / "corpus.jsonl"
    articles = [
        {"title": f"Page{separator}{n}", "text": f"First line{separator}second line."}
        for n, separator in enumerate(SEPARATORS)
    ]
    corpus.write_text("".join(json.dumps(a, ensure_ascii=False) + "\n" for a in articles), "utf-8")
    built = cli(["wiki", "build-zim", str(corpus), str(tmp_path / "out.zim")])
    assert built.code == 0, built.stderr
    assert ": 3 articles;" in built.stdout


# --- 6. special files on the read side ----------------------------------------------------------


def fifo_at(path: Path) -> Path:
    path.unlink(missing_ok=True)
    os.mkfifo(path)
    return path


@pytest.fixture
def eval_folder(cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki, tmp_path: Path) -> Path:
    out = tmp_path / "run"
    result = cli(["eval", str(HOTPOT), "--limit", "2", "--out", str(out)], **servers_env(llm, wiki))
    assert result.code == 0, result.stderr
    return out


@HANG
@pytest.mark.parametrize("recorded", ["dataset", "prompt"])
def test_a_fifo_at_a_path_the_summary_records_is_refused_on_resume(
    cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki, eval_folder: Path, recorded: str
) -> None:
    fifo = fifo_at(eval_folder.parent / f"{recorded}.fifo")
    summary_path = eval_folder / "summary.json"
    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    if recorded == "dataset":
        summary["dataset"]["path"] = str(fifo)
    else:
        summary["config"]["prompt"]["name"] = str(fifo)
    summary_path.write_text(json.dumps(summary), encoding="utf-8")
    result = cli(["eval", "--resume", str(eval_folder)], **servers_env(llm, wiki))
    assert result.code == 2
    assert f"{fifo}" in one_error_line(result.stderr) and "is a FIFO" in result.stderr


def reads(kind: str, path: Path, llm: FakeOpenAI) -> list[str]:
    """A command that reads ``path`` as a file of ``kind``."""
    return {
        "trace": ["replay", str(path)],
        "fork": ["ask", "--from-trace", str(path), "--from-step", "1"],
        "dataset": ["eval", str(path), "--base-url", llm.url, "-m", "m"],
        "prompt": ["ask", "q?", "--prompt", str(path), "--base-url", llm.url, "-m", "m"],
        "zim": ["ask", "q?", "--wiki", f"zim:{path}", "--base-url", llm.url, "-m", "m"],
        "corpus": ["wiki", "build-zim", str(path), str(path.with_suffix(".zim"))],
    }[kind]


@HANG
@pytest.mark.parametrize("kind", ["trace", "fork", "dataset", "prompt", "zim", "corpus"])
@pytest.mark.parametrize("special", ["fifo", "device"])
def test_every_file_read_must_be_a_regular_file(
    cli: Runner, llm: FakeOpenAI, tmp_path: Path, kind: str, special: str
) -> None:
    if special == "fifo":
        path, what = fifo_at(tmp_path / f"{kind}.file"), "is a FIFO"
    else:
        path, what = tmp_path / f"{kind}.file", "is a character device"
        path.symlink_to("/dev/zero")  # endless: read, it would fill the memory up to a limit
    made = len(llm.requests)
    result = cli(reads(kind, path, llm))
    assert result.code == (1 if kind in ("trace", "fork") else 2), result  # a TraceError: 1
    line = one_error_line(result.stderr)
    assert str(path) in line and what in line and "not a regular file" in line
    assert len(llm.requests) == made


@HANG
def test_a_fifo_among_the_traces_is_not_listed(cli: Runner, wiki: FakeMediaWiki) -> None:
    cli.record(wiki, " Easy.\nAction 1: Finish[Paris]")
    fifo_at(cli.home / "traces" / "zzzz-latest.json")
    listed = cli(["traces"])
    assert listed.code == 0, listed.stderr
    assert "zzzz" not in listed.stdout and len(listed.stdout.strip().splitlines()) >= 2
    assert cli(["replay"]).code == 0  # the latest trace that is a file
