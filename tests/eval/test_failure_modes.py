"""Why an answer failed (issue 33): each failure mode produced by a scripted run built for it,
through ``react-cli eval`` over a ZIM archive made from ten HotpotQA distractor questions; the
rows record each mode and its rule, ``eval show``, ``eval report`` and ``eval compare`` carry the
table, and an eval folder written before modes were recorded gets the same modes from its rows
and traces."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from eval_fakes import PerQuestion, finish, rows_of, search
from fake_openai import Reply
from inproc import Runner

from react_cli.eval.failures import FailureMode
from react_cli.share.compare import compare_evals
from react_cli.share.evaldir import load_eval
from react_cli.share.report import eval_report
from react_cli.wiki.zimbuild import build_zim

pytest_plugins = ["share_evals"]

HOTPOT = Path(__file__).resolve().parents[1] / "fixtures" / "hotpotqa" / "distractor_first10.json"
Q = [row["question"] for row in json.loads(HOTPOT.read_text(encoding="utf-8"))]
THINK = " I am not sure what to do."
SCRIPTS: dict[str, list[str | Reply]] = {
    Q[0]: [search("Scott Derrickson"), search("Ed Wood", 2), finish("yes", 3)],
    Q[1]: [finish("Chief of Protocol")],
    Q[2]: [search("Shirley Temple"), finish("Goosebumps", 2)],
    Q[3]: [search("Laleli Mosque"), finish("Ortaköy", 2)],
    Q[4]: [finish("Greenwich Village, New York City, USA")],
    Q[5]: [search("Winner (band)"), finish("South Korean", 2)],
    Q[6]: [search("Eenasul Fateh", k) for k in (1, 2, 3)],
    Q[7]: [search("Lewiston Maineiacs"), search("Robins Center", 2), search("Case Gym", 3)],
    Q[8]: [THINK],
    Q[9]: [Reply(status=400)],
}
EXPECTED = [
    FailureMode.RIGHT,
    FailureMode.RIGHT_WITHOUT_EVIDENCE,
    FailureMode.SEARCH_FAILURE,
    FailureMode.UNSUPPORTED_ANSWER,
    FailureMode.AMBIGUOUS_LABEL,
    FailureMode.REASONING_ERROR,
    FailureMode.REPETITIVE_LOOP,
    FailureMode.LIMIT,
    FailureMode.FORMAT_ERROR,
    FailureMode.ENDPOINT_FAILURE,
]


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("zim") / "distractor10.zim"
    build_zim(HOTPOT, out)
    return out


@pytest.fixture(scope="module")
def modes(archive: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from share_evals import run_eval

    out = tmp_path_factory.mktemp("evals") / "modes"
    return run_eval(out, PerQuestion(SCRIPTS), HOTPOT, "--wiki", f"zim:{archive}", code=1)


def test_each_scripted_run_gets_its_failure_mode_and_rule(modes: Path) -> None:
    rows = rows_of(modes)
    assert [row["failure"]["mode"] for row in rows] == [str(mode) for mode in EXPECTED]
    rules = [row["failure"]["rule"] for row in rows]
    assert rules[2] == "no gold page retrieved"
    assert rules[3] == "no observation contains the answer"
    assert rules[4] == "EM 0 but F1 0.91 ≥ 0.8"
    assert rules[5] == "a gold page retrieved, the answer wrong"
    assert rows[6]["stop_reason"] in ("repeated_action", "max_steps")
    assert rows[8]["stop_reason"] == "parse_errors" or rows[8]["answer"] is None


def test_an_old_folder_gets_the_same_modes_from_its_rows_and_traces(
    modes: Path, tmp_path: Path
) -> None:
    old = tmp_path / "old"
    old.mkdir()
    for name in ("summary.json", "traces"):
        source = modes / name
        target = old / name
        if source.is_dir():
            target.mkdir()
            for trace in source.iterdir():
                (target / trace.name).write_bytes(trace.read_bytes())
        else:
            target.write_bytes(source.read_bytes())
    lines = []
    for row in rows_of(modes):
        del row["failure"]
        lines.append(json.dumps(row) + "\n")
    (old / "results.jsonl").write_text("".join(lines), encoding="utf-8")
    assert [row.mode for row in load_eval(old).rows] == EXPECTED


def test_show_prints_the_table_and_each_wrong_answer_its_mode(cli: Runner, modes: Path) -> None:
    result = cli(["eval", "show", str(modes), "--wrong"], COLUMNS="300")
    assert result.code == 0, result.stderr
    assert "failure modes" in result.stdout
    for mode in EXPECTED:
        assert f"{mode.label} " in result.stdout
    assert "1 (10%)" in result.stdout
    assert "search failure: no gold page retrieved" in result.stdout


def test_report_draws_the_stacked_chart(modes: Path) -> None:
    pytest.importorskip("matplotlib")
    html = eval_report(modes)
    assert "Why answers failed" in html and "Failure modes" in html
    assert "reasoning error 10%" in html


def test_compare_lists_the_rows_whose_mode_changed(
    archive: Path, modes: Path, tmp_path: Path, cli: Runner
) -> None:
    from share_evals import run_eval

    fixed = {**SCRIPTS, Q[2]: [search("Animorphs"), finish("Animorphs", 2)]}
    zim = f"zim:{archive}"
    other = run_eval(tmp_path / "b", PerQuestion(fixed), HOTPOT, "--wiki", zim, code=1)
    comparison = compare_evals(modes, other).to_json()
    changed = comparison["failure_modes"]["changed"]
    assert changed == [
        {"index": 2, "question": Q[2], "a": "search_failure", "b": "right"},
    ]
    assert comparison["failure_modes"]["b"]["right"] == {"count": 2, "share": 0.2}
    result = cli(["eval", "compare", str(modes), str(other), "--list", "modes"])
    assert result.code == 0, result.stderr
    assert "failure mode changed: 1 of 10 questions" in result.stdout
    assert "search failure" in result.stdout.split("failure modes changed (1)")[1]


OLD = Path(__file__).resolve().parents[1] / "fixtures" / "eval" / "folders"


def test_folders_of_older_versions_get_modes_from_their_rows_alone() -> None:
    """Rows written before modes (and without their traces): from stop reason and scores."""
    modes = {
        name: [row.mode for row in load_eval(OLD / name).rows] for name in ("hotpotqa", "fever")
    }
    assert modes["hotpotqa"] == [
        FailureMode.RIGHT_WITHOUT_EVIDENCE,  # no trace: no observation held the answer
        FailureMode.RIGHT_WITHOUT_EVIDENCE,
        FailureMode.ENDPOINT_FAILURE,
        FailureMode.LIMIT,
        FailureMode.UNSUPPORTED_ANSWER,
    ]
    assert modes["fever"][-1] is FailureMode.ENDPOINT_FAILURE
    assert set(modes["fever"][:-1]) == {FailureMode.REASONING_ERROR}  # labels are no spans


def test_a_recorded_mode_react_cli_never_writes_is_derived_again(
    modes: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "edited"
    folder.mkdir()
    (folder / "summary.json").write_bytes((modes / "summary.json").read_bytes())
    rows = rows_of(modes)
    rows[0]["failure"] = {"mode": "<b>made up</b>", "rule": "x"}
    rows[2]["failure"] = {"mode": "reasoning_error", "rule": "\x1b[31m" + "long " * 100}
    (folder / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    shown = load_eval(folder).rows
    assert shown[0].mode is FailureMode.RIGHT  # derived: its evidence has the gold pages
    assert shown[2].mode is FailureMode.REASONING_ERROR  # as recorded, its rule cleaned and cut
    assert shown[2].failure is not None and "\x1b" not in shown[2].failure.rule
    assert len(shown[2].failure.rule) <= 200
