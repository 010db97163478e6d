"""Eval folders read back (real ones from ``react-cli eval``, hostile ones), shown and reported."""

from __future__ import annotations

import base64
import io
import json
import re
import sys
from pathlib import Path

import pytest
from eval_fakes import HOTPOT, PerQuestion
from fake_openai import Reply
from rich.console import Console, RenderableType
from share_data import (
    ESCAPES,
    EXTRA_LINES,
    HOSTILE_LINE,
    HOSTILE_QUESTIONS,
    SVG_URI,
    Q,
    self_contained,
    write_json,
)
from share_evals import run_eval

from react_cli.core.errors import UsageError
from react_cli.display.terminal import make_console
from react_cli.share.charts import INSTALL_HINT
from react_cli.share.evaldir import ScoreKind, load_eval
from react_cli.share.report import eval_report
from react_cli.share.show import show_eval
from react_cli.share.text import clean

pytest_plugins = ["share_evals"]

# Run A as scripted in share_data: (answer, em, steps, model calls) per dataset index.
A_ROWS = {
    0: ("yes", 1.0, 1, 1),
    1: ("Chief of Protocol of the United States", 0.0, 2, 2),
    2: ("The Animorphs", 1.0, 2, 2),
    3: ("yes", 0.0, 1, 1),
    4: ("Greenwich Village", 0.0, 1, 1),
    5: (None, 0.0, 3, 3),
}


def printed(parts: list[RenderableType], width: int = 200) -> str:
    out = io.StringIO()
    console = make_console(out, stderr=False)
    console.width = width
    for part in parts:
        console.print(part)
    return out.getvalue()


def test_a_real_eval_folder_reads_back(eval_a: Path) -> None:
    folder = load_eval(eval_a)
    assert folder.kind is ScoreKind.EM_F1 and folder.skipped == 0
    assert [row.key for row in folder.rows] == list(enumerate(Q))
    for row in folder.rows:
        answer, em, steps, calls = A_ROWS[row.index]
        assert (row.answer, row.em, row.steps) == (answer, em, steps)
        assert row.calls is None  # rows do not record calls yet: they come from the trace
        assert row.model_calls() == calls
    assert folder.label == "m · hotpotqa"
    facts = dict(folder.config_facts())
    assert facts["dataset"] == "hotpotqa_dev_first6.json (hotpotqa)"  # the name, not the path
    assert facts["prompt"].startswith("hotpotqa (") and "base_url" not in facts


def test_recorded_calls_win_over_counting(eval_a: Path, tmp_path: Path) -> None:
    folder = tmp_path / "eval"
    folder.mkdir()
    (folder / "summary.json").write_bytes((eval_a / "summary.json").read_bytes())
    row = json.loads((eval_a / "results.jsonl").read_text(encoding="utf-8").splitlines()[0])
    row["calls"] = 21
    (folder / "results.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    (only,) = load_eval(folder).rows
    assert only.calls == only.model_calls() == 21
    assert str(only.view()).endswith(": no such trace file")  # traces/ was not copied


def test_hostile_rows_are_skipped_and_traces_stay_inside(eval_hostile: Path) -> None:
    folder = load_eval(eval_hostile)
    invalid = sum(not valid for _, valid in EXTRA_LINES)
    assert folder.skipped == invalid  # the repeated first row replaces the first: valid
    by_index = {row.index: row for row in folder.rows}
    assert sorted(by_index) == [0, 1, 20, 21, 22, 23]
    assert by_index[20].trace is None and by_index[21].trace is None
    assert by_index[20].outcome == "llm_error: HTTP 401 from the endpoint"
    assert str(by_index[22].view()).startswith(f"{eval_hostile}/traces/broken.json: truncated JSON")
    assert by_index[23].question == "lone \ufffd surrogate"
    assert by_index[23].answer == "bad \ufffd text" and by_index[23].model_calls() == 4
    assert by_index[0].question == clean(HOSTILE_QUESTIONS[0])
    assert by_index[1].answer is None and by_index[1].stop_reason == "repeated_action"


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda d: d / "missing", "missing: no such eval folder"),
        (lambda d: d, "not an eval folder (no summary.json)"),
        (lambda d: write_json(d / "summary.json", []) and d, "(not an object)"),
        (lambda d: (d / "summary.json").write_text("{", encoding="utf-8") and d, "unreadable"),
        (lambda d: write_json(d / "summary.json", {"dataset": {}}) and d, "(dataset)"),
    ],
)
def test_not_an_eval_folder_is_one_usage_error(tmp_path: Path, make: object, message: str) -> None:
    with pytest.raises(UsageError) as caught:
        show_eval(make(tmp_path))  # type: ignore[operator]
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_a_summary_with_a_bad_number_is_refused(eval_a: Path, tmp_path: Path) -> None:
    summary = json.loads((eval_a / "summary.json").read_text(encoding="utf-8"))
    summary["em"] = "0.5"
    write_json(tmp_path / "summary.json", summary)
    with pytest.raises(UsageError, match=r"summary.json: not a react-cli eval summary \(em\)"):
        load_eval(tmp_path)


