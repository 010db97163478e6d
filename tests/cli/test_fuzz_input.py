"""Any bytes on stdin and any text in argv (lone surrogates are what Python makes of argv bytes
that are not UTF-8): the question is asked with U+FFFD in their place, the trace holds it as
valid UTF-8, and ``replay`` / ``traces`` read it back; never a traceback."""

from __future__ import annotations

import json
import os

from fake_openai import FakeOpenAI
from hostile import any_text, cli_fuzz, text
from hypothesis import given
from hypothesis import strategies as st
from inproc import Runner, one_error_line

from react_cli.display.terminal import plain
from react_cli.infra.untrusted import clean_text, decode

FUZZ = cli_fuzz(12)


def ask(cli: Runner, llm: FakeOpenAI, args: list[str], stdin: bytes = b"") -> tuple[int, str]:
    """Run ``ask`` with a trace; the exit code and the one error line ('' when answered)."""
    trace = cli.home / "trace.json"
    trace.unlink(missing_ok=True)
    result = cli(
        ["ask", "--trace", str(trace), *args],
        stdin,
        OPENAI_BASE_URL=llm.url,
        REACT_CLI_MODEL="m",
        REACT_CLI_WIKI="http://127.0.0.1:9",
    )
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr, result
    if result.code == 0:
        assert result.stdout == "Paris\n" and result.stderr == ""
        return 0, ""
    assert result.stdout == ""
    return result.code, one_error_line(result.stderr)


def asked(cli: Runner, llm: FakeOpenAI, replay: bool = False) -> tuple[str, str]:
    """The question in the trace (read back as valid UTF-8) and in the prompt the model got."""
    trace = cli.home / "trace.json"
    document = json.loads(trace.read_bytes().decode("utf-8"))  # strict: valid UTF-8
    if replay:
        shown = cli(["replay", str(trace)])
        assert shown.code == 0 and plain(document["question"]) in shown.stdout
    body = llm.requests[-1].json or {}
    prompt = "".join(str(m.get("content", "")) for m in body.get("messages", []))
    return document["question"], prompt


@FUZZ
@given(question=any_text)
def test_any_question_in_argv(cli: Runner, llm: FakeOpenAI, question: str) -> None:
    expected = " ".join(clean_text(question).split())
    # after "--": a question starting with "-" ("-0") is no option, as for any command
    code, error = ask(cli, llm, ["--", question] if question.startswith("-") else [question])
    if not expected or question == "-":
        assert (code == 2 and error in ("Error: the question is empty", "")) or "stdin" in error
        return
    assert code == 0, error
    recorded, prompt = asked(cli, llm, replay=True)
    assert recorded == expected and f"Question: {expected}\n" in prompt


stdin_bytes = st.one_of(
    st.binary(max_size=300), any_text.map(lambda t: t.encode("utf-8", "surrogatepass"))
)


@FUZZ
@given(data=stdin_bytes)
def test_any_bytes_on_stdin(cli: Runner, llm: FakeOpenAI, data: bytes) -> None:
    expected = " ".join(decode(data).split())
    code, error = ask(cli, llm, ["-"], stdin=data)
    if not expected:
        assert (code, error) == (2, "Error: the question is empty")
        return
    assert code == 0, error
    recorded, _ = asked(cli, llm)
    assert recorded == expected


@FUZZ
@given(model=any_text.filter(lambda t: t.strip()), contact=text)
def test_any_text_in_option_values(cli: Runner, llm: FakeOpenAI, model: str, contact: str) -> None:
    code, error = ask(cli, llm, ["-m", model, "What is the capital of France?"])
    assert code == 0, error
    sent = (llm.requests[-1].json or {})["model"]
    assert sent == clean_text(model)
    document = json.loads((cli.home / "trace.json").read_text(encoding="utf-8"))
    assert document["config"]["model"] == clean_text(model)


file_name = st.binary(min_size=1, max_size=30).filter(
    lambda raw: not {ord("/"), 0} & set(raw) and raw not in (b".", b"..")
)


@cli_fuzz(10)
@given(name=file_name)
def test_any_trace_file_name(cli: Runner, llm: FakeOpenAI, name: bytes) -> None:
    """A path from argv is kept as the OS gave it (any file can be written), and shown safely."""
    folder = cli.home / "named"
    folder.mkdir(exist_ok=True)
    path = folder / (os.fsdecode(name) + ".json")  # bytes that are not UTF-8: lone surrogates
    result = cli(
        ["ask", "--json", "--trace", str(path), "What is the capital of France?"],
        OPENAI_BASE_URL=llm.url,
        REACT_CLI_MODEL="m",
    )
    assert result.code == 0, result.stderr
    assert path.exists()
    assert json.loads(result.stdout)["trace"] == clean_text(str(path))
    listed = cli(["replay", "--json", str(path)])
    assert listed.code == 0 and json.loads(listed.stdout)["answer"] == "Paris"
    path.unlink()


def test_a_question_on_stdin_larger_than_the_limit(cli: Runner, llm: FakeOpenAI) -> None:
    code, error = ask(cli, llm, ["-"], stdin=b"why " * (1 << 18) + b"?")
    assert (code, error) == (2, "Error: the question on stdin is larger than 1 MiB")
    assert not (cli.home / "trace.json").exists()
