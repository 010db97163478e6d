"""A matrix eval through the command line: two models on two endpoints (each from its
``[models.NAME]`` entry), two methods, both protocols, over 16 questions with known answers;
its table, its Holm-corrected tests checked against a reference computed here (the binomial
test and Holm's formula written out), ``eval report``, ``eval compare`` of cells, and a
resume after the process is killed (``kill -9``) that runs only the missing cells and rows.

Model A answers ReAct as ``method_fakes.SCRIPTS`` does and every extra question wrong (its
CoT-SC right); model B answers every ReAct right (its CoT-SC wrong on the extra questions).
"""

from __future__ import annotations

import functools
import json
import math
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest
from conftest import cli_env
from eval_fakes import HOTPOT, Q, finish, prompt_of, question_of, rows_of, summary_of
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, Reply
from inproc import FAST_CONFIG, HANG_S, Runner, one_error_line, toml_value
from method_fakes import SCRIPTS, MethodsEndpoint, Script, samples
from tool_fakes import ProtocolsEndpoint, tools_script

EXTRA = [f"Is extra question {k} answered yes?" for k in range(10)]
QUESTIONS = [*Q, *EXTRA]
B_REACT = {Q[2]: [finish("Animorphs")], Q[5]: [finish("YG Entertainment")]}


def endpoint(scripts: dict[str, Script], default: Script) -> ProtocolsEndpoint:
    questions = [*scripts, *EXTRA]
    tools = {q: tools_script(scripts.get(q, default)) for q in questions}
    return ProtocolsEndpoint(MethodsEndpoint(scripts, default), tools)


A_DEFAULT = Script([finish("no")], [" Finish[no]"], " no", " no", samples(("yes", 21)))
B_DEFAULT = Script([finish("yes")], [" Finish[yes]"], " yes", " yes", samples(("no", 21)))
B_SCRIPTS = {q: replace(s, react=B_REACT.get(q, s.react)) for q, s in SCRIPTS.items()}

# Expected EM per cell over the 6 scripted questions, then the 14 extra ones.
EXPECTED = {
    ("local-a", "react"): [1, 1, 0, 1, 1, 0] + [0] * 10,
    ("local-a", "cot-sc+react"): [1, 1, 1, 0, 1, 0] + [1] * 10,
    ("hosted/b", "react"): [1] * 6 + [1] * 10,
    ("hosted/b", "cot-sc+react"): [1, 1, 1, 0, 1, 0] + [0] * 10,
}
CELLS = [
    (model, method, protocol)
    for model in ("local-a", "hosted/b")
    for protocol in ("text", "tools")
    for method in ("react", "cot-sc+react")
]


class Gate:
    """A reply function held while ``closed`` (a hung endpoint), then answering as ``inner``."""

    def __init__(self, inner: ProtocolsEndpoint) -> None:
        self.inner, self.open = inner, threading.Event()
        self.open.set()

    def __call__(self, body: dict[str, Any]) -> Reply:
        self.open.wait(HANG_S)
        return self.inner(body)


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[FakeOpenAI, FakeOpenAI, Gate]]:
    gate = Gate(endpoint(B_SCRIPTS, B_DEFAULT))
    with FakeOpenAI(endpoint(SCRIPTS, A_DEFAULT)) as a, FakeOpenAI(gate) as b:
        yield a, b, gate


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    rows = json.loads(HOTPOT.read_text(encoding="utf-8"))
    path = tmp_path / "questions.jsonl"
    lines = [{"question": r["question"], "answer": r["answer"]} for r in rows]
    lines += [{"question": q, "answer": "yes"} for q in EXTRA]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def configure(cli: Runner, a: FakeOpenAI, b: FakeOpenAI, **more: object) -> None:
    """Both models' entries, after the quick settings and ``more``."""
    settings = "".join(f"{k} = {toml_value(v)}\n" for k, v in {**FAST_CONFIG, **more}.items())
    cli.config_text(
        settings
        + f'[models.local-a]\nbase_url = "{a.url}"\n'
        + f'[models."hosted/b"]\nmodel = "b-served"\nbase_url = "{b.url}"\n'
        + 'api_key_env = "B_KEY"\n'
    )


