"""Retry-After per RFC 9110: delay-seconds or an HTTP-date; anything else falls back to the
backoff, and a server that answered is never reported as unreachable."""

from __future__ import annotations

import email.utils
import json
import math
import re

import pytest
from fake_mediawiki import FakeMediaWiki, Fault
from fake_openai import FakeOpenAI, Reply, scripted
from hypothesis import given, settings
from hypothesis import strategies as st
from inproc import Runner

from react_cli.infra.retry import retry_after_s

NOW = 1_800_000_000.0
BAD = ["1.5", "-1", "nan", "inf", "abc", "", "  ", "1e3", "+5", "0x10", "١٢", "Sat, 99 Foo 1994"]
PAST = "Sun, 06 Nov 1994 08:49:37 GMT"


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("0", 0.0),
        ("5", 5.0),
        (" 7\t", 7.0),
        ("123456789012345678901234567890", math.inf),
        (email.utils.formatdate(NOW + 90, usegmt=True), 90.0),  # IMF-fixdate
        ("Sunday, 15-Jan-27 08:01:30 GMT", 1_800_000_090.0 - NOW),  # obsolete RFC 850 form
        ("Sun Jan 15 08:01:30 2027", 1_800_000_090.0 - NOW),  # obsolete asctime form
    ],
)
def test_valid_values(value: str, seconds: float) -> None:
    assert retry_after_s(value, now=NOW) == pytest.approx(seconds)


@pytest.mark.parametrize("value", [*BAD, PAST, None])
def test_anything_else_is_none(value: str | None) -> None:
    assert retry_after_s(value, now=NOW) is None


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_never_raises_and_never_negative(value: str) -> None:
    seconds = retry_after_s(value, now=NOW)
    assert seconds is None or seconds >= 0


WAIT = re.compile(r"retrying in (\d+\.\d) s")


def announced_waits(stderr: str) -> list[float]:
    """The waits the retry notices announced (one decimal: the config's 0.01 s backoff is
    0.0, a header honoured up to ``max_retry_after_s`` would be 0.2)."""
    return [float(seconds) for seconds in WAIT.findall(stderr)]


RUN = (
    " I should search it.\nAction 1: Search[Arthur's Magazine]",
    " It started in 1844.\nAction 2: Finish[1844]",
)


@pytest.mark.parametrize("value", ["1.5", "-1", "nan", "abc", PAST])
@pytest.mark.parametrize("status", [429, 503])
def test_model_endpoint_retries_with_the_backoff(
    cli: Runner, wiki: FakeMediaWiki, status: int, value: str
) -> None:
    replies = [Reply(status=status, headers={"Retry-After": value}), *scripted(*RUN)]
    with FakeOpenAI(replies) as llm:
        result = cli(
            ["ask", "When?"], OPENAI_BASE_URL=llm.url, REACT_CLI_MODEL="m", REACT_CLI_WIKI=wiki.url
        )
    assert result.code == 0, result.stderr
    assert cli.trace()["steps"][0]["retries"] == 1
    assert announced_waits(result.stderr) == [0.0]  # the 0.01 s backoff, not the header's wait


@pytest.mark.parametrize("value", ["nan", "1.5", PAST])
@pytest.mark.parametrize("fault", ["503", "maxlag"])
def test_wikipedia_retries_with_the_backoff(
    cli: Runner, wiki: FakeMediaWiki, fault: str, value: str
) -> None:
    headers = {"Retry-After": value}
    wiki.faults.append(
        Fault(status=503, headers=headers)
        if fault == "503"
        else Fault(api_error="maxlag", headers=headers)
    )
    with FakeOpenAI(scripted(*RUN)) as llm:
        result = cli.ask(llm, wiki, "--json", question="When?")
    assert result.code == 0, result.stderr
    step = json.loads(result.stdout)["steps"][0]["actions"][0]
    assert step["observation"].startswith("Arthur's Magazine (1844")
    assert step["retries"] == 1
    assert announced_waits(result.stderr) == [0.0]  # the 0.01 s backoff, not the header's wait
