"""Tools from Python: ``@react_cli.tool`` functions of a file (``--tools-from``) or of an
installed package (the ``react_cli.tools`` entry points), through ``ask`` in both protocols,
the trace, ``replay --rerun`` (offline: the file gone) and ``--live-tools``, and ``react-cli
tools``; the example calculator of ``examples/tools/calculator.py`` among them."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from eval_fakes import PerQuestion
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, Reply, scripted
from hostile import cli_fuzz
from hypothesis import given
from hypothesis import strategies as st
from inproc import Runner, actions, edit_json, one_error_line, servers_env, sourceless
from tool_fakes import tool_call

from react_cli.infra.redaction import Redactor
from react_cli.infra.untrusted import plain
from react_cli.loop.prompts import load_prompt
from react_cli.loop.text.protocol import tool_lines
from react_cli.tools.output import observed
from react_cli.tools.paper import PAPER_TOOLS

ROOT = Path(__file__).resolve().parents[2]
CALCULATOR = ROOT / "examples" / "tools" / "calculator.py"
QUESTION = "What is six times seven?"
TOOLS = '''
import time

from react_cli import tool


@tool
def concat(a: str, b: str = "") -> str:
    """Join two texts."""
    return a + b


@tool(name="Divide")
def one_over(x: str) -> str:
    """Divide 1 by x."""
    return str(1 / float(x))


@tool
def slow(x: str) -> str:
    """Take two seconds."""
    time.sleep(2)
    return "late"


@tool
def huge(x: str) -> int:
    """Say a lot."""
    return "word \\x1b[31m" * 2_000_000
'''


@pytest.fixture
def calculator(tmp_path: Path) -> Path:
    """A copy of the example calculator, which a test may delete."""
    return Path(shutil.copy(CALCULATOR, tmp_path / "calculator.py"))


@pytest.fixture
def tools_file(tmp_path: Path) -> Path:
    path = tmp_path / "my_tools.py"
    path.write_text(TOOLS, encoding="utf-8")
    return path


def test_importing_the_decorator_imports_nothing_else_of_react_cli() -> None:
    code = (
        "import sys; from react_cli import tool; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('react_cli', 'requests', 'rich', 'typer', 'mcp', 'bs4')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['react_cli']"


@pytest.mark.parametrize(
    ("prompt", "method", "cue"),
    [
        ("hotpotqa", "react", "Thought 1:"),
        ("hotpotqa-act", "act", "Action 1:"),
        ("fever", "react", "Thought 1:"),
    ],
)
def test_with_only_wikipedia_s_tools_the_paper_prompts_are_sent_verbatim(
    cli: Runner, wiki: FakeMediaWiki, llm: FakeOpenAI, prompt: str, method: str, cue: str
) -> None:
    llm.requests.clear()
    result = cli.ask(llm, wiki, "--prompt", prompt, "--method", method, question=QUESTION)
    assert result.code == 0, result.stderr
    sent = llm.requests[0].json["messages"][0]["content"]
    assert sent == load_prompt(prompt).prefix(QUESTION) + cue


def test_the_calculator_through_ask_the_trace_and_replay(
    cli: Runner, wiki: FakeMediaWiki, calculator: Path, tmp_path: Path
) -> None:
    trace = tmp_path / "run.json"
    script = (" I should multiply.\nAction 1: calculate[6 * 7]", " It is 42.\nAction 2: Finish[42]")
    with FakeOpenAI(scripted(*script)) as llm:
        args = ("--tools-from", str(calculator), "--trace", str(trace))
        result = cli.ask(llm, wiki, *args, question=QUESTION)
    assert (result.code, result.stdout) == (0, "42\n"), result.stderr
    first, second = (request.json["messages"][0]["content"] for request in llm.requests)
    paper = load_prompt("hotpotqa").prefix(QUESTION)  # the paper's instruction, its list
    assert tool_lines(PAPER_TOOLS) in paper and tool_lines(PAPER_TOOLS) not in first
    assert (
        first
        == paper.replace("three types", "four types").replace(
            "(3) Finish[answer], which returns the answer and finishes the task.",
            "(3) Calculate[expression]: Evaluate an arithmetic expression, e.g. 2 * (3 + 4) or "
            "0.17 * 2340.\n(4) Finish[answer], which returns the answer and finishes the task.",
        )
        + "Thought 1:"
    )
    assert second.endswith("Action 1: calculate[6 * 7]\nObservation 1: 42\nThought 2:")
    recorded = json.loads(trace.read_text(encoding="utf-8"))
    called = {"name": "Calculate", "argument": "6 * 7", "id": None}
    assert recorded["steps"][0]["actions"][0]["call"] == called
    spec = recorded["config"]["tools"][2]
    digest = hashlib.sha256(calculator.read_bytes()).hexdigest()
    assert spec["origin"] == {"kind": "file", "path": str(calculator), "sha256": digest}
    assert recorded["config"]["tools"][0]["origin"] == {"kind": "builtin"}

    calculator.unlink()  # replay never imports the file: the recording answers
    rerun = cli(["replay", "--rerun", str(trace)])
    assert (rerun.code, rerun.stdout) == (0, "42\n"), rerun.stderr

    gone = cli(["replay", "--rerun", "--live-tools", str(trace)], **_wiki_env(wiki))
    assert gone.code == 2
    assert f"its tool Calculate (file {calculator}) is not on: give --tools-from {calculator}" in (
        one_error_line(gone.stderr)
    )
    calculator.write_text(CALCULATOR.read_text(encoding="utf-8") + "\n# changed\n", "utf-8")
    live = cli(
        ["replay", "--rerun", "--live-tools", "--tools-from", str(calculator), str(trace)],
        **_wiki_env(wiki),
    )
    assert (live.code, live.stdout) == (0, "42\n"), live.stderr
    assert f"warning: {calculator} changed since the run" in live.stderr


def _two_questions(tmp_path: Path) -> tuple[Path, PerQuestion]:
    dataset = tmp_path / "two.jsonl"
    rows = [{"question": f"What is {n} times seven?", "answer": str(7 * n)} for n in (6, 2)]
    dataset.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    script: dict[str, list[str | Reply]] = {
        row["question"]: [
            f" I multiply.\nAction 1: Calculate[{row['answer']} / 7 * 7]",
            f" Done.\nAction 2: Finish[{row['answer']}]",
        ]
        for row in rows
    }
    return dataset, PerQuestion(script)


def test_a_resumed_eval_is_given_its_tool_files_again_and_checks_them_by_their_text(
    cli: Runner, wiki: FakeMediaWiki, calculator: Path, tmp_path: Path
) -> None:
    """``--resume DIR`` loads no file the folder names: without ``--tools-from`` it is
    refused, saying how to resume; the same text under another name resumes, other text is
    refused; a resume that turns Search and Lookup off would mix two experiments."""
    dataset, script = _two_questions(tmp_path)
    out = tmp_path / "eval"
    moved = Path(shutil.copy(calculator, tmp_path / "same_calculator.py"))
    changed = tmp_path / "changed.py"
    changed.write_text(calculator.read_text(encoding="utf-8") + "\n# changed\n", "utf-8")
    digest = hashlib.sha256(calculator.read_bytes()).hexdigest()
    with FakeOpenAI(script) as llm:
        args = ["eval", str(dataset), "--out", str(out), "--limit", "1"]
        first = cli([*args, "--tools-from", str(calculator)], **servers_env(llm, wiki))
        assert first.code == 0, first.stderr
        summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
        assert summary["config"]["tools_from"] == [str(calculator)]
        assert summary["config"]["tool_files"] == [{"path": str(calculator), "sha256": digest}]
        asked = len(llm.requests)
        alone = cli(["eval", "--resume", str(out), "--limit", "2"], **servers_env(llm, wiki))
        assert alone.code == 2 and len(llm.requests) == asked
        line = one_error_line(alone.stderr)
        assert f"it ran {calculator} (sha256 {digest[:12]}), not given now" in line
        assert line.endswith(
            f"give them yourself if you trust them: react-cli eval --resume {out} --tools-from "
            f"{calculator}; or choose a new --out"
        )
        other = ["eval", "--resume", str(out), "--tools-from", str(changed)]
        refused = cli(other, **servers_env(llm, wiki))
        assert refused.code == 2 and len(llm.requests) == asked
        assert f"{changed} (sha256 " in one_error_line(refused.stderr)
        assert "given now, which it did not run" in one_error_line(refused.stderr)
        wiki_off = cli(
            [*other[:3], "--tools-from", str(moved), "--no-wiki"], **servers_env(llm, wiki)
        )
        assert wiki_off.code == 2
        assert "another Search and Lookup setting (on ≠ off)" in one_error_line(wiki_off.stderr)
        again = ["eval", "--resume", str(out), "--limit", "2", "--tools-from", str(moved)]
        resumed = cli(again, **servers_env(llm, wiki))
    assert resumed.code == 0, resumed.stderr
    done = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert [row["answer"] for row in done] == ["42", "14"] and all(row["em"] for row in done)
    trace = json.loads((out / done[1]["trace"]).read_text(encoding="utf-8"))
    answered = trace["steps"][0]["actions"][0]["observation"]
    assert answered == "14"  # the calculator answered, not Lookup
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["config"]["tool_files"] == [{"path": str(moved), "sha256": digest}]


EVIL = """
from pathlib import Path
from react_cli import tool