def test_show_prints_the_summary_and_the_wrong_answers(eval_a: Path) -> None:
    out = printed(show_eval(eval_a))
    assert "EM           │ 0.3333" in out and "stop reasons │ finish 5, max_steps 1" in out
    assert "wrong answers" not in out
    out = printed(show_eval(eval_a, wrong=True))
    assert "wrong answers (4)" in out
    lines = [line for line in out.splitlines() if line.startswith("│ ")]
    wrong = [line.split("│")[1].strip() for line in lines if line.split("│")[1].strip().isdigit()]
    assert wrong == ["1", "3", "4", "5"]
    assert any("│ —" in line and "max_steps" in line for line in lines)  # no answer


def test_show_of_a_hostile_eval_prints_plain_text(eval_hostile: Path) -> None:
    out = printed(show_eval(eval_hostile, wrong=True), width=400)
    for escape in ESCAPES:
        assert escape not in out
    assert "[link](javascript:alert(3))" in out  # shown literally, not as markup
    assert "llm_error: HTTP 401 from the endpoint" in out
    skipped = sum(not valid for _, valid in EXTRA_LINES)  # a repeated row replaces, is valid
    assert f"{skipped} line(s) of results.jsonl skipped" in out


TABLE_1 = [  # the paper's order; a method it does not know last, its text as text
    ["CoT-SC", "6", "50.0%", "61.0%", "33.4%", "21.0", "4,200"],
    ["ReAct", "—", "33.3%", "—", "27.4%", "2.0", "—"],
    ["mine", "—", "<b>x</b>", "—", "—", "—", "—"],
]


def with_methods(eval_a: Path, folder: Path) -> Path:
    """``eval_a``'s summary in ``folder``, given a methods table (one method's text hostile)."""
    summary = json.loads((eval_a / "summary.json").read_text(encoding="utf-8"))
    summary["methods"] = {
        "react": {"em": 1 / 3, "avg_calls": 2, "nested": {"ignored": 1}},
        "cot-sc": {"n": 6, "em": 0.5, "f1": 0.61, "avg_calls": 21, "avg_tokens": 4200},
        "mine": {"em": "<b>x</b>"},
    }
    write_json(folder / "summary.json", summary)
    return folder


def test_show_adds_the_methods_table_when_the_summary_has_one(eval_a: Path, tmp_path: Path) -> None:
    out = printed(show_eval(with_methods(eval_a, tmp_path)))
    assert "methods (paper: ReAct, Table 1, PaLM-540B)" in out
    rows = [[cell.strip() for cell in line.split("│")[1:8]] for line in out.splitlines()]
    assert [row for row in rows if row and row[0] in ("CoT-SC", "ReAct", "mine")] == TABLE_1


def test_the_report_shows_the_methods_as_table_1(eval_a: Path, tmp_path: Path) -> None:
    page = eval_report(with_methods(eval_a, tmp_path))
    assert "<b>x</b>" not in page
    table = self_contained(page).find("h2", string="Methods").find_next("table")
    assert table.caption.string == "methods (paper: ReAct, Table 1, PaLM-540B)"
    headers = [th.string for th in table.thead.find_all("th")]
    assert headers == ["method", "n", "EM", "F1", "paper EM", "calls / q", "tokens / q"]
    rows = [[td.string for td in tr.find_all("td")] for tr in table.tbody.find_all("tr")]
    assert rows == TABLE_1


def test_the_report_shows_summary_charts_table_and_trajectories(report_a: str) -> None:
    soup = self_contained(report_a)
    cards = {card.contents[-1]: card.b.string for card in soup.find_all(class_="card")}
    assert cards["EM"] == "0.3333" and cards["F1"] == "0.5397" and cards["questions"] == "6"
    images = soup.find_all("img")
    assert [img["alt"] for img in images] == [
        "Chart: Why runs stopped",
        "Chart: Why answers failed",
        "Chart: Score by number of steps",
        "Chart: Latency per question",
    ]
    captions = [img.find_next("figcaption").string for img in images]
    assert captions[0] == (  # what it shows, in words: no title said twice
        "Questions per stop reason: finish, wrong 3, finish, right 2, max_steps 1."
    )
    assert all(
        caption.startswith(("Questions", "Share of each", "Mean score", "Latency of"))
        for caption in captions
    )
    svg = base64.b64decode(images[0]["src"][len(SVG_URI) :]).decode()
    assert "finish, right" in svg and "max_steps" in svg  # labels drawn as text
    green = svg.count("#1a7f37")
    assert green == 1  # one bar: the right answers' (issue 32: a wrong answer got a green bar)
    assert (cards["avg tokens"], cards["total tokens"]) == ("2,770", "16,623")  # reported
    facts = soup.find("h2", string="Run settings").find_next("dl")
    names, values = facts.find_all("dt"), facts.find_all("dd")
    settings = {dt.string: dd.string for dt, dd in zip(names, values, strict=True)}
    assert "False" not in settings.values() and settings.get("force answer") == "no"
    rows = soup.find(id="questions").tbody.find_all("tr")
    assert [row.td.string for row in rows] == [str(i) for i in range(6)]
    assert [i for i, row in enumerate(rows) if row.get("data-wrong")] == [1, 3, 4, 5]
    assert [i for i, row in enumerate(rows) if row.get("data-noanswer")] == [5]
    for n, row in enumerate(rows):
        target = soup.find(id=row.a["href"][1:])
        assert target["class"] == ["trajectory"] and target.h2.string == f"Question {n}"
        assert len(target.find_all("details", class_="step")) == A_ROWS[n][2]
        assert target.find(class_="question").string == Q[n]
    headers = [th.button.string for th in soup.find(id="questions").thead.find_all("th")]
    assert headers[:6] == ["#", "question", "gold", "answer", "EM", "F1"]
    assert [b["data-filter"] for b in soup.find_all("button", attrs={"data-filter": True})] == [
        "all",
        "wrong",
        "noanswer",
    ]


