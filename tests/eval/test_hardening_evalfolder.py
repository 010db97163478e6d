"""Eval folders react-cli wrote itself, or that anyone edited, through ``eval show``,
``report``, ``compare`` and ``--resume`` (issue 18):

- what the writer writes the readers take: any row reads back as written, and a resumed
  eval's rows, which replace earlier ones, are valid rows, not "skipped: not valid rows";
- a FIFO at a trace's name is shown as such by ``eval report`` and ``compare``, never read;
- a field of the wrong type anywhere in ``summary.json`` or a row (a method's name that is a
  list, an object where a count goes) is one ``Error:`` line naming the file and exit 2, never
  ``internal error: TypeError``.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from eval_fakes import HOTPOT
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI
from hostile import cli_fuzz, inject, json_literal, json_value, paths, text
from hypothesis import given, settings
from hypothesis import strategies as st
from inproc import CliResult, Runner, one_error_line, servers_env
from method_fakes import SCRIPTS, MethodsEndpoint

from react_cli.core.records import MAX_RECORDED_TOKENS, StopReason, Usage
from react_cli.eval.rows import FeverLabel, MethodResult, Row
from react_cli.infra.untrusted import dump_json, parse_json

BOUND_S = 15.0  # a hang detector: each command takes well under a second


@pytest.fixture(scope="module")
def llm() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(MethodsEndpoint(SCRIPTS)) as server:
        yield server


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Where the module's eval folders go (each made once, by the first test asking)."""
    return {"root": tmp_path_factory.mktemp("evals")}


def resumed_folder(
    cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki, made: dict[str, Path]
) -> Path:
    """A ReAct eval of two questions, then ``--resume DIR --methods cot`` (the documented way
    to add a method): its rows replace the first two. Made once per module."""
    if "resumed" not in made:
        out = made["root"] / "resumed"
        env = servers_env(llm, wiki)
        first = cli(["eval", str(HOTPOT), "--limit", "2", "--out", str(out)], **env)
        assert first.code == 0, first.stderr
        again = cli(["eval", "--resume", str(out), "--methods", "cot"], **env)
        assert again.code == 0, again.stderr
        made["resumed"] = out
    return made["resumed"]


def copy_of(folder: Path, target: Path) -> Path:
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(folder, target, symlinks=True)
    return target


def test_rows_a_resume_replaced_are_not_called_invalid(
    cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki, made: dict[str, Path], tmp_path: Path
) -> None:
    out = resumed_folder(cli, llm, wiki, made)
    lines = (out / "results.jsonl").read_text(encoding="utf-8").split("\n")[:-1]
    assert len(lines) == 4  # two ReAct rows, replaced by two rows holding ReAct and CoT
    shown = cli(["eval", "show", str(out)])
    assert shown.code == 0, shown.stderr
    assert "skipped" not in shown.stdout and "CoT" in shown.stdout
    page = tmp_path / "report.html"
    report = cli(["eval", "report", str(out), "-o", str(page)])
    assert report.code == 0, report.stderr
    html = page.read_text(encoding="utf-8")
    assert "skipped" not in html and "EM (ReAct)" in html  # the first method's figures
    with (out / "results.jsonl").open("a", encoding="utf-8") as rows:
        rows.write('{"index": 0, "question": "cut sh\n')  # one line that is no row: counted
    copy = copy_of(out, tmp_path / "torn")
    (out / "results.jsonl").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    assert "1 line(s) of results.jsonl skipped" in cli(["eval", "show", str(copy)]).stdout


results = st.builds(
    MethodResult,
    answer=st.none() | text,
    em=st.sampled_from([0.0, 1.0]),
    f1=st.floats(0, 1),
    stop_reason=st.sampled_from(StopReason),
    error=st.none() | text,
    steps=st.integers(0, 10_000),
    tokens=st.integers(0, MAX_RECORDED_TOKENS),
    usage=st.none() | st.builds(Usage, st.integers(0, 10**12), st.integers(0, 10**12)),
    cost=st.none() | st.floats(0, 1e18),
    latency_s=st.floats(0, 30 * 24 * 3600),
    trace=st.none() | text,
    label=st.none() | st.builds(FeverLabel, st.none() | text),
    calls=st.none() | st.integers(0, 10_000),
    branch=st.none() | text,
)
question_rows = st.builds(
    Row,
    index=st.integers(0, 10**9),
    id=st.none() | text | st.integers(-(10**98), 10**99),  # at most 100 characters
    question=text,
    golds=st.lists(text, min_size=1, max_size=3).map(tuple),
    result=results,
    method=st.none() | st.sampled_from(["react", "cot"]),
    methods=st.none()
    | st.dictionaries(st.sampled_from(["react", "cot", "x"]), results, min_size=1),
    calls_made=st.none() | st.integers(0, 10**6),
).map(lambda row: row if row.methods else replace(row, calls_made=None))  # as the writer does


@settings(max_examples=15, deadline=None)
@given(row=question_rows)
def test_any_row_the_writer_writes_the_reader_reads_back(row: Row) -> None:
    written = dump_json(row.to_json())
    assert "\n" not in written  # one line of results.jsonl
    assert Row.from_json(parse_json(written)) == row