def env(wiki: FakeMediaWiki) -> dict[str, str]:
    return {"REACT_CLI_WIKI": wiki.url, "B_KEY": "sk-b-only", "OPENAI_API_KEY": "sk-not-sent"}


ARGS = ["-m", "local-a", "-m", "hosted/b", "--methods", "react,cot-sc+react"]
ARGS += ["--protocol", "text,tools", "--concurrency", "4"]


def cell_folder(out: Path, model: str, method: str, protocol: str) -> Path:
    matrix = json.loads((out / "matrix.json").read_text(encoding="utf-8"))
    found = [
        c
        for c in matrix["cells"]
        if (c["model"], c["method"], c["protocol"]) == (model, method, protocol)
    ]
    assert len(found) == 1
    return out / found[0]["folder"]


def check_finished(cli: Runner, out: Path, a: FakeOpenAI, b: FakeOpenAI, html: Path) -> None:
    """A finished matrix: every cell an eval folder of its model (its endpoint and key), method
    and protocol with the expected rows; its table, tests against the reference, report."""
    for model, method, protocol in CELLS:
        folder = cell_folder(out, model, method, protocol)
        summary = summary_of(folder)
        served = "b-served" if model == "hosted/b" else "local-a"
        assert summary["config"]["model"] == served
        assert summary["config"]["protocol"] == protocol
        assert summary["config"].get("method", "react") == method
        ems = [row["em"] for row in rows_of(folder)]
        assert ems == EXPECTED[model, method], (model, method, protocol)
    assert all("authorization" not in r.headers for r in a.requests)
    assert {r.headers.get("authorization") for r in b.requests} == {"Bearer sk-b-only"}
    for request in a.requests:
        assert request.json is not None and request.json["model"] == "local-a"
    shown = cli(["eval", "show", str(out), "--json"])
    assert shown.code == 0, shown.stderr
    data = json.loads(shown.stdout)
    assert data["path"] == str(out) and data["status"] == "finished"
    cells = data["cells"]
    assert [(c["model"], c["method"], c["protocol"]) for c in cells] == CELLS
    assert [c["em"] for c in cells] == [
        sum(EXPECTED[model, method]) / len(QUESTIONS) for model, method, _ in CELLS
    ]
    best_em = [c["number"] for c in cells if c["em"] == max(x["em"] for x in cells)]
    assert data["best"]["em"] == best_em == [5, 7]
    for cell, (model, method, _) in zip(cells, CELLS, strict=True):  # why each cell's failed
        modes = cell["failure_modes"]
        assert sum(mode["count"] for mode in modes.values()) == len(QUESTIONS)
        right = sum(
            modes.get(m, {"count": 0})["count"] for m in ("right", "right_without_evidence")
        )
        assert right == sum(EXPECTED[model, method])
    check_tests(data, out)
    report = cli(["eval", "report", str(out), "-o", str(html)])
    assert report.code == 0, report.stderr
    page = html.read_text(encoding="utf-8")
    assert "hosted/b" in page and "Holm over 28 pairs" in page and "▲" in page
    assert "<h2>Failure modes</h2>" in page