def test_token_cards_say_when_their_counts_are_estimates(tmp_path: Path) -> None:
    """An endpoint that reports no usage (llama.cpp streaming): the cards say estimated, as
    ``eval show`` and the progress bar do."""
    unreported = PerQuestion({}, default=[Reply(" ok\nAction 1: Finish[yes]", usage=False)])
    folder = run_eval(tmp_path / "run", unreported, HOTPOT)
    soup = self_contained(eval_report(folder))
    cards = {card.contents[-1]: card.b.string for card in soup.find_all(class_="card")}
    assert re.fullmatch(r"~[\d,]+ \(estimated\)", cards["avg tokens"]), cards
    assert re.fullmatch(r"~[\d,]+ \(estimated\)", cards["total tokens"]), cards


def test_the_report_is_the_same_bytes_for_the_same_eval(eval_a: Path, report_a: str) -> None:
    assert eval_report(eval_a) == report_a


def test_a_fever_report_scores_accuracy(eval_fever: Path) -> None:
    soup = self_contained(eval_report(eval_fever))
    cards = {card.contents[-1]: card.b.string for card in soup.find_all(class_="card")}
    assert "accuracy" in cards and "EM" not in cards
    headers = [th.button.string for th in soup.find(id="questions").thead.find_all("th")]
    assert "right" in headers and "F1" not in headers
    assert load_eval(eval_fever).kind is ScoreKind.ACCURACY


def test_a_hostile_eval_report_escapes_everything(eval_hostile: Path) -> None:
    page = eval_report(eval_hostile)
    for escape in ESCAPES:
        assert escape not in page
    soup = self_contained(page)
    assert len(soup.find_all("script")) == 1
    assert [img["src"][:26] for img in soup.find_all("img")] == [SVG_URI] * 4
    rows = soup.find(id="questions").tbody.find_all("tr")
    assert rows[0].a.string == clean(HOSTILE_QUESTIONS[0])
    assert rows[0].find_all("td")[3].string == "</td><script>alert(4)</script>"
    evil = soup.find(id="q1")
    assert clean(HOSTILE_LINE) in evil.get_text()  # the wiki page's text, as text
    assert "truncated JSON" in soup.find(id="q4").get_text()  # the broken trace's row


def test_a_report_without_matplotlib_is_one_usage_error(
    eval_a: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(UsageError) as caught:
        eval_report(eval_a)
    assert str(caught.value) == INSTALL_HINT
    assert "pip install 'react-cli[report]'" in INSTALL_HINT and "eval report" in INSTALL_HINT


def test_a_report_of_an_eval_without_rows_yet(eval_a: Path, tmp_path: Path) -> None:
    (tmp_path / "summary.json").write_bytes((eval_a / "summary.json").read_bytes())
    soup = self_contained(eval_report(tmp_path))
    assert soup.find_all("img") == [] and "No finished questions yet." in soup.get_text()
    assert soup.find(id="questions").tbody.find_all("tr") == []


def test_an_eval_stopped_before_its_first_result_shows_dashes(eval_a: Path, tmp_path: Path) -> None:
    """Its summary has no scores or averages yet (null, as the eval writes them)."""
    summary = json.loads((eval_a / "summary.json").read_text(encoding="utf-8"))
    empty = dict.fromkeys(("em", "f1", "avg_steps", "avg_tokens", "avg_latency_s"))
    summary.update(empty, n=0, total_tokens=0, stop_reasons={}, status="interrupted")
    write_json(tmp_path / "summary.json", summary)
    out = printed(show_eval(tmp_path, wrong=True))
    assert "EM           │ —" in out and "avg steps    │ —" in out and "no wrong answers" in out
    cards = self_contained(eval_report(tmp_path)).find_all(class_="card")
    shown = {card.contents[-1]: card.b.get_text() for card in cards}
    assert shown["EM"] == shown["avg latency"] == "—" and shown["questions"] == "0"


def test_show_output_goes_through_a_plain_console(eval_hostile: Path) -> None:
    console = Console(file=io.StringIO(), markup=True, force_terminal=True, width=300)
    for part in show_eval(eval_hostile, wrong=True):
        console.print(part)  # even a markup-enabled console prints the text as is
    out = console.file.getvalue()  # type: ignore[attr-defined]
    assert "[link](javascript:alert(3))" in out and "\x1b]8;;https" not in out
