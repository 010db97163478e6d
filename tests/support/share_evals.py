"""Session fixtures: real eval folders, made by ``react-cli eval`` run in-process.

Load as a plugin (``pytest_plugins = ["share_evals"]``): each folder is made once per test
session, against the fake model and MediaWiki servers, and the tests only read it.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from pathlib import Path

import pytest
from eval_fakes import FEVER, HOTPOT, PerQuestion
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, Reply
from method_fakes import SCRIPTS, MethodsEndpoint
from share_data import (
    A_SCRIPTS,
    B_SCRIPTS,
    EXTRA_LINES,
    FEVER_SCRIPTS,
    HOSTILE,
    HOSTILE_LINE,
    HOSTILE_QUESTIONS,
    HOSTILE_SCRIPTS,
)

from react_cli.cli import main
from react_cli.share.report import eval_report


def run_eval(
    out: Path,
    model: PerQuestion | MethodsEndpoint | list[Reply],
    dataset: Path,
    *args: str,
    code: int = 0,
) -> Path:
    """``react-cli eval DATASET --out OUT`` in-process; the fake servers live for the call,
    which must exit with ``code``."""
    pages = {"Evil page": HOSTILE.replace("\ud800", "")}
    home = out.parent / f"{out.name}-home"
    home.mkdir()
    wiki = FakeMediaWiki.from_fixtures()
    wiki.pages.update(pages)
    stdout, stderr = io.StringIO(), io.StringIO()
    with wiki, FakeOpenAI(model) as llm, pytest.MonkeyPatch.context() as env:
        for key in list(os.environ):
            if key.startswith(("OPENAI_", "REACT_CLI_")):
                env.delenv(key)
        env.setenv("REACT_CLI_HOME", str(home))
        env.setenv("COLUMNS", "200")
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            try:
                main(
                    [
                        "eval",
                        str(dataset),
                        "--max-steps",
                        "3",
                        "--out",
                        str(out),
                        "-m",
                        "m",
                        "--base-url",
                        llm.url,
                        "--wiki",
                        wiki.url,
                        *args,
                    ]
                )
            except SystemExit as exc:
                assert exc.code == code, stderr.getvalue()
    return out


@pytest.fixture(scope="session")
def eval_a(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return run_eval(tmp_path_factory.mktemp("evals") / "a", PerQuestion(A_SCRIPTS), HOTPOT)


@pytest.fixture(scope="session")
def report_a(eval_a: Path) -> str:
    """``eval_a``'s report page, drawn once (its charts take a few tenths of a second)."""
    return eval_report(eval_a)


@pytest.fixture(scope="session")
def eval_b(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return run_eval(tmp_path_factory.mktemp("evals") / "b", PerQuestion(B_SCRIPTS), HOTPOT)


@pytest.fixture(scope="session")
def eval_methods(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An eval of ReAct and CoT-SC in one pass (21 samples a question, one request each)."""
    out = tmp_path_factory.mktemp("evals") / "methods"
    return run_eval(out, MethodsEndpoint(SCRIPTS), HOTPOT, "--methods", "react,cot-sc")


@pytest.fixture(scope="session")
def eval_fever(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("evals") / "fever"
    return run_eval(folder, PerQuestion(FEVER_SCRIPTS), FEVER, "--limit", "3")


@pytest.fixture(scope="session")
def eval_hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real eval over hostile questions, answers and observations, then hostile rows added."""
    root = tmp_path_factory.mktemp("evals")
    dataset = root / "hostile.jsonl"
    lines = [
        json.dumps({"question": q, "answer": "<b>gold</b> " + HOSTILE_LINE})
        for q in HOSTILE_QUESTIONS
    ]
    dataset.write_text("\n".join(lines) + "\n", encoding="utf-8")
    folder = run_eval(root / "hostile", PerQuestion(HOSTILE_SCRIPTS), dataset)
    (folder / "traces" / "broken.json").write_text("{", encoding="utf-8")
    first = (folder / "results.jsonl").read_text(encoding="utf-8").splitlines()[0]
    extra = [line for line, _ in EXTRA_LINES] + [first]  # a repeated question: the last counts
    with (folder / "results.jsonl").open("a", encoding="utf-8") as handle:
        handle.write("\n".join(extra) + "\n")
    return folder