@pytest.mark.timeout(20)  # a FIFO opened for reading would wait forever for a writer
def test_a_fifo_at_a_trace_s_name_is_shown_as_such_by_report_and_compare(
    cli: Runner, llm: FakeOpenAI, wiki: FakeMediaWiki, made: dict[str, Path], tmp_path: Path
) -> None:
    folder = copy_of(resumed_folder(cli, llm, wiki, made), tmp_path / "fifo")
    first = (folder / "results.jsonl").read_text(encoding="utf-8").split("\n")[0]
    trace = folder / json.loads(first)["trace"]  # the trace the report and compare read
    trace.unlink()
    os.mkfifo(trace)  # made, never opened
    page = tmp_path / "report.html"
    report = cli(["eval", "report", str(folder), "-o", str(page)])
    assert report.code == 0, report.stderr
    assert "is a FIFO, not a regular file" in page.read_text(encoding="utf-8")
    compared = cli(["eval", "compare", str(folder), str(folder), "--json"])
    assert compared.code == 0, compared.stderr
    assert stat.S_ISFIFO(trace.lstat().st_mode)


# --- wrong types anywhere -----------------------------------------------------------------------

COMMANDS = ("show", "compare", "resume")
FUZZ = cli_fuzz(20)


def run(cli: Runner, command: str, folder: Path, env: dict[str, str]) -> CliResult:
    args = {
        "show": ["eval", "show", str(folder), "--wrong"],
        "compare": ["eval", "compare", str(folder), str(folder), "--json"],
        "resume": ["eval", "--resume", str(folder)],
        "report": ["eval", "report", str(folder), "-o", str(folder / "report.html")],
    }[command]
    return cli(args, **env)


def check(result: CliResult, cli: Runner, damaged: str | None = None) -> None:
    """Shown, or refused with one ``Error:`` line and exit 2 (naming ``damaged``, if given)."""
    assert cli.elapsed_s < BOUND_S
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr, result
    if result.code == 0:
        return
    assert result.code == 2, result
    assert (damaged or "") in one_error_line(result.stderr), result.stderr


def damage(folder: Path, file: str, where: tuple[str | int, ...], literal: str) -> None:
    """Replace the value at ``where`` of ``file`` (``summary.json`` or the first row) with the
    JSON text ``literal``."""
    path = folder / file
    if file == "summary.json":
        document = json.loads(path.read_text(encoding="utf-8"))
        path.write_text(inject(document, where, literal), encoding="utf-8")
        return
    lines = path.read_text(encoding="utf-8").split("\n")[:-1]
    row = json.loads(lines[-1])
    lines[-1] = " ".join(inject(row, where, literal).split("\n"))  # still one line
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@st.composite
def damages(draw: st.DrawFn, folder: Path) -> tuple[str, tuple[str | int, ...], str]:
    """A file of the folder, a path to a value in it, and the JSON text put there: a value of
    another shape (most often) or a hostile literal."""
    file = draw(st.sampled_from(["summary.json", "results.jsonl"]))
    text = (folder / file).read_text(encoding="utf-8")
    document = json.loads(text if file == "summary.json" else text.split("\n")[-2])
    where = draw(st.sampled_from(paths(document)[1:]))
    literal = draw(
        st.one_of(
            json_value.map(json.dumps),
            json_value.map(json.dumps),
            st.sampled_from(['["react"]', '{"name": "cot"}', "[[1], {}]", '[{"method": [1]}]']),
            json_literal,
        )
    )
    return file, where, literal


@FUZZ
@given(data=st.data(), command=st.sampled_from(COMMANDS))
def test_any_wrong_type_in_an_eval_folder_is_one_error_line(
    cli: Runner,
    llm: FakeOpenAI,
    wiki: FakeMediaWiki,
    made: dict[str, Path],
    tmp_path: Path,
    data: st.DataObject,
    command: str,
) -> None:
    source = resumed_folder(cli, llm, wiki, made)
    file, where, literal = data.draw(damages(source))
    folder = copy_of(source, tmp_path / "damaged")
    damage(folder, file, where, literal)
    check(run(cli, command, folder, servers_env(llm, wiki)), cli)


@pytest.mark.parametrize(
    ("where", "literal"),
    [
        (("methods",), '[{"method": ["cot"], "n": 1}]'),  # seen: a method's name that is a list
        (("methods",), '[{"method": {"a": 1}, "n": 1}]'),
        (("config", "methods"), '[["react"], {"a": 1}]'),
        (("config", "methods"), '"react"'),
        (("methods", "cot"), '["n", 1]'),
    ],
)
@pytest.mark.parametrize("command", COMMANDS)
def test_a_method_named_by_a_list_or_an_object(
    cli: Runner,
    llm: FakeOpenAI,
    wiki: FakeMediaWiki,
    made: dict[str, Path],
    tmp_path: Path,
    where: tuple[str, ...],
    literal: str,
    command: str,
) -> None:
    folder = copy_of(resumed_folder(cli, llm, wiki, made), tmp_path / "typed")
    damage(folder, "summary.json", where, literal)
    check(run(cli, command, folder, servers_env(llm, wiki)), cli, "summary.json")


@pytest.mark.parametrize("literal", ['[{"method": ["cot"], "n": 1}]', '[{"method": {}, "n": 1}]'])
def test_the_report_of_a_method_named_by_a_list(
    cli: Runner,
    llm: FakeOpenAI,
    wiki: FakeMediaWiki,
    made: dict[str, Path],
    tmp_path: Path,
    literal: str,
) -> None:
    folder = copy_of(resumed_folder(cli, llm, wiki, made), tmp_path / "typed")
    damage(folder, "summary.json", ("methods",), literal)
    result = run(cli, "report", folder, {})
    assert result.code == 2 and "summary.json: not a react-cli eval summary (methods)" in (
        one_error_line(result.stderr)
    )
