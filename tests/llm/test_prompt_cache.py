"""The server's prompt cache counted (issue 34): cached prompt tokens in each form an endpoint
reports them (OpenAI's ``prompt_tokens_details.cached_tokens``, llama.cpp's ``timings.cache_n``
and ``tokens_cached``), streamed and not, and in none; through ``ask --json``, ``-v``, the trace,
eval rows and the summary; their price; ``prompt_cache_key`` per question; the flex tier."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from eval_fakes import HOTPOT, HOTPOT_SCRIPTS, PerQuestion, Q, rows_of, summary_of
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, Reply
from inproc import GOOD_RUN, Runner, one_error_line, servers_env

from react_cli.core.records import Prices, Usage
from react_cli.settings.resolve import resolve

OPENAI_FORM = {"usage_extra": {"prompt_tokens_details": {"cached_tokens": 300}}}
LLAMA_TIMINGS = {"extra": {"timings": {"cache_n": 300, "prompt_n": 20}}}
LLAMA_NATIVE = {"extra": {"tokens_cached": 300}}
FORMS = {"openai": OPENAI_FORM, "timings": LLAMA_TIMINGS, "tokens_cached": LLAMA_NATIVE}


def replies(form: dict[str, Any]) -> list[Reply]:
    return [Reply(text=text, **form) for text in GOOD_RUN]


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "json"])
@pytest.mark.parametrize("form", sorted(FORMS))
def test_cached_tokens_in_each_form_reach_json_and_trace(
    cli: Runner, wiki: FakeMediaWiki, form: str, stream: bool
) -> None:
    with FakeOpenAI(replies(FORMS[form])) as llm:
        args = ["--json"] if stream else ["--json", "--no-stream"]
        result = cli.ask(llm, wiki, *args)
    assert result.code == 0, result.stderr
    summary = json.loads(result.stdout)
    assert [step["usage"]["cached_prompt_tokens"] for step in summary["steps"]] == [300] * 3
    assert summary["usage"]["cached_prompt_tokens"] == 900
    trace = cli.trace()
    assert trace["usage"]["cached_prompt_tokens"] == 900


def test_no_cached_count_shows_nothing_not_zero(cli: Runner, wiki: FakeMediaWiki) -> None:
    with FakeOpenAI(replies({})) as llm:
        result = cli.ask(llm, wiki, "--json", "-v")
    summary = json.loads(result.stdout)
    assert "cached_prompt_tokens" not in summary["usage"]
    assert all("cached_prompt_tokens" not in step["usage"] for step in summary["steps"])
    assert "prompt cache" not in result.stderr


def test_a_zero_count_is_a_count(cli: Runner, wiki: FakeMediaWiki) -> None:
    form = {"usage_extra": {"prompt_tokens_details": {"cached_tokens": 0}}}
    with FakeOpenAI(replies(form)) as llm:
        result = cli.ask(llm, wiki, "--json")
    assert json.loads(result.stdout)["usage"]["cached_prompt_tokens"] == 0


@pytest.mark.parametrize("count", [10**12, -1, "300", 1.5, None, True])
def test_odd_counts_are_no_count(count: object) -> None:
    usage = Usage.reported(
        {
            "prompt_tokens": 400,
            "completion_tokens": 5,
            "prompt_tokens_details": {"cached_tokens": count},
        }
    )
    assert usage is not None and usage.cached_prompt_tokens is None
    above = Usage.reported({"prompt_tokens": 40, "completion_tokens": 5}, cached=41)
    assert above is not None and above.cached_prompt_tokens is None


def test_verbose_shows_the_prompt_cache_per_step_and_run(cli: Runner, wiki: FakeMediaWiki) -> None:
    with FakeOpenAI(replies(OPENAI_FORM)) as llm:
        result = cli.ask(llm, wiki, "-v")
    lines = [line for line in result.stderr.splitlines() if "prompt cache" in line]
    assert len(lines) == 4, result.stderr  # three steps and the run
    assert "prompt cache 300 tokens (" in lines[0]
    assert "prompt cache 900 tokens (" in lines[-1] and lines[-1].startswith("stop: finish")


def test_cost_prices_cached_tokens_and_says_when_it_cannot() -> None:
    usage = Usage(1000, 100, cached_prompt_tokens=800)
    priced = Prices(input=1.0, output=2.0, cached_input=0.1).cost(usage)
    assert priced.amount == pytest.approx((200 * 1.0 + 800 * 0.1 + 100 * 2.0) / 1e6)
    assert not priced.cached_unpriced
    unpriced = Prices(input=1.0, output=2.0).cost(usage)
    assert unpriced.amount == pytest.approx((1000 * 1.0 + 100 * 2.0) / 1e6)
    assert unpriced.cached_unpriced and unpriced.to_json()["cached_at_input_price"] is True
    assert not Prices(1.0, 2.0).cost(Usage(1000, 100)).cached_unpriced


def test_cached_price_from_the_config_and_the_unpriced_note(
    cli: Runner, wiki: FakeMediaWiki
) -> None:
    cli.config_text(
        'retries = 2\n[prices]\n"test-model" = { input = 100.0, output = 100.0, '
        "cached_input = 10.0 }\n"
    )
    with FakeOpenAI(replies(OPENAI_FORM)) as llm:
        priced = json.loads(cli.ask(llm, wiki, "--json").stdout)
        cli.config_text('retries = 2\n[prices]\n"test-model" = { input = 100.0, output = 100.0 }\n')
        unpriced = cli.ask(llm, wiki, "--json", "-v")
    usage = priced["usage"]
    expected = (usage["prompt_tokens"] - 900) * 100 + 900 * 10 + usage["completion_tokens"] * 100
    assert priced["cost"]["amount"] == pytest.approx(expected / 1e6)
    assert "cached_at_input_price" not in priced["cost"]
    assert json.loads(unpriced.stdout)["cost"]["cached_at_input_price"] is True
    assert "cached tokens at the input price: no cached_input price configured" in unpriced.stderr


def test_unknown_price_keys_name_the_known_ones(cli: Runner, wiki: FakeMediaWiki) -> None:
    cli.config_text('[prices]\n"test-model" = { input = 1.0, cache = 0.1 }\n')
    with FakeOpenAI(replies({})) as llm:
        result = cli.ask(llm, wiki)
    assert result.code == 2
    assert "unknown key(s) cache (use input, output, cached_input," in one_error_line(result.stderr)


def eval_replies(form: dict[str, Any]) -> PerQuestion:
    scripts = {
        question: [Reply(text=item, **form) if isinstance(item, str) else item for item in script]
        for question, script in HOTPOT_SCRIPTS.items()
    }
    return PerQuestion(scripts)


def test_eval_rows_and_summary_hold_the_cached_share(
    cli: Runner, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    cli.config(price_input=1.0, price_output=1.0)
    out = tmp_path / "cached"
    with FakeOpenAI(eval_replies(LLAMA_TIMINGS)) as llm:
        args = ["eval", str(HOTPOT), "--out", str(out), "--max-steps", "3", "--no-stream"]
        result = cli(args, **servers_env(llm, wiki))
    assert result.code == 0, result.stderr
    assert "the costs count cached tokens at the input price" in result.stderr
    rows = rows_of(out)
    assert all(row["usage"]["cached_prompt_tokens"] == 300 * row["steps"] for row in rows)
    summary = summary_of(out)
    prompts = sum(row["usage"]["prompt_tokens"] for row in rows)
    assert summary["cached_prompt_tokens"] == 300 * sum(row["steps"] for row in rows)
    assert summary["cached_share"] == round(summary["cached_prompt_tokens"] / prompts, 4)
    shown = cli(["eval", "show", str(out)])
    assert "prompt cache" in shown.stdout
    plain = tmp_path / "plain"
    with FakeOpenAI(eval_replies({})) as llm:
        args = ["eval", str(HOTPOT), "--out", str(plain), "--max-steps", "3"]
        uncached = cli(args, **servers_env(llm, wiki))
    assert uncached.code == 0 and "cached tokens at the input price" not in uncached.stderr
    assert "cached_prompt_tokens" not in summary_of(plain)
    assert "cached_share" not in summary_of(plain)
    assert all("cached_prompt_tokens" not in row["usage"] for row in rows_of(plain))
    assert "prompt cache" not in cli(["eval", "show", str(plain)]).stdout


def test_prompt_cache_key_is_the_same_when_resumed(tmp_path: Path) -> None:
    from react_cli.eval.datasets import Example
    from react_cli.eval.question import prompt_cache_key

    class Plan:
        folder = tmp_path / "eval"

    example = Example(index=3, id=None, question="Who?", golds=("x",))
    other = Example(index=4, id=None, question="Who?", golds=("x",))
    key = prompt_cache_key(Plan(), example)  # type: ignore[arg-type]
    assert key == prompt_cache_key(Plan(), example)  # type: ignore[arg-type]
    assert key != prompt_cache_key(Plan(), other)  # type: ignore[arg-type]


def test_prompt_cache_key_one_per_question_in_an_eval(
    cli: Runner, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    out = tmp_path / "keyed"
    with FakeOpenAI(eval_replies({})) as llm:
        args = ["eval", str(HOTPOT), "--out", str(out), "--max-steps", "3"]
        assert cli(args, **servers_env(llm, wiki), OPENAI_API_KEY="sk-secret-123").code == 0
        keys: dict[str, set[str]] = {}
        for request in llm.requests:
            assert request.json is not None
            prompt = request.json["messages"][0]["content"]
            question = next(q for q in Q if f"Question: {q}" in prompt)
            keys.setdefault(question, set()).add(request.json["prompt_cache_key"])
    assert all(len(found) == 1 for found in keys.values())  # every step of a question: one key
    flat = [key for found in keys.values() for key in found]
    assert len(set(flat)) == len(Q)  # one per question
    assert all(key.startswith("react-cli-") and "secret" not in key for key in flat)


def test_ask_sends_no_prompt_cache_key(cli: Runner, wiki: FakeMediaWiki) -> None:
    with FakeOpenAI(replies({})) as llm:
        assert cli.ask(llm, wiki).code == 0
    assert all("prompt_cache_key" not in (r.json or {}) for r in llm.requests)


def test_a_refused_prompt_cache_key_is_dropped_for_the_run(
    cli: Runner, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    answer = eval_replies({})
    refusal = Reply(
        status=400,
        body=json.dumps(
            {"error": {"message": "Unrecognized request argument supplied: prompt_cache_key"}}
        ),
    )

    def strict(body: dict[str, Any]) -> Reply:
        return refusal if "prompt_cache_key" in body else answer(body)

    out = tmp_path / "strict"
    with FakeOpenAI(strict) as llm:
        args = ["eval", str(HOTPOT), "--out", str(out), "--max-steps", "3", "--concurrency", "2"]
        result = cli(args, **servers_env(llm, wiki))
    assert result.code == 0, result.stderr
    keyed = [r for r in llm.requests if "prompt_cache_key" in (r.json or {})]
    assert 1 <= len(keyed) <= 2  # each worker's request in flight when it was refused, at most
    assert all(row["stop_reason"] != "error" for row in rows_of(out))
    assert summary_of(out)["n"] == len(Q)


def test_service_tier_is_sent_and_recorded(
    cli: Runner, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    with FakeOpenAI(replies({})) as llm:
        result = cli.ask(llm, wiki, "--service-tier", "flex", "--json")
    assert result.code == 0, result.stderr
    assert {r.json["service_tier"] for r in llm.requests if r.json} == {"flex"}
    assert cli.trace()["config"]["service_tier"] == "flex"
    with FakeOpenAI(replies({})) as llm:
        assert cli.ask(llm, wiki).code == 0
    assert all("service_tier" not in (r.json or {}) for r in llm.requests)
    assert "service_tier" not in cli.trace()["config"]
    out = tmp_path / "tiered"
    with FakeOpenAI(eval_replies({})) as llm:
        args = ["eval", str(HOTPOT), "--out", str(out), "--max-steps", "3"]
        assert cli([*args, "--service-tier", "priority"], **servers_env(llm, wiki)).code == 0
    assert summary_of(out)["config"]["service_tier"] == "priority"
    bad = cli.ask(llm, wiki, "--service-tier", "cheap")
    assert bad.code == 2
    assert one_error_line(bad.stderr) == (
        "Error: --service-tier must be one of auto, default, flex, priority, not 'cheap'"
    )


def test_flex_has_a_longer_request_timeout_unless_one_is_set(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("", encoding="utf-8")
    assert resolve({"service_tier": "flex"}, {}, config).timeout_s == 900.0
    assert resolve({"service_tier": "default"}, {}, config).timeout_s == 120.0
    config.write_text("timeout_s = 30\n", encoding="utf-8")
    assert resolve({"service_tier": "flex"}, {}, config).timeout_s == 30.0


def test_tier_prices_multiply_the_cost(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        'model = "m"\n[prices]\n"m" = { input = 1.0, output = 1.0, priority_factor = 2.0 }\n',
        encoding="utf-8",
    )
    usage = Usage(1_000_000, 0)
    costs = {}
    for tier in ("default", "flex", "priority"):
        prices = resolve({"service_tier": tier}, {}, config).prices()
        assert prices is not None
        costs[tier] = prices.cost(usage).amount
    assert costs == {"default": 1.0, "flex": 0.5, "priority": 2.0}


BUSY = {
    "429 resource unavailable": Reply(
        status=429,
        body=json.dumps(
            {
                "error": {
                    "message": "Resource unavailable: try again later",
                    "type": "resource_unavailable",
                }
            }
        ),
    ),
    "498": Reply(
        status=498, body=json.dumps({"error": {"message": "Flex tier capacity exceeded"}})
    ),
}


@pytest.mark.parametrize("busy", sorted(BUSY))
def test_flex_waits_out_a_busy_tier_past_the_usual_retries(
    cli: Runner, wiki: FakeMediaWiki, busy: str
) -> None:
    """FAST_CONFIG allows 2 retries; a busy tier's answers are waited out many more times."""
    script = [BUSY[busy]] * 5 + [Reply(text=GOOD_RUN[0])] + [Reply(text=t) for t in GOOD_RUN[1:]]
    with FakeOpenAI(script) as llm:
        result = cli.ask(llm, wiki, "--service-tier", "flex", "--json")
    assert result.code == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["answer"] == "Arthur's Magazine"
    assert summary["steps"][0]["retries"] == 5


def test_a_plain_429_keeps_the_usual_retries(cli: Runner, wiki: FakeMediaWiki) -> None:
    with FakeOpenAI([Reply(status=429)] * 5 + [Reply(text=GOOD_RUN[0])]) as llm:
        result = cli.ask(llm, wiki)
    assert result.code == 1
    assert "kept failing with HTTP 429 after 2 retries" in one_error_line(result.stderr)