Path({marker!r}).write_text("ran")


@tool
def calculate(expression: str) -> str:
    \"\"\"Evaluate.\"\"\"
    return "0"
"""


@pytest.mark.parametrize("named", ["relative", "absolute", "recorded before hashes"])
def test_an_eval_folder_you_were_handed_runs_no_code_it_names(
    cli: Runner,
    wiki: FakeMediaWiki,
    calculator: Path,
    tmp_path: Path,
    named: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A folder whose summary names a tools file (beside it, or anywhere) is resumed without
    a line of it running: ``--resume`` alone is refused, naming the file and how to resume."""
    dataset, script = _two_questions(tmp_path)
    out = tmp_path / "handed"
    marker = tmp_path / "it ran"
    evil = out / "evil.py"
    with FakeOpenAI(script) as llm:
        args = ["eval", str(dataset), "--out", str(out), "--limit", "1"]
        assert cli([*args, "--tools-from", str(calculator)], **servers_env(llm, wiki)).code == 0
        evil.write_text(EVIL.format(marker=str(marker)), encoding="utf-8")
        path = "evil.py" if named == "relative" else str(evil)
        sha = hashlib.sha256(evil.read_bytes()).hexdigest()

        def plant(document: dict[str, Any]) -> None:
            document["config"]["tools_from"] = [path]
            document["config"]["tool_files"] = [{"path": path, "sha256": sha}]
            if named == "recorded before hashes":
                del document["config"]["tool_files"]

        edit_json(out / "summary.json", plant)
        asked = len(llm.requests)
        for cwd in (tmp_path, out):  # "evil.py" is the folder's own from inside it
            monkeypatch.chdir(cwd)
            result = cli(["eval", "--resume", str(out)], **servers_env(llm, wiki))
            assert result.code == 2 and len(llm.requests) == asked, result.stderr
            line = one_error_line(result.stderr)
            assert f"it ran {path}" in line and "an eval folder runs no code it names" in line
    assert not marker.exists()


