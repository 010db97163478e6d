"""Numbers react-cli writes, its readers take back (issue 18): usage counts a server reports,
configured prices, and the one JSON writer.

A server reporting ``prompt_tokens: 1e300`` made a trace ``replay`` refused and a summary that
lost the eval; ``price_input = 1e308`` a cost of ``Infinity`` and ``ask --json`` invalid JSON;
``models --json`` passed a server's ``NaN`` through. Every JSON react-cli prints or writes is
strict JSON its own readers accept.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from eval_fakes import HOTPOT
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, Reply
from hostile import cli_fuzz, number_literal
from hypothesis import example, given
from hypothesis import strategies as st
from inproc import Runner, one_error_line, servers_env

from react_cli.core.records import MAX_TOKEN_COUNT
from react_cli.infra.untrusted import MAX_NUMBER_CHARS, dump_json, parse_json

ANSWER = " Easy.\nAction 1: Finish[Paris]"


def strict(text: str) -> Any:
    """``text`` parsed as strict JSON: NaN and Infinity refused, as other tools refuse them."""

    def refuse(name: str) -> None:
        raise AssertionError(f"{name} in JSON output")

    return json.loads(text, parse_constant=refuse)


def body_with_usage(prompt: str, completion: str) -> str:
    """A chat answer whose usage counts are the JSON texts ``prompt`` and ``completion``."""
    answer = {
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": ANSWER},
                "text": ANSWER,
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": "@p@", "completion_tokens": "@c@", "total_tokens": 1},
    }
    return json.dumps(answer).replace('"@p@"', prompt).replace('"@c@"', completion)


def sane(literal: str) -> bool:
    """Whether a reported count is kept: a whole number from 0 to MAX_TOKEN_COUNT."""
    try:
        value = json.loads(literal)
    except ValueError:
        return False
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return False
    return 0 <= value <= MAX_TOKEN_COUNT and float(value).is_integer()


counts = st.one_of(
    number_literal,
    st.integers(0, 2 * MAX_TOKEN_COUNT).map(str),
    st.sampled_from(["1e300", "-5", "12.5", "12.0", '"12"', "true", "null", "[]", "{}"]),
)


@cli_fuzz(15)
@example(prompt="1e300", completion="1e300", stream=False)  # seen: a 301-digit count stored
@example(prompt="12", completion="-5", stream=True)
@example(prompt=str(MAX_TOKEN_COUNT), completion="0", stream=False)
@given(prompt=counts, completion=counts, stream=st.booleans())
def test_any_reported_usage_gives_a_trace_and_json_the_readers_take(
    cli: Runner, wiki: FakeMediaWiki, prompt: str, completion: str, stream: bool
) -> None:
    trace = cli.home / "run.json"
    trace.unlink(missing_ok=True)
    flags = ["--json", "--trace", str(trace), *([] if stream else ["--no-stream"])]
    with FakeOpenAI([Reply(body=body_with_usage(prompt, completion))]) as llm:
        result = cli.ask(llm, wiki, *flags)
    assert result.code == 0, result.stderr
    usage = strict(result.stdout)["usage"]
    kept = sane(prompt) and sane(completion) and json.loads(prompt) + json.loads(completion) > 0
    assert usage["estimated"] is not kept  # an odd count: the run's usage is estimated
    if kept:
        assert usage["prompt_tokens"] == int(json.loads(prompt))
    assert 0 < usage["total_tokens"] <= 2 * MAX_TOKEN_COUNT
    parse_json(trace.read_text(encoding="utf-8"))  # our own reader's bounds
    replayed = cli(["replay", str(trace)])
    assert replayed.code == 0, replayed.stderr


def test_an_eval_whose_server_reports_1e300_tokens_reads_back_and_resumes(
    cli: Runner, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    with FakeOpenAI([Reply(body=body_with_usage("1e300", "1e300"))]) as llm:
        env = servers_env(llm, wiki)
        first = cli(["eval", str(HOTPOT), "--limit", "1", "--out", str(out)], **env)
        assert first.code == 0, first.stderr
        assert cli(["eval", "show", str(out)]).code == 0
        resumed = cli(["eval", "--resume", str(out), "--limit", "2", "--json"], **env)
    assert resumed.code == 0, resumed.stderr
    summary = strict(resumed.stdout)
    assert summary["n"] == 2 and summary["tokens_estimated"] is True


@pytest.mark.parametrize("price", ["1e308", "1.0e10", "inf", "nan"])
def test_prices_have_an_upper_bound(cli: Runner, wiki: FakeMediaWiki, price: str) -> None:
    cli.config_text(f"price_input = {price}\n")
    with FakeOpenAI([Reply(text=ANSWER)]) as llm:
        result = cli.ask(llm, wiki, "--json")
    assert result.code == 2 and result.stdout == ""
    assert "price" in one_error_line(result.stderr)


def test_the_highest_price_and_the_most_tokens_still_cost_a_finite_amount(
    cli: Runner, wiki: FakeMediaWiki
) -> None:
    from react_cli.settings.validation import MAX_PRICE

    cli.config_text(f"price_input = {MAX_PRICE}\nprice_output = {MAX_PRICE}\n")
    count = str(MAX_TOKEN_COUNT)
    with FakeOpenAI([Reply(body=body_with_usage(count, count))]) as llm:
        result = cli.ask(llm, wiki, "--json")
    assert result.code == 0, result.stderr
    cost = strict(result.stdout)["cost"]
    assert cost["amount"] == 2 * MAX_TOKEN_COUNT * MAX_PRICE / 1e6


def test_models_json_is_strict_json_whatever_the_server_sends(cli: Runner) -> None:
    listing = (
        '{"object": "list", "data": [{"id": "a", "created": NaN, "score": Infinity,'
        ' "big": 1e400, "long": ' + "9" * 300 + ', "ok": 1.5}]}'
    )
    with FakeOpenAI([Reply(body=listing)]) as llm:
        result = cli(["models", "--json", "--base-url", llm.url])
    assert result.code == 0, result.stderr
    (model,) = strict(result.stdout)
    assert model == {
        "id": "a",
        "created": None,
        "score": None,
        "big": None,
        "long": None,
        "ok": 1.5,
    }


@pytest.mark.parametrize(
    "value",
    [math.nan, math.inf, -math.inf, 10**MAX_NUMBER_CHARS, -(10 ** (MAX_NUMBER_CHARS - 1))],
)
def test_the_one_writer_refuses_what_its_readers_refuse(value: float) -> None:
    with pytest.raises(ValueError, match=r"refusing to write .* at \.steps\[1\]\.usage"):
        dump_json({"steps": [{}, {"usage": value}]})
    largest = 10**MAX_NUMBER_CHARS - 1
    assert parse_json(dump_json([largest, -(largest // 10)])) == [largest, -(largest // 10)]
