"""The smaller things issue 18 saw: a long model list, model names holding line breaks,
refused values echoed whole in the ``Error:`` line, and the summary table of an eval of
several methods showing its first method's figures without saying whose."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from eval_fakes import FEVER, HOTPOT
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, Reply
from hostile import cli_fuzz, text
from hypothesis import given
from hypothesis import strategies as st
from inproc import Runner, one_error_line, servers_env
from method_fakes import SCRIPTS, MethodsEndpoint

from react_cli.core.wording import ECHO_CHARS, quoted

TRACE = Path(__file__).resolve().parents[1] / "fixtures" / "traces" / "answered.json"


# --- react-cli models -------------------------------------------------------------------------


def models_answer(ids: list[str], description: str = "") -> str:
    data = [{"id": name, "object": "model", "description": description} for name in ids]
    return json.dumps({"object": "list", "data": data})


def test_a_list_of_thousands_of_models_is_listed(cli: Runner) -> None:
    ids = [f"vendor/model-{n}" for n in range(5000)]
    answer = models_answer(ids, "A model with a long description. " * 6)
    assert len(answer) > 1_000_000  # more than twice the old 464 KB cap
    with FakeOpenAI([Reply(body=answer)]) as llm:
        result = cli(["models", "--base-url", llm.url])
    assert result.code == 0, result.stderr
    assert result.stdout.splitlines() == ids


line_breaks = st.sampled_from(["\n", "\r\n", "\r", "\u2028", "\u2029", "\x85", "\x0b"])
model_names = st.lists(st.one_of(text, line_breaks), min_size=1).map(lambda p: "m" + "".join(p))


@cli_fuzz(12)
@given(names=st.lists(model_names, min_size=1, max_size=4))
def test_a_model_name_holding_line_breaks_is_listed_as_one_model(
    cli: Runner, names: list[str]
) -> None:
    with FakeOpenAI([Reply(body=models_answer(["good-model", *names]))]) as llm:
        result = cli(["models", "--base-url", llm.url])
    assert result.code == 0, result.stderr
    listed = result.stdout.split("\n")[:-1]  # what a reader of lines sees
    assert listed[0] == "good-model" and len(listed) == 1 + len(names), listed


def test_line_breaks_in_a_model_name_become_spaces(cli: Runner) -> None:
    ids = ["evil\nfake-model", "also\r\nsplit", "wide\u2028line"]
    with FakeOpenAI([Reply(body=models_answer(ids))]) as llm:
        result = cli(["models", "--base-url", llm.url])
    assert result.stdout.splitlines() == ["evil fake-model", "also split", "wide line"]


# --- refused values are echoed cut ------------------------------------------------------------

LONG = "x" * 100_000


def long_front_matter(tmp_path: Path, key: str) -> list[str]:
    prompt = tmp_path / "prompt.txt"
    prompt.write_text(f"---\n{key}: {LONG}\n---\nQuestion: {{question}}\n", encoding="utf-8")
    return ["ask", "q?", "--prompt", str(prompt), "-m", "m"]


def long_fever_label(tmp_path: Path) -> list[str]:
    claim = json.loads(FEVER.read_text(encoding="utf-8").splitlines()[0])
    dataset = tmp_path / "fever.jsonl"
    dataset.write_text(json.dumps({**claim, "label": LONG}) + "\n", encoding="utf-8")
    return ["eval", str(dataset), "-m", "m"]


def long_trace_field(tmp_path: Path, key: str) -> list[str]:
    trace = json.loads(TRACE.read_text(encoding="utf-8"))
    trace[key] = LONG
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(trace), encoding="utf-8")
    return ["replay", str(path)]


def long_config(cli: Runner, line: str) -> list[str]:
    cli.config_text(line + "\n")
    return ["ask", "q?", "-m", "m"]


ECHOES = {
    "front matter method": lambda cli, tmp: long_front_matter(tmp, "method"),
    "front matter task": lambda cli, tmp: long_front_matter(tmp, "task"),
    "--methods": lambda cli, tmp: ["eval", str(HOTPOT), "--methods", LONG],
    "--format": lambda cli, tmp: ["replay", str(TRACE), "--format", LONG],
    "FEVER label": lambda cli, tmp: long_fever_label(tmp),
    "trace version": lambda cli, tmp: long_trace_field(tmp, "version"),
    "trace calls": lambda cli, tmp: long_trace_field(tmp, "calls"),
    "config api": lambda cli, tmp: long_config(cli, f'api = "{LONG}"'),
    "config key": lambda cli, tmp: long_config(cli, f"{LONG} = 1"),
    "config value": lambda cli, tmp: long_config(cli, f'max_steps = "{LONG}"'),
}


@pytest.mark.parametrize("site", sorted(ECHOES))
def test_a_refused_100_kb_value_is_echoed_cut(cli: Runner, tmp_path: Path, site: str) -> None:
    result = cli(ECHOES[site](cli, tmp_path))
    assert result.code in (1, 2), result.stderr[:500]
    line = one_error_line(result.stderr)
    assert len(line) < 600, line[:700]
    assert "100,000 characters" in line, line


def test_quoted_cuts_any_value() -> None:
    assert quoted("fever") == "'fever'" and quoted([1, 2]) == "[1, 2]"
    assert quoted("é" * 61) == repr("é" * ECHO_CHARS) + "… (61 characters)"
    assert quoted(list(range(10**4))).endswith(" characters)")


# --- whose figures the summary table shows ----------------------------------------------------


def test_the_summary_of_several_methods_says_whose_figures_it_shows(
    cli: Runner, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    out = tmp_path / "two"
    with FakeOpenAI(MethodsEndpoint(SCRIPTS)) as llm:
        args = [str(HOTPOT), "--limit", "2", "--methods", "standard,cot", "--out", str(out)]
        result = cli(["eval", *args], **servers_env(llm, wiki))
    assert result.code == 0, result.stderr
    shown = cli(["eval", "show", str(out)])
    for screen in (result.stderr, shown.stdout):
        assert "│ EM (Standard)" in screen and "│ avg steps (Standard)" in screen
        assert "│ stop reasons (Standard)" in screen and "│ questions  " in screen


def test_the_summary_of_a_react_eval_needs_no_label(
    cli: Runner, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    out = tmp_path / "react"
    with FakeOpenAI(MethodsEndpoint(SCRIPTS)) as llm:
        result = cli(
            ["eval", str(HOTPOT), "--limit", "1", "--out", str(out)], **servers_env(llm, wiki)
        )
    assert result.code == 0, result.stderr
    assert "│ EM   " in result.stderr and "(ReAct)" not in result.stderr