def _wiki_env(wiki: FakeMediaWiki) -> dict[str, str]:
    return {"REACT_CLI_WIKI": wiki.url, "REACT_CLI_MODEL": "test-model"}


def test_the_tools_protocol_declares_calls_and_contains_a_file_tools(
    cli: Runner, wiki: FakeMediaWiki, tools_file: Path
) -> None:
    calls = [
        ("concat", {"a": "x", "b": "y"}),
        ("divide", {"x": "0"}),
        ("huge", {"x": "1"}),
        ("slow", {"x": "1"}),
        ("finish", {"answer": "xy"}),
    ]
    replies = [Reply(text="", tool_calls=[tool_call(name, **args)]) for name, args in calls]
    cli.config(max_observation_chars=80)
    with FakeOpenAI(replies) as llm:
        args = ("--protocol", "tools", "--tools-from", str(tools_file), "--tool-timeout", "0.1")
        result = cli.ask(llm, wiki, *args, "--no-wiki", question=QUESTION)
    assert (result.code, result.stdout) == (0, "xy\n"), result.stderr
    declared = {t["function"]["name"]: t["function"] for t in llm.requests[0].json["tools"]}
    assert list(declared) == ["concat", "divide", "slow", "huge", "finish"]  # --no-wiki
    assert declared["concat"]["parameters"] == {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "string", "default": ""}},
        "required": ["a"],
    }
    assert declared["divide"]["description"] == "Divide 1 by x."
    steps = actions(cli.trace())
    observations = [step["observation"] for step in steps[:4]]
    assert observations[:2] == ["xy", "Divide failed: ZeroDivisionError: float division by zero"]
    assert observations[2].startswith("word word")
    assert observations[2].endswith("\n… [19,999,921 more characters]"), observations[2]
    assert (
        len(observations[2].split("\n")[0]) <= 80
        and "\x1b" not in observations[2]
        and "[31m" not in observations[2]
    )
    assert observations[3] == "Slow failed: no answer within 0.1 s"
    assert [step.get("error") for step in steps[:4]] == [
        None,
        "ZeroDivisionError: float division by zero",
        None,
        "no answer within 0.1 s",
    ]