def check_tests(data: dict[str, Any], out: Path) -> None:
    """Every pair's McNemar and bootstrap p, and their Holm adjustments, computed here."""
    rows = {}
    for number, (model, method, protocol) in enumerate(CELLS, 1):
        folder = cell_folder(out, model, method, protocol)
        rows[number] = {(r["index"], r["question"]): r for r in rows_of(folder)}
    pairs = list(combinations(range(1, 9), 2))
    exact_p, boot_p = [], []
    for x, y in pairs:
        keys = sorted(rows[x])
        ems = [(rows[x][k]["em"], rows[y][k]["em"]) for k in keys]
        b = sum(1 for p, q in ems if p == 1 and q == 0)
        c = sum(1 for p, q in ems if p == 0 and q == 1)
        exact_p.append(binomial_two_sided(min(b, c), b + c))
        boot_p.append(bootstrap_p(tuple(rows[y][k]["f1"] - rows[x][k]["f1"] for k in keys)))
    for name, reference in (("mcnemar_exact", exact_p), ("paired_bootstrap", boot_p)):
        got = data["tests"][name]
        assert got["correction"] == "holm"
        assert [(t["a"], t["b"]) for t in got["pairs"]] == pairs
        assert [t["p"] for t in got["pairs"]] == pytest.approx(reference, abs=1e-12)
        assert [t["p_holm"] for t in got["pairs"]] == pytest.approx(holm(reference), abs=1e-12)
        for test, adjusted in zip(got["pairs"], holm(reference), strict=True):
            assert test["significant"] is (adjusted < 0.05)
    # B's ReAct (cell 5) beats A's (cell 1) on 12 questions, loses none: significant.
    exact = {(t["a"], t["b"]): t for t in data["tests"]["mcnemar_exact"]["pairs"]}
    assert exact[1, 5]["better"] == 5 and exact[1, 5]["p_holm"] < 0.05
    assert exact[1, 3]["better"] is None and exact[1, 3]["p"] == 1.0  # text and tools agree


@functools.cache  # the pairs of cells that answered alike (text and tools) resample alike
def bootstrap_p(diffs: tuple[float, ...]) -> float:
    """The paired bootstrap's two-sided p, written out: 10,000 resamples from seed 0."""
    rng = random.Random(0)
    means = [sum(rng.choices(diffs, k=len(diffs))) / len(diffs) for _ in range(10_000)]
    tail = min(sum(m <= 0 for m in means), sum(m >= 0 for m in means))
    return min(1.0, 2 * tail / 10_000)


def binomial_two_sided(k: int, n: int) -> float:
    """The two-sided binomial test of k successes in n at 1/2: twice the lower tail, capped."""
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2 * tail)


def holm(p: list[float]) -> list[float]:
    """Holm's step-down adjustment, written out: sort, multiply by m − rank, keep monotone."""
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    adjusted = [0.0] * m
    previous = 0.0
    for rank, i in enumerate(order):
        previous = max(previous, min(1.0, (m - rank) * p[i]))
        adjusted[i] = previous
    return adjusted


def rows_on_disk(folder: Path) -> int:
    path = folder / "results.jsonl"
    return path.read_bytes().count(b"\n") if path.exists() else 0


