"""``react-cli distill`` (issue 35) against scripted endpoints over a ZIM archive of the HotpotQA
distractor paragraphs: which runs the rules keep and why, the prompt file read back by ``eval
--prompt`` with its exemplars verbatim in the first request (both protocols), the leakage
refusal, the candidate search answered from the cache the second time, and both fine-tuning
formats read back."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from eval_fakes import PerQuestion, finish, question_of, search
from fake_openai import FakeOpenAI, Reply
from inproc import Runner

from react_cli.core.method import Method
from react_cli.core.records import ProtocolName
from react_cli.distill.finetune import RecordFormat, read_records
from react_cli.eval.matrix.record import Axes, MatrixRecord
from react_cli.eval.summary import EvalStatus
from react_cli.loop.prompts import load_prompt, question_key
from react_cli.wiki.zimbuild import build_zim

HOTPOT = Path(__file__).resolve().parents[1] / "fixtures" / "hotpotqa" / "distractor_first10.json"
ROWS = json.loads(HOTPOT.read_text(encoding="utf-8"))
Q = [row["question"] for row in ROWS]


def steps(*texts: str) -> list[str | Reply]:
    return list(texts)


TRAIN: dict[str, list[str | Reply]] = {
    Q[0]: steps(search("Scott Derrickson"), search("Ed Wood", 2), finish("yes", 3)),
    Q[1]: steps(
        search("Kiss and Tell (1945 film)"),
        search("Shirley Temple", 2),
        finish("Chief of Protocol", 3),
    ),
    Q[2]: steps(search("Animorphs"), finish("Goosebumps", 2)),  # wrong
    Q[3]: steps(  # a repeated action
        search("Esma Sultan Mansion"),
        search("Laleli Mosque", 2),
        search("Laleli Mosque", 3),
        finish("no", 4),
    ),
    Q[4]: steps(  # a parse error first
        " hmm",
        search("Adriana Trigiani", 2),
        search("Big Stone Gap (film)", 3),
        finish("Greenwich Village, New York City", 4),
    ),
    Q[5]: steps(search("2014 S/S"), finish("YG Entertainment", 2)),  # half the gold pages
    Q[6]: steps(
        search("Eenasul Fateh"), search("Management consulting", 2), finish("Eenasul Fateh", 3)
    ),
    Q[7]: steps(
        search("Lewiston Maineiacs"),
        search("Androscoggin Bank Colisée", 2),
        finish("3,677 seated", 3),
    ),
}
LONGER = {  # question 0 again, a step longer: the shorter run is kept
    Q[0]: steps(
        search("Scott Derrickson"),
        " I need more.\nAction 2: Lookup[American]",
        search("Ed Wood", 3),
        finish("yes", 4),
    )
}
DEV = {  # the two questions the train folders do not hold
    Q[8]: steps(
        search("Annie Morton"), search("Terry Richardson", 2), finish("Terry Richardson", 3)
    ),
    Q[9]: steps(search("Local H"), search("For Against", 2), finish("yes", 3)),
}


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("zim") / "distractor.zim"
    build_zim(HOTPOT, out)
    return out


def run(cli: Runner, llm: FakeOpenAI, archive: Path, *args: str, api: str = "completions") -> Any:
    return cli(
        [*args, "-m", "m", "--api", api, "--wiki", f"zim:{archive}"],
        OPENAI_BASE_URL=llm.url,
    )


@pytest.fixture
def train(cli: Runner, archive: Path, tmp_path: Path) -> tuple[Path, Path]:
    """Two eval folders of the first 8 questions: the scripts above, and one longer run."""
    with FakeOpenAI(PerQuestion({**TRAIN, **LONGER})) as llm:
        longer = tmp_path / "longer"
        done = run(cli, llm, archive, "eval", str(HOTPOT), "--limit", "1", "--out", str(longer))
        assert done.code == 0, done.stderr
    with FakeOpenAI(PerQuestion(TRAIN)) as llm:
        folder = tmp_path / "train"
        done = run(cli, llm, archive, "eval", str(HOTPOT), "--limit", "8", "--out", str(folder))
        assert done.code == 0, done.stderr
    return folder, longer


def test_the_rules_keep_clean_right_shortest_runs_and_say_why(
    cli: Runner, train: tuple[Path, Path], tmp_path: Path
) -> None:
    folder, longer = train
    out = tmp_path / "p.txt"
    done = cli(["distill", str(longer), str(folder), "--out", str(out), "--explain"])
    assert done.code == 0, done.stderr
    lines = {line.split(": ", 2)[1]: line for line in done.stderr.splitlines() if ": " in line}
    reasons = {
        int(key.rsplit(" ", 1)[1]): line
        for key, line in lines.items()
        if str(folder) in key and key.startswith(str(folder))
    }
    assert reasons[0].startswith("kept")
    assert reasons[1].startswith("kept") and reasons[6].startswith("kept")
    assert "wrong answer" in reasons[2]
    assert "stopped by repeated_action" in reasons[3] or "repeated action" in reasons[3]
    assert "parse error at step 1" in reasons[4]
    assert "page recall 0.5" in reasons[5]
    left = next(line for line in done.stderr.splitlines() if str(longer) + " row 0" in line)
    assert left.startswith("left") and "a shorter run of the same question" in left
    template = load_prompt(str(out))
    assert question_key(Q[0]) in template.exemplars and question_key(Q[2]) not in template.exemplars
    assert len([key for key in template.exemplars if key.startswith("sha256:")]) == 4
    sources = [value for key, value in template.provenance if key == "source"]
    assert len(sources) == 4 and all("sha256 " in s and str(folder) in s for s in sources)
    assert "Solve a question answering task" in template.text  # the instruction kept


def test_sentence_recall_and_the_examples_count(
    cli: Runner, train: tuple[Path, Path], tmp_path: Path
) -> None:
    folder, _ = train
    out = tmp_path / "p.txt"
    done = cli(["distill", str(folder), "--out", str(out), "--examples", "2", "--explain"])
    assert done.code == 0, done.stderr
    assert done.stderr.count("kept (chosen)") == 2
    assert done.stderr.count("kept (not chosen)") == 2 and "2 others chosen" in done.stderr
    chosen = load_prompt(str(out)).exemplars
    assert len([key for key in chosen if key.startswith("sha256:")]) == 2
    assert question_key(Q[0]) in chosen  # the yes/no comparison beside a bridge question
    none = cli(["distill", str(folder), "--out", str(out), "--min-sentence-recall", "1.1"])
    assert none.code == 2 and "--min-sentence-recall" in none.stderr
    results = folder / "results.jsonl"  # question 1's run shown half its gold sentences
    rows = [json.loads(line) for line in results.read_text(encoding="utf-8").splitlines()]
    for row in rows:
        if row["index"] == 1:
            row["evidence"]["sentence_recall"] = 0.5
    results.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    args = ["distill", str(folder), "--out", str(out), "--explain"]
    loose = cli(args)
    assert loose.code == 0 and question_key(Q[1]) in load_prompt(str(out)).exemplars
    strict = cli([*args, "--min-sentence-recall", "1"])
    assert strict.code == 0, strict.stderr
    assert "row 1: " in strict.stderr and "sentence recall 0.5 < 1" in strict.stderr
    assert question_key(Q[1]) not in load_prompt(str(out)).exemplars


def test_the_prompt_runs_as_is_its_exemplars_verbatim_and_leakage_refused(
    cli: Runner, train: tuple[Path, Path], archive: Path, tmp_path: Path
) -> None:
    folder, _ = train
    out = tmp_path / "p.txt"
    assert cli(["distill", str(folder), "--out", str(out)]).code == 0
    text = out.read_text(encoding="utf-8")
    block = text[text.index("Question: " + Q[0]) : text.index("Action 3: Finish[yes]") + 21]
    assert "Observation 1: " in block and "Thought 2: I need to search Ed Wood." in block
    with FakeOpenAI(PerQuestion(DEV)) as llm:
        done = run(
            cli,
            llm,
            archive,
            "eval",
            str(HOTPOT),
            "--offset",
            "8",
            "--prompt",
            str(out),
            "--out",
            str(tmp_path / "dev"),
        )
        assert done.code == 0, done.stderr
        first = llm.requests[0].json["prompt"]
        assert block in first and question_of(llm.requests[0].json) in (Q[8], Q[9])
        refused = run(
            cli,
            llm,
            archive,
            "eval",
            str(HOTPOT),
            "--prompt",
            str(out),
            "--out",
            str(tmp_path / "all"),
        )
        assert refused.code == 2 and "as exemplars" in refused.stderr
        assert "--allow-overlap" in refused.stderr
        allowed = run(
            cli,
            llm,
            archive,
            "eval",
            str(HOTPOT),
            "--limit",
            "2",
            "--prompt",
            str(out),
            "--out",
            str(tmp_path / "allowed"),
            "--allow-overlap",
        )
        assert allowed.code == 0, allowed.stderr
    summary = json.loads((tmp_path / "allowed" / "summary.json").read_text(encoding="utf-8"))
    assert summary["config"]["prompt_overlap"] == [question_key(Q[0]), question_key(Q[1])]


def _tools_endpoint(body: dict[str, Any]) -> Reply:
    """The tools protocol's replies to the dev questions: each question's script as calls."""
    messages = body["messages"]
    last = max(
        i for i, m in enumerate(messages) if m["role"] == "user" and "Question" in m["content"]
    )
    question = messages[last]["content"].split(": ", 1)[1]
    made = sum(m["role"] == "assistant" for m in messages[last:])
    script = DEV[question]
    text = str(script[min(made, len(script) - 1)])
    thought, _, action = text.partition("\nAction ")
    name, _, argument = action.split(": ", 1)[1].partition("[")
    key = "answer" if name == "Finish" else "entity"
    call = {"name": name.lower(), "arguments": json.dumps({key: argument.rstrip("]")})}
    return Reply(text=thought.strip(), tool_calls=[call])


def test_a_tools_prompt_sends_its_examples_as_messages(
    cli: Runner, train: tuple[Path, Path], archive: Path, tmp_path: Path
) -> None:
    folder, _ = train
    out = tmp_path / "tools.txt"
    done = cli(["distill", str(folder), "--out", str(out), "--protocol", "tools"])
    assert done.code == 0, done.stderr
    template = load_prompt(str(out))
    assert template.examples[0] == {"role": "user", "content": f"Question: {Q[0]}"}
    with FakeOpenAI(_tools_endpoint) as llm:
        done = run(
            cli,
            llm,
            archive,
            "eval",
            str(HOTPOT),
            "--offset",
            "8",
            "--protocol",
            "tools",
            "--prompt",
            str(out),
            "--out",
            str(tmp_path / "dev"),
            api="chat",
        )
        assert done.code == 0, done.stderr
        messages = llm.requests[0].json["messages"]
    assert messages[0]["role"] == "system" and '{"role"' not in messages[0]["content"]
    assert messages[1 : 1 + len(template.examples)] == list(template.examples)
    calls = [m for m in messages if m.get("tool_calls")]
    assert calls[0]["tool_calls"][0]["function"]["name"] == "search"
    rows = [
        json.loads(line) for line in (tmp_path / "dev" / "results.jsonl").read_text().splitlines()
    ]
    assert sorted(row["em"] for row in rows) == [1.0, 1.0]


def test_candidate_search_scores_each_set_and_repeats_come_from_the_cache(
    cli: Runner, train: tuple[Path, Path], archive: Path, tmp_path: Path
) -> None:
    folder, _ = train
    out = tmp_path / "best.txt"
    args = [
        "distill",
        str(folder),
        "--out",
        str(out),
        "--candidates",
        "3",
        "--examples",
        "2",
        "--dev",
        f"{HOTPOT}@8:10",
    ]
    with FakeOpenAI(PerQuestion(DEV)) as llm:
        done = run(cli, llm, archive, *args)
        assert done.code == 0, done.stderr
        first = len(llm.requests)
        assert done.stderr.count("EM 1.000 on") == 3 - done.stderr.count("the same exemplars")
        assert "kept candidate 1" in done.stderr
        (tmp_path / "best.txt.candidates").rename(tmp_path / "old")  # scored anew, same prompts
        again = run(cli, llm, archive, *args)
        assert again.code == 0, again.stderr
        assert len(llm.requests) == first  # every call answered from the cache
    assert load_prompt(str(out)).exemplars


@pytest.mark.parametrize("form", ["openai-chat", "sharegpt"])
@pytest.mark.parametrize("protocol", ["text", "tools"])
def test_fine_tuning_records_read_back(
    cli: Runner, train: tuple[Path, Path], tmp_path: Path, form: str, protocol: str
) -> None:
    folder, _ = train
    out = tmp_path / "ft.jsonl"
    secret = "sk-distill-test-secret-1234567890"
    args = ["distill", str(folder), "--format", form, "--out", str(out), "--protocol", protocol]
    done = cli([*args, "--split", "0.75"], OPENAI_API_KEY=secret)
    assert done.code == 0, done.stderr
    train_file, valid_file = tmp_path / "ft-train.jsonl", tmp_path / "ft-validation.jsonl"
    made = read_records(train_file.read_text(encoding="utf-8"), RecordFormat(form))
    held = read_records(valid_file.read_text(encoding="utf-8"), RecordFormat(form))
    assert (len(made), len(held)) == (3, 1)
    record = next(r for r in made + held if Q[0] in json.dumps(r))
    if form == "openai-chat":
        roles = [m["role"] for m in record["messages"]]
        assert roles[:2] == ["system", "user"] and roles[-1] == "assistant"
        assert ("tool" in roles) is (protocol == "tools")
        if protocol == "text":
            assert record["messages"][2]["content"].startswith("Thought 1: I need to search")
    else:
        turns = [t["from"] for t in record["conversations"]]
        assert turns[0] == "human" and ("function_call" in turns) is (protocol == "tools")
    whole = cli([*args], OPENAI_API_KEY=secret)
    assert whole.code == 0 and len(out.read_text().splitlines()) == 4
    assert secret not in out.read_text()


def test_a_folder_that_points_elsewhere_or_holds_a_broken_trace_is_judged_not_followed(
    cli: Runner, train: tuple[Path, Path], tmp_path: Path
) -> None:
    folder, _ = train
    results = folder / "results.jsonl"
    rows = [json.loads(line) for line in results.read_text(encoding="utf-8").splitlines()]
    outside = tmp_path / "outside.json"
    outside.write_text("{}", encoding="utf-8")
    for row in rows:
        if row["index"] == 0:
            row["trace"] = "../outside.json"
        if row["index"] == 1:
            (folder / row["trace"]).write_text('{"version": 9, "steps": "no"', encoding="utf-8")
    results.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    done = cli(["distill", str(folder), "--out", str(tmp_path / "p.txt"), "--explain"])
    assert done.code == 0, done.stderr
    assert "row 0: " in done.stderr and "its trace is outside the eval folder" in done.stderr
    assert "row 1: " in done.stderr and "trace unreadable" in done.stderr
    empty = cli(["distill", str(tmp_path), "--out", str(tmp_path / "q.txt")])
    assert empty.code == 2 and "not an eval folder" in empty.stderr


def test_a_matrix_gives_its_cells_and_a_cell_itself(
    cli: Runner, train: tuple[Path, Path], tmp_path: Path
) -> None:
    """``distill DIR`` of a matrix reads every cell that started, ``DIR@N`` one of them: the
    same exemplars as the cells' folders given by hand."""
    folder, longer = train
    matrix = tmp_path / "m"
    axes = Axes(("m",), (Method.REACT,), (ProtocolName.TEXT, ProtocolName.TOOLS))
    cells = axes.cells()
    for cell, source in zip(cells, (longer, folder), strict=True):
        shutil.copytree(source, cell.folder(matrix))
    unstarted = Axes(("n",), (Method.REACT,), (ProtocolName.TEXT,)).cells(cells)[-1]
    dataset = json.loads((folder / "summary.json").read_text(encoding="utf-8"))["dataset"]
    made = MatrixRecord(axes, (*cells, unstarted), dataset, EvalStatus.FINISHED, "t", "t", 1.0)
    made.write(matrix)
    by_hand = tmp_path / "by-hand.txt"
    assert cli(["distill", str(longer), str(folder), "--out", str(by_hand)]).code == 0
    whole = tmp_path / "whole.txt"
    done = cli(["distill", str(matrix), "--out", str(whole)])
    assert done.code == 0, done.stderr
    assert load_prompt(str(whole)).exemplars == load_prompt(str(by_hand)).exemplars
    one = tmp_path / "one.txt"
    done = cli(["distill", f"{matrix}@2", "--out", str(one)])
    assert done.code == 0, done.stderr
    sources = [value for key, value in load_prompt(str(one)).provenance if key == "source"]
    assert sources and all(str(cells[1].folder(matrix)) in source for source in sources)
