"""Evidence scores through ``react-cli eval`` (issue 22), on a ZIM archive ``wiki build-zim`` made
from the HotpotQA distractor file, checked by hand: an oracle run that searches both gold pages
of each question scores page recall 1.0; a run that finds one of the two scores 0.5; rows,
summary.json (per method too), the terminal summary, ``eval show``, ``eval compare`` and the
report say so. A dataset without supporting facts has no evidence scores."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from eval_fakes import PerQuestion, finish, rows_of, search, summary_of
from fake_openai import Reply
from inproc import Runner

from react_cli.eval.rows import BadRow, Row
from react_cli.eval.summary import BadSummary, Summary
from react_cli.infra.untrusted import dump_json
from react_cli.share.report import eval_report
from react_cli.wiki.zimbuild import build_zim

pytest_plugins = ["share_evals"]  # its run_eval, imported where used (after pytest loads it)

HOTPOT = Path(__file__).resolve().parents[1] / "fixtures" / "hotpotqa" / "distractor_first2.json"
Q = [row["question"] for row in json.loads(HOTPOT.read_text(encoding="utf-8"))]
Scripts = dict[str, list[str | Reply]]
ORACLE: Scripts = {  # both gold pages of each question, then the gold answer
    Q[0]: [search("Scott Derrickson"), search("Ed Wood", 2), finish("yes", 3)],
    Q[1]: [
        search("Kiss and Tell (1945 film)"),
        search("Shirley Temple", 2),
        finish("Chief of Protocol", 3),
    ],
}
HALF: Scripts = {  # one gold page of each question, the right answer all the same
    Q[0]: [search("Scott Derrickson"), finish("yes", 2)],
    Q[1]: [search("Shirley Temple"), finish("Chief of Protocol", 2)],
}


def evaluate(
    out: Path, scripts: Scripts, archive: Path, *args: str, dataset: Path = HOTPOT
) -> Path:
    """``react-cli eval`` in-process over ``archive``, the model answering from ``scripts``."""
    from share_evals import run_eval

    return run_eval(out, PerQuestion(scripts), dataset, "--wiki", f"zim:{archive}", *args)


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("zim") / "distractor.zim"
    build_zim(HOTPOT, out)
    return out


@pytest.fixture(scope="module")
def oracle(archive: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("evals") / "oracle"
    return evaluate(out, ORACLE, archive, "--methods", "react,cot")


@pytest.fixture(scope="module")
def half(archive: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("evals") / "half"
    return evaluate(out, HALF, archive)


def test_an_oracle_run_scores_page_recall_one(oracle: Path) -> None:
    rows = rows_of(oracle)
    for row in rows:
        react, cot = row["methods"]["react"], row["methods"]["cot"]
        assert react["em"] == 1.0
        assert react["evidence"] == {
            "page_recall": 1.0,
            "page_precision": 1.0,
            "sentence_recall": 1.0,
        }
        assert "evidence" not in cot  # CoT reads no Wikipedia: nothing retrieved to score
    summary = summary_of(oracle)
    assert summary["evidence"] == {
        "n": 2,
        "page_recall": 1.0,
        "page_precision": 1.0,
        "sentence_recall": 1.0,
    }
    assert summary["methods"]["react"]["page_recall"] == 1.0
    assert "page_recall" not in summary["methods"]["cot"]
    trace = json.loads((oracle / rows[1]["methods"]["react"]["trace"]).read_text(encoding="utf-8"))
    assert [s["title"] for s in trace["sources"]] == ["Kiss and Tell (1945 film)", "Shirley Temple"]
    assert [s["supports"] for s in trace["sources"]] == [False, True]  # "Chief of Protocol"
    assert {s["sentence_ids"] for s in trace["sources"]} == {"page"}


def test_a_run_that_found_one_of_two_gold_pages_scores_half(half: Path) -> None:
    derrickson, temple = (row["evidence"] for row in rows_of(half))
    # Scott Derrickson's sentence 0 is one of the two gold sentences; Shirley Temple's 0 and 1
    # are two of the three (Kiss and Tell's 0 never shown).
    assert derrickson == {"page_recall": 0.5, "page_precision": 1.0, "sentence_recall": 0.5}
    assert temple == {"page_recall": 0.5, "page_precision": 1.0, "sentence_recall": 0.666667}
    assert summary_of(half)["evidence"] == {
        "n": 2,
        "page_recall": 0.5,
        "page_precision": 1.0,
        "sentence_recall": 0.583333,
    }


def test_show_and_the_terminal_summary_give_the_means(
    cli: Runner, half: Path, oracle: Path
) -> None:
    shown = cli(["eval", "show", str(half)])
    assert shown.code == 0
    line = next(line for line in shown.stdout.splitlines() if "evidence" in line)
    assert "page recall 0.5000 · page precision 1.0000 · sentence recall 0.5833" in line
    table = cli(["eval", "show", str(oracle)]).stdout
    assert "page recall" in table.split("methods (paper")[1]  # Table 1's evidence column
    react = next(line for line in table.splitlines() if line.lstrip("│ ").startswith("ReAct"))
    cot = next(line for line in table.splitlines() if line.lstrip("│ ").startswith("CoT"))
    assert react.rstrip(" │").endswith("100.0%") and cot.rstrip(" │").endswith("—")


def test_compare_gives_the_paired_differences(cli: Runner, oracle: Path, half: Path) -> None:
    result = cli(["eval", "compare", str(oracle), str(half), "--json"])
    assert result.code == 0, result.stderr
    evidence = json.loads(result.stdout)["evidence"]
    assert evidence["page_recall"] == {"a": 1.0, "b": 0.5, "difference": -0.5, "n": 2}
    assert evidence["page_precision"]["difference"] == 0.0
    assert evidence["sentence_recall"]["difference"] == pytest.approx(7 / 12 - 1.0, abs=1e-6)
    text = cli(["eval", "compare", str(oracle), str(half)]).stdout
    row = next(line for line in text.splitlines() if line.startswith("page recall"))
    assert row.split() == ["page", "recall", "1.0000", "0.5000", "−0.5000"]


def test_the_report_charts_em_by_page_recall_and_has_an_evidence_column(half: Path) -> None:
    soup = BeautifulSoup(eval_report(half), "html.parser")
    titles = [figure.img["alt"] for figure in soup.find_all("figure")]
    assert "Chart: EM by page recall" in titles
    chart = soup.find_all("figure")[titles.index("Chart: EM by page recall")]
    assert "page recall: score): em 0.50: 1.00; f1 0.50: 1.00" in chart.figcaption.string
    headers = [th.button.string for th in soup.find(id="questions").thead.find_all("th")]
    assert headers[-1] == "evidence"
    cells = [tr.find_all("td")[-1].string for tr in soup.find(id="questions").tbody.find_all("tr")]
    assert cells == [
        "pages 0.50 · sentences 0.50",
        "pages 0.50 · sentences 0.67",
    ]
    cards = {card.contents[-1]: card.b.string for card in soup.find_all(class_="card")}
    assert cards["page recall"] == "0.5000" and cards["sentence recall"] == "0.5833"


def test_a_dataset_without_supporting_facts_has_no_evidence(
    cli: Runner, archive: Path, tmp_path: Path
) -> None:
    dataset = tmp_path / "plain.json"
    rows = json.loads(HOTPOT.read_text(encoding="utf-8"))
    dataset.write_text(
        json.dumps([{"question": r["question"], "answer": r["answer"]} for r in rows])
    )
    out = evaluate(tmp_path / "plain", HALF, archive, dataset=dataset)
    assert all("evidence" not in row for row in rows_of(out))
    assert "evidence" not in summary_of(out)
    line = next(
        line for line in cli(["eval", "show", str(out)]).stdout.splitlines() if "evidence" in line
    )
    assert line.split("│")[2].strip() == "—"


def test_rows_and_summaries_with_evidence_are_written_again_byte_for_byte(half: Path) -> None:
    for line in (half / "results.jsonl").read_text(encoding="utf-8").splitlines():
        assert dump_json(Row.from_json(json.loads(line)).to_json()) == line
    document = summary_of(half)
    assert Summary.from_json(document).to_json() == document


@pytest.mark.parametrize(
    ("evidence", "problem"),
    [
        ([1], "evidence is not an object"),
        ({"page_recall": 2, "page_precision": 1}, "page_recall is 2, out of range"),
        ({"page_recall": 1, "page_precision": "x"}, "page_precision is 'x', not a number"),
        ({"page_recall": 1, "page_precision": 1, "sentence_recall": -1}, "out of range"),
    ],
)
def test_a_row_with_malformed_evidence_names_it(half: Path, evidence: object, problem: str) -> None:
    row = json.loads((half / "results.jsonl").read_text(encoding="utf-8").splitlines()[0])
    with pytest.raises(BadRow, match=problem):
        Row.from_json({**row, "evidence": evidence})
    summary = summary_of(half)
    with pytest.raises(BadSummary, match=r"evidence|page_recall|page_precision|sentence_recall"):
        Summary.from_json({**summary, "evidence": evidence})