def stop_when_a_is_done(
    cli: Runner,
    wiki: FakeMediaWiki,
    dataset: Path,
    out: Path,
    gate: Gate,
    signum: int,
    args: list[str] = ARGS,
) -> subprocess.CompletedProcess[bytes]:
    """A real ``react-cli eval`` of the matrix (``args``), model B's endpoint hanging, sent
    ``signum`` once model A's cells hold every row."""
    gate.open.clear()  # model B's endpoint hangs: its cells start, none of them finishes
    command = [sys.executable, "-m", "react_cli", "eval", str(dataset), *args, "--out", str(out)]
    a_count = 4 if args is ARGS else 1
    process = subprocess.Popen(
        command,
        env=cli_env(cli.home, **env(wiki)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        ends = time.monotonic() + HANG_S
        a_cells: list[Path] = []
        while time.monotonic() < ends:
            if (out / "matrix.json").exists():
                a_cells = [cell_folder(out, *cell) for cell in CELLS[:a_count]]
                if all(rows_on_disk(folder) == len(QUESTIONS) for folder in a_cells):
                    break
            time.sleep(0.05)
        assert a_cells and all(rows_on_disk(folder) == len(QUESTIONS) for folder in a_cells)
        process.send_signal(signum)
        _, stderr = process.communicate(timeout=HANG_S)
    finally:
        process.kill()
        process.wait()
        gate.open.set()
    return subprocess.CompletedProcess(command, process.returncode, b"", stderr)


def test_ctrl_c_stops_every_cell_and_keeps_their_rows(
    cli: Runner,
    servers: tuple[FakeOpenAI, FakeOpenAI, Gate],
    wiki: FakeMediaWiki,
    dataset: Path,
    tmp_path: Path,
) -> None:
    a, b, gate = servers
    configure(cli, a, b)
    out = tmp_path / "m"
    two = [*ARGS[:4], "--method", "react", "--protocol", "text"]  # cells 1 and 5
    stopped = stop_when_a_is_done(cli, wiki, dataset, out, gate, signal.SIGINT, two)
    assert stopped.returncode == 130
    error = one_error_line(stopped.stderr.decode().splitlines()[-1])
    assert error.startswith(f"Error: interrupted; {len(QUESTIONS)} results kept in ")
    assert error.endswith(f"continue with: react-cli eval --resume {out}")
    matrix = json.loads((out / "matrix.json").read_text(encoding="utf-8"))
    assert matrix["status"] == "interrupted"
    assert [cell["status"] for cell in matrix["cells"]] == ["finished", "interrupted"]
    assert summary_of(cell_folder(out, *CELLS[4]))["status"] == "interrupted"


def test_a_matrix_killed_resumes_its_missing_cells_and_rows_then_shows_its_tests(
    cli: Runner,
    servers: tuple[FakeOpenAI, FakeOpenAI, Gate],
    wiki: FakeMediaWiki,
    dataset: Path,
    tmp_path: Path,
) -> None:
    a, b, gate = servers
    configure(cli, a, b)
    out = tmp_path / "m"
    a.requests.clear()
    stopped = stop_when_a_is_done(cli, wiki, dataset, out, gate, signal.SIGKILL)
    assert stopped.returncode == -signal.SIGKILL
    assert json.loads((out / "matrix.json").read_text(encoding="utf-8"))["status"] == "running"
    assert all(rows_on_disk(cell_folder(out, *cell)) == 0 for cell in CELLS[4:])
    # What else a kill can leave: a cell not started yet, a cell with rows missing.
    first, fourth = (cell_folder(out, *cell) for cell in (CELLS[0], CELLS[3]))
    kept = (first / "results.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (first / "results.jsonl").write_text("".join(kept[:15]), encoding="utf-8")
    missing = {json.loads(line)["question"] for line in kept[15:]}
    shutil.rmtree(fourth)
    asked_before = len(a.requests)
    b.requests.clear()  # what it got before the kill: held, never answered
    resumed = cli(["eval", "--resume", str(out), "--json"], **env(wiki))
    assert resumed.code == 0, resumed.stderr
    assert "every pair tested: react-cli eval show" in resumed.stderr  # the table, on stderr
    assert "8/8 cells" in resumed.stderr  # one display: the whole, and a line per cell
    assert re.search(r"hosted/b · react · tools +━+ 16/16 +EM 1\.000", resumed.stderr)
    assert json.loads(resumed.stdout)["tests"] is None  # eval show tests them
    asked = [r.json for r in a.requests[asked_before:] if r.json is not None]
    loops = [body for body in asked if re.search(r"Thought \d+:$", prompt_of(body))]
    assert {question_of(body) for body in loops} == missing  # only the rows cell 1 lost
    assert any(body.get("tools") for body in asked)  # the missing tools cell, again
    for model, method, protocol in CELLS:
        rows = rows_of(cell_folder(out, model, method, protocol))
        assert [row["em"] for row in rows] == EXPECTED[model, method], (model, method)
    matrix = json.loads((out / "matrix.json").read_text(encoding="utf-8"))
    assert matrix["status"] == "finished"
    assert {cell["status"] for cell in matrix["cells"]} == {"finished"}
    shown = cli(["eval", "show", str(out)])
    assert shown.code == 0, shown.stderr
    assert "hosted/b" in shown.stdout and "Holm over 28" in shown.stdout
    assert "failure modes" in shown.stdout and "#8" in shown.stdout  # a column per cell
    check_finished(cli, out, a, b, tmp_path / "m.html")
    check_cells_compare(cli, out)


def check_cells_compare(cli: Runner, out: Path) -> None:
    """Any two cells, by number, by what they cross, by folder; a cell alone is an eval."""
    by_number = cli(["eval", "compare", f"{out}@1", f"{out}@5", "--json"])
    assert by_number.code == 0, by_number.stderr
    data = json.loads(by_number.stdout)
    assert data["paired"] == len(QUESTIONS)
    assert data["flips"]["wrong_to_right"] == 12 and data["flips"]["right_to_wrong"] == 0
    assert data["a"]["path"] == str(cell_folder(out, *CELLS[0]))
    named = cli(
        [
            "eval",
            "compare",
            f"{out}@local-a,react,tools",
            f"{out}@model=hosted/b,method=cot-sc+react,protocol=tools",
            "--json",
        ]
    )
    assert named.code == 0, named.stderr
    sides = json.loads(named.stdout)
    assert sides["a"]["path"] == str(cell_folder(out, *CELLS[2]))
    assert sides["b"]["path"] == str(cell_folder(out, *CELLS[7]))
    folder = cell_folder(out, *CELLS[1])
    plain = cli(["eval", "compare", str(folder), f"{out}@{folder.name}", "--json"])
    assert plain.code == 0 and json.loads(plain.stdout)["scores"]["em"]["difference"] == 0
    one = cli(["eval", "show", f"{out}@2", "--json"])
    assert one.code == 0 and json.loads(one.stdout)["config"]["method"] == "cot-sc+react"
    for wrong, said in (
        ([str(out), f"{out}@1"], "is a matrix: name one of its cells"),
        ([f"{out}@react", f"{out}@1"], "4 cells"),
        ([f"{out}@9", f"{out}@1"], "has cells 1 to 8, not 9"),
        ([f"{out}@1", f"{out}@color=red"], "'color' is no part of a cell"),
    ):
        refused = cli(["eval", "compare", *wrong])
        assert refused.code == 2
        assert said in one_error_line(refused.stderr)


def test_a_cell_whose_endpoint_refuses_the_key_stops_alone(
    cli: Runner,
    servers: tuple[FakeOpenAI, FakeOpenAI, Gate],
    wiki: FakeMediaWiki,
    dataset: Path,
    tmp_path: Path,
) -> None:
    a, _, _ = servers
    with FakeOpenAI([Reply(status=401)]) as refusing:
        configure(cli, a, refusing)
        out = tmp_path / "m"
        args = ["-m", "local-a", "-m", "hosted/b", "--limit", "3", "--out", str(out)]
        result = cli(["eval", str(dataset), *args], **env(wiki))
    assert result.code == 2
    assert "401" in one_error_line(result.stderr.splitlines()[-1])
    matrix = json.loads((out / "matrix.json").read_text(encoding="utf-8"))
    assert [cell["status"] for cell in matrix["cells"]] == ["finished", "stopped"]
    assert [row["em"] for row in rows_of(cell_folder(out, *CELLS[0]))] == [1.0, 1.0, 0.0]


def test_max_total_cost_bounds_the_whole_matrix_and_resume_goes_on(
    cli: Runner,
    servers: tuple[FakeOpenAI, FakeOpenAI, Gate],
    wiki: FakeMediaWiki,
    dataset: Path,
    tmp_path: Path,
) -> None:
    """Two cells, one question at a time each, spend one budget: no question of either starts
    once they spent it together, so both stop, and one of them having spent less than the
    budget alone (a budget per cell stops a cell only once it spent the budget itself)."""
    a, b, _ = servers
    configure(cli, a, b, price_input=100.0, price_output=100.0)  # 1,000 tokens: 0.1
    out = tmp_path / "m"
    args = ["-m", "local-a", "-m", "hosted/b", "--limit", "6", "--concurrency", "1"]
    budget = 2.0  # each cell's 6 questions cost more: 4.85 and 2.38
    result = cli(
        ["eval", str(dataset), *args, "--max-total-cost", str(budget), "--out", str(out)],
        **env(wiki),
    )
    assert result.code == 1, result.stderr
    error = one_error_line(result.stderr.splitlines()[-1])
    assert error.startswith("Error: stopped: the matrix spent its --max-total-cost; ")
    assert error.endswith(f"continue with: react-cli eval --resume {out}")
    folders = [cell_folder(out, model, "react", "text") for model in ("local-a", "hosted/b")]
    spent = [sum(row["cost"] for row in rows_of(folder)) for folder in folders]
    most = max(row["cost"] for folder in folders for row in rows_of(folder))
    assert budget <= sum(spent) < budget + 2 * most  # at most a question in flight per cell
    assert min(spent) < budget
    matrix = json.loads((out / "matrix.json").read_text(encoding="utf-8"))
    assert matrix["status"] == "budget"
    assert [cell["status"] for cell in matrix["cells"]] == ["budget", "budget"]
    assert [summary_of(folder)["status"] for folder in folders] == ["budget", "budget"]
    resumed = cli(["eval", "--resume", str(out)], **env(wiki))
    assert resumed.code == 0, resumed.stderr
    assert [len(rows_of(folder)) for folder in folders] == [6, 6]


FOLDERS = Path(__file__).resolve().parents[1] / "fixtures" / "eval" / "folders"


@pytest.mark.parametrize("name", ["hotpotqa", "fever", "jsonl"])
def test_an_old_single_eval_still_shows_and_is_no_matrix(cli: Runner, name: str) -> None:
    folder = FOLDERS / name
    shown = cli(["eval", "show", str(folder), "--json"])
    assert shown.code == 0, shown.stderr
    recorded = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    assert json.loads(shown.stdout)["n"] == recorded["n"]
    refused = cli(["eval", "compare", f"{folder}@1", str(folder)])
    assert refused.code == 2
    assert "no matrix eval there" in one_error_line(refused.stderr)


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda m: m["cells"][0].update(name="../../escape"), "cell folder '../../escape'"),
        (lambda m: m["cells"][0].update(method="magic"), "not a react-cli matrix"),
        (lambda m: m.update(kind="eval"), "not a react-cli matrix (kind)"),
        (lambda m: m["cells"].append(dict(m["cells"][0])), "a folder named twice"),
    ],
)
def test_a_matrix_file_is_read_as_untrusted(
    cli: Runner, tmp_path: Path, change: Any, said: str
) -> None:
    folder = tmp_path / "m"
    (folder / "cells").mkdir(parents=True)
    dataset = {"path": "q.jsonl", "format": "jsonl", "rows": 1, "offset": 0, "limit": None}
    cell = {"name": "a--react--text", "model": "a", "method": "react", "protocol": "text"}
    matrix = {
        "version": 1,
        "kind": "matrix",
        "status": "finished",
        "dataset": dataset,
        "axes": {"models": ["a"], "methods": ["react"], "protocols": ["text"]},
        "cells": [cell],
        "created": "2026-01-01T00:00:00+00:00",
        "updated": "2026-01-01T00:00:00+00:00",
        "wall_s": 1.0,
    }
    change(matrix)
    (folder / "matrix.json").write_text(json.dumps(matrix), encoding="utf-8")
    for command in (["eval", "show", str(folder)], ["eval", "--resume", str(folder)]):
        result = cli(command)
        assert result.code == 2
        assert said in one_error_line(result.stderr)


def test_a_new_matrix_never_writes_over_an_old_one(
    cli: Runner, tmp_path: Path, dataset: Path
) -> None:
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "matrix.json").write_text("{}", encoding="utf-8")
    result = cli(["eval", str(dataset), *ARGS, "--out", str(folder)], REACT_CLI_MODEL="x")
    assert result.code == 2
    assert "holds an earlier matrix: continue it with: react-cli eval --resume" in one_error_line(
        result.stderr
    )
