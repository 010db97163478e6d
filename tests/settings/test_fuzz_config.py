"""Hostile settings (config file, environment, options) through ``ask``: each run answers, or
ends with one ``Error:`` line and exit 2 before any request (exit 1 only when a valid setting
makes the endpoint unreachable); never a traceback, within a bound."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable

import pytest
from fake_openai import FakeOpenAI
from hostile import cli_fuzz, text
from hypothesis import given
from hypothesis import strategies as st
from inproc import FAST_CONFIG, Runner, one_error_line

from react_cli.settings.settings import Settings
from react_cli.settings.validation import MAX_COUNTS, MAX_DURATION_S

NAMES = sorted(Settings.__dataclass_fields__)
FUZZED = [name for name in NAMES if name != "api_key"]  # keys: issue 10 part A validates them
BOUND_S = 10.0
FUZZ = cli_fuzz(15)

# fmt: off
toml_number = st.sampled_from([
    "1e300", "-1e300", "1e-300", "inf", "-inf", "nan", "0", "-1", "0.5", "3", "1_000_000_000",
    "9" * 5000, "9223372036854775807", "0x7fffffff", "1e400", "604801", "604800", "1001",
])
bad_url = st.sampled_from([
    '"http://[::1"', '"http://h:99999/"', '"http://a..b/"', '"http://x y/"', '"ftp://host"',
    '"http://"', '"zim:/nonexistent.zim"', '"http://u:secret@[::1/v1"',
    '"http://' + "a" * 64 + '.org"',
])
# fmt: on
toml_string = text.map(json.dumps)  # JSON string escapes are TOML basic-string escapes
toml_value = st.one_of(
    toml_number,
    toml_string,
    st.sampled_from(["true", "false", "[]", "[1, 2]", "{a = 1}", "1979-05-27T07:32:00Z"]),
    st.sampled_from([10, 1000, 100_000]).map(lambda depth: "[" * depth + "]" * depth),
    bad_url,
)
ENV_VARIABLES = [
    "REACT_CLI_MODEL",
    "REACT_CLI_TIMEOUT",
    "REACT_CLI_WIKI",
    "REACT_CLI_VARIANT",
    "REACT_CLI_API",
    "REACT_CLI_PROMPT",
    "REACT_CLI_CONTACT",
    "OPENAI_BASE_URL",
]
# What os.environ holds: text, or bytes that are not UTF-8 as lone surrogates (\udc80-\udcff).
env_value = st.one_of(
    text,
    toml_number,
    bad_url.map(json.loads),
    st.binary(min_size=1, max_size=30).map(lambda raw: raw.decode("utf-8", "surrogateescape")),
)


# The environment the runs get, which would override the same setting in the config file.
OVERRIDES = {"base_url": "OPENAI_BASE_URL", "model": "REACT_CLI_MODEL", "wiki": "REACT_CLI_WIKI"}


def from_file(settings: Iterable[str]) -> dict[str, str]:
    """Environment that leaves these settings to the config file (empty = unset)."""
    return {OVERRIDES[name]: "" for name in settings if name in OVERRIDES}


def check_ask(cli: Runner, llm: FakeOpenAI, *options: str, **env: str) -> str:
    """Run ``ask``; return the one error line ('' when answered)."""
    requests = len(llm.requests)
    base = {"OPENAI_BASE_URL": llm.url, "REACT_CLI_MODEL": "m"}
    base["REACT_CLI_WIKI"] = "http://127.0.0.1:9"
    result = cli(["ask", "What is the capital of France?", *options], **{**base, **env})
    assert cli.elapsed_s < BOUND_S
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr, result
    if result.code == 0:
        assert result.stdout == "Paris\n" and result.stderr == ""
        return ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    assert result.code in (1, 2), result
    if result.code == 2:
        assert len(llm.requests) == requests  # refused before any request
    return lines[0]


@FUZZ
@given(entries=st.dictionaries(st.sampled_from(FUZZED), toml_value, min_size=1, max_size=2))
def test_any_config_file_runs_or_is_one_usage_error(
    cli: Runner, llm: FakeOpenAI, entries: dict[str, str]
) -> None:
    lines = [f"{key} = {json.dumps(value)}" for key, value in FAST_CONFIG.items()]
    lines += [f"{key} = {value}" for key, value in entries.items()]
    toml = "\n".join(dict.fromkeys(lines)) + "\n"  # a repeated key is itself an error
    (cli.home / "config.toml").write_text(toml, encoding="utf-8")
    # otel = true would send spans to localhost:4318 and warn: the file's value is still read
    # and checked, then the environment turns spans off
    spans_off = {"REACT_CLI_OTEL": "0"} if "otel" in entries else {}
    error = check_ask(cli, llm, "--timeout", "5", **from_file(entries), **spans_off)
    if set(entries) <= {"base_url", "wiki"}:
        assert "secret" not in error  # a URL is never echoed: it may hold a password
    if error.startswith("Error: no answer"):  # a valid but unusable endpoint or timeout
        assert set(entries) & {"base_url", "timeout_s", "api", "model", "retries"}, error


@FUZZ
@given(data=st.binary(max_size=200))
def test_any_bytes_as_config_file(cli: Runner, llm: FakeOpenAI, data: bytes) -> None:
    (cli.home / "config.toml").write_bytes(data)
    check_ask(cli, llm)


@FUZZ
@given(variable=st.sampled_from(ENV_VARIABLES), value=env_value)
def test_any_environment_value_runs_or_is_one_usage_error(
    cli: Runner, llm: FakeOpenAI, variable: str, value: str
) -> None:
    if "\x00" in value or not value:
        return  # an environment cannot hold NUL; empty means unset
    error = check_ask(cli, llm, "--timeout", "5", **{variable: value})
    if variable == "REACT_CLI_MODEL" and not error:
        sent = json.loads(json.dumps(llm.requests[-1].json))["model"]
        assert sent.encode("utf-8")  # what reached the endpoint is valid UTF-8 text


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ("timeout_s = 1e300", f"timeout_s must be at most {MAX_DURATION_S:,}"),
        ("wiki_timeout_s = 604801", "wiki_timeout_s must be at most"),
        ("retry_backoff_s = 1e10", "retry_backoff_s must be at most"),
        ("max_retry_after_s = 1e308", "max_retry_after_s must be at most"),
        ("max_steps = 1001", f"--max-steps must be at most {MAX_COUNTS['max_steps']:,}"),
        ("retries = 101", "retries must be at most 100"),
        ("max_tokens = 9223372036854775807", "--max-tokens must be at most"),
        ("max_observation_chars = 10_000_000_000", "max_observation_chars must be at most"),
        ("retries = " + "9" * 5000, "a number too long to read"),
        ("x = " + "[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ("model = [1, 2]", "invalid value [1, 2] for model"),
        ('base_url = "http://[::1"', "--base-url is not a usable URL: Invalid IPv6 URL"),
        ('base_url = "http://h:99999/v1"', "--base-url is not a usable URL: Port out of range"),
        ('wiki = "http://a..b/"', "--wiki is not a usable URL: its host is not a valid domain"),
        ('wiki = "http://x y"', "--wiki is not a usable URL: it holds white space"),
        ('base_url = "http://u:secret@[::1/v1"', "--base-url is not a usable URL"),
    ],
)
def test_values_that_would_break_later_are_named_now(
    cli: Runner, llm: FakeOpenAI, entry: str, problem: str
) -> None:
    (cli.home / "config.toml").write_text(entry + "\n", encoding="utf-8")
    error = check_ask(cli, llm, **from_file([entry.split(" ", 1)[0]]))
    assert problem in error, error
    assert "secret" not in error


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        (["--timeout", "1e300"], "--timeout must be at most 604,800 s (7 days)"),
        (["--timeout", "inf"], "invalid value"),
        (["--max-steps", "100000"], "--max-steps must be at most 1,000"),
        (["--base-url", "http://[::1"], "--base-url is not a usable URL"),
        (["--wiki", "https://[v1.x"], "--wiki is not a usable URL"),
        (["--prompt", "/dev/zero"], "prompt file '/dev/zero': is a character device, not a"),
    ],
)
def test_options_that_would_break_later_are_named_now(
    cli: Runner, llm: FakeOpenAI, options: list[str], problem: str
) -> None:
    assert problem in check_ask(cli, llm, *options)


def test_the_largest_allowed_values_still_run(cli: Runner, llm: FakeOpenAI) -> None:
    """The bounds refuse only what cannot be meant: their own values are usable."""
    durations = ["timeout_s", "wiki_timeout_s", "retry_backoff_s", "max_retry_after_s"]
    lines = [f"{name} = {MAX_DURATION_S}" for name in durations]
    lines += [f"{name} = {limit}" for name, limit in MAX_COUNTS.items()]
    (cli.home / "config.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert check_ask(cli, llm, "--timeout", str(MAX_DURATION_S)) == ""
    assert math.isfinite(MAX_DURATION_S)


@pytest.mark.parametrize("kind", ["fifo", "directory", "huge"])
def test_a_config_file_that_is_not_a_small_file(cli: Runner, llm: FakeOpenAI, kind: str) -> None:
    import os

    path = cli.home / "config.toml"
    path.unlink()
    if kind == "fifo":
        os.mkfifo(path)  # reading it would wait forever for a writer
    elif kind == "directory":
        path.mkdir()
    else:
        path.write_text('model = "' + "m" * (2 << 20) + '"\n', encoding="utf-8")
    error = check_ask(cli, llm)
    assert error.startswith(f"Error: config file {path}: ")


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (["replay", "--step-delay", "1e300", "x.json"], "--step-delay must be between 0 and 60"),
        (["replay", "--step-delay", "nan", "x.json"], "--step-delay must be between 0 and 60"),
        (["eval", "x.json", "--concurrency", "100000"], "must be at most 256"),
        (["eval", "x.json", "--wiki-concurrency", "257"], "must be at most 256"),
    ],
)
def test_command_options_with_upper_bounds(cli: Runner, args: list[str], problem: str) -> None:
    result = cli(args, REACT_CLI_MODEL="m")
    assert result.code == 2 and problem in one_error_line(result.stderr)