def test_the_text_protocol_takes_a_json_object_for_several_arguments(
    cli: Runner, wiki: FakeMediaWiki, tools_file: Path
) -> None:
    script = (
        " Join them.\nAction 1: Concat[x, y]",
        ' Right.\nAction 2: CONCAT[{"b": "y", "a": "x"}]',
        " Done.\nAction 3: Finish[xy]",
    )
    with FakeOpenAI(scripted(*script)) as llm:
        result = cli.ask(llm, wiki, "--tools-from", str(tools_file), question=QUESTION)
    assert (result.code, result.stdout) == (0, "xy\n"), result.stderr
    prompt = llm.requests[0].json["messages"][0]["content"]
    assert "Action can be seven types" in prompt
    assert (
        '(3) Concat[{"a": "...", "b": "..."}]: Join two texts. Parameters: a (string); '
        'b (string, optional, default "").'
    ) in prompt
    trace = cli.trace()
    steps = actions(trace)
    observation = steps[0]["observation"]
    assert observation.startswith("Invalid action: Concat takes a JSON object (")
    assert (
        observation.endswith('): write Concat[{"a": "..."}].')
        and trace["steps"][0]["error"] == "parse_error"
    )
    assert steps[1]["call"] == {"name": "Concat", "argument": '{"a": "x", "b": "y"}', "id": None}
    assert steps[1]["observation"] == "xy"


BAD_FILES = {
    "syntax": ("def f(:\n", "line 1: "),
    "raises": ("raise RuntimeError('no network')\n", "running it failed: RuntimeError: no network"),
    "exits": ("import sys\nsys.exit(3)\n", "running it failed: SystemExit: 3"),
    "none": ("x = 1\n", "it defines no tool"),
    "no-docstring": (
        "from react_cli import tool\n@tool\ndef f(x: str): return x\n",
        "f has no docstring",
    ),
    "list": (
        "from react_cli import tool\n@tool\ndef f(n: list):\n    'Doc.'\n",
        "f's argument n is list: a tool's arguments are str, int, float, bool or a Literal[...]",
    ),
    "no-argument": (
        "from react_cli import tool\n@tool\ndef f():\n    'Doc.'\n",
        "f takes no argument",
    ),
    "varargs": (
        "from react_cli import tool\n@tool\ndef f(*x):\n    'Doc.'\n",
        "must be a named one",
    ),
    "bad-name": (
        "from react_cli import tool\n@tool(name='a b[')\ndef f(x):\n    'Doc.'\n",
        "the tool name 'a b[' is not a letter",
    ),
    "clash": (
        "from react_cli import tool\n@tool\ndef search(x):\n    'Doc.'\n",
        "the tool Search has the name of Wikipedia's tools (--no-wiki turns them off)",
    ),
}


@pytest.mark.parametrize("kind", BAD_FILES)
def test_a_file_that_cannot_give_tools_is_one_error_line(
    cli: Runner, tmp_path: Path, kind: str
) -> None:
    source, said = BAD_FILES[kind]
    path = tmp_path / f"{kind}.py"
    path.write_text(source, encoding="utf-8")
    result = cli(["tools", "--tools-from", str(path)])
    assert result.code == 2 and said in one_error_line(result.stderr), result.stderr
    assert str(path) in result.stderr


def test_a_missing_file_and_two_files_with_one_name(cli: Runner, calculator: Path) -> None:
    missing = cli(["tools", "--tools-from", "nowhere.py"])
    said = f"--tools-from {Path.cwd() / 'nowhere.py'}: no such file"  # absolute once resolved
    assert missing.code == 2 and said in missing.stderr
    twice = cli(["tools", "--tools-from", str(calculator), "--tools-from", str(calculator)])
    assert twice.code == 2
    assert f"the tool Calculate has the name of file {calculator}" in one_error_line(twice.stderr)


def test_tools_lists_what_a_run_would_have(cli: Runner, calculator: Path, tools_file: Path) -> None:
    shown = cli(["tools", "--tools-from", str(calculator)])
    assert shown.code == 0, shown.stderr
    rows = [line.split("  ")[0] for line in shown.stdout.splitlines()]
    assert rows == ["Search[entity]", "Lookup[keyword]", "Calculate[expression]", "Finish[answer]"]
    assert f"file {calculator}" in shown.stdout.splitlines()[2]
    cli.config(tools_from=[str(tools_file)], wiki_tools=False)  # the config file says it too
    listed = json.loads(cli(["tools", "--json"]).stdout)
    assert [tool["name"] for tool in listed] == ["Concat", "Divide", "Slow", "Huge", "Finish"]
    assert listed[0]["schema"]["required"] == ["a"] and listed[0]["function"] == "concat"
    config = json.loads(cli(["config", "--json"]).stdout)["settings"]
    assert config["tools_from"] == {"value": [str(tools_file)], "from": "file"}
    assert config["wiki_tools"] == {"value": False, "from": "file"}


def test_the_tools_of_an_installed_package(
    cli: Runner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    (site / "calc_pkg").mkdir(parents=True)
    (site / "calc_pkg" / "__init__.py").write_text(
        "from react_cli import tool\n\n@tool\ndef double(x: str) -> str:\n"
        "    'Double a number.'\n    return str(2 * float(x))\n",
        encoding="utf-8",
    )
    info = site / "calc_pkg-1.4.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: calc-pkg\nVersion: 1.4\n")
    (info / "entry_points.txt").write_text("[react_cli.tools]\ncalc = calc_pkg\n")
    monkeypatch.syspath_prepend(str(site))
    listed = json.loads(cli(["tools", "--json"]).stdout)
    assert listed[2]["name"] == "Double"
    assert listed[2]["origin"] == {
        "kind": "package",
        "package": "calc-pkg",
        "version": "1.4",
        "entry_point": "calc",
    }
    shutil.rmtree(info)  # upgraded to a version whose entry point names no module
    info = site / "calc_pkg-1.5.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: calc-pkg\nVersion: 1.5\n")
    (info / "entry_points.txt").write_text("[react_cli.tools]\ncalc = calc_pkg.missing\n")
    broken = cli(["tools"])
    assert broken.code == 2
    assert "entry point calc (react_cli.tools) of package calc-pkg: loading it failed" in (
        one_error_line(broken.stderr)
    )


def test_no_wiki_lists_only_the_other_tools_in_the_paper_prompt(
    cli: Runner, wiki: FakeMediaWiki, calculator: Path
) -> None:
    script = (" Search it.\nAction 1: Search[Paris]", " Fine.\nAction 2: Finish[Paris]")
    with FakeOpenAI(scripted(*script)) as llm:
        args = ("--tools-from", str(calculator), "--no-wiki", "--prompt", "hotpotqa-act")
        result = cli.ask(llm, wiki, *args, "--method", "act", question=QUESTION)
    assert (result.code, result.stdout) == (0, "Paris\n"), result.stderr
    prompt = llm.requests[0].json["messages"][0]["content"]
    assert prompt.endswith(
        "Action can be two types:\n(1) Calculate[expression]: Evaluate an arithmetic "
        "expression, e.g. 2 * (3 + 4) or 0.17 * 2340.\n(2) Finish[answer], which returns the "
        f"answer and finishes the task.\n\nQuestion: {QUESTION}\nAction 1:"
    )
    first = actions(cli.trace())[0]
    assert first["observation"].startswith("Invalid action. Valid actions are Calculate[")
    assert wiki.requests == [] and "Sources:" not in sourceless(result.stderr)


@pytest.mark.parametrize(("prompt", "method"), [("hotpotqa", "react"), ("hotpotqa-act", "act")])
def test_no_wiki_alone_leaves_one_type_of_action_said_grammatically(
    cli: Runner, wiki: FakeMediaWiki, prompt: str, method: str
) -> None:
    """With --no-wiki and no other tool, Finish is the one action: "one type", not "one
    types", whether the paper's list is replaced (ReAct's) or added (Act's)."""
    with FakeOpenAI(scripted(" Done.\nAction 1: Finish[Paris]")) as llm:
        args = ("--no-wiki", "--prompt", prompt, "--method", method)
        result = cli.ask(llm, wiki, *args, question=QUESTION)
    assert (result.code, result.stdout) == (0, "Paris\n"), result.stderr
    sent = llm.requests[0].json["messages"][0]["content"]
    assert "Action can be one type:" in sent
    assert "one types" not in sent and "three types" not in sent
    assert "(1) Finish[answer], which returns the answer and finishes the task." in sent


@cli_fuzz(200)
@given(st.text(), st.integers(50, 300))
def test_any_output_is_one_clean_line_within_the_limit(text: str, limit: int) -> None:
    shown = observed(text * 20, limit, Redactor())
    assert len(shown) <= limit and "\n" not in shown and shown == shown.strip()
    assert not any(ord(c) < 32 or 0x7F <= ord(c) <= 0x9F for c in shown)
    whole = " ".join(plain(text * 20).split())
    assert shown == whole if len(whole) <= limit else shown.endswith(" …")
