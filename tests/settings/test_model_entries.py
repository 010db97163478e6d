"""``[models.NAME]`` in the config file: a model's endpoint, API and key, more specific than the
file's own keys and the environment, less than an option; a key only where its entry says."""

from __future__ import annotations

import json

import pytest
from inproc import Runner, one_error_line

ENTRIES = """\
base_url = "http://127.0.0.1:9/v1"
[models.local]
model = "qwen2.5-3b"
base_url = "http://127.0.0.1:8080/v1"
api = "completions"
[models."deepseek-chat"]
base_url = "https://api.deepseek.com/v1"
api_key_env = "DEEPSEEK_KEY"
[prices]
local = { input = 1.0, output = 2.0 }
"""


def settings(cli: Runner, *args: str, **env: str) -> dict[str, dict[str, object]]:
    result = cli(["config", "--json", *args], **env)
    assert result.code == 0, result.stderr
    found: dict[str, dict[str, object]] = json.loads(result.stdout)["settings"]
    return found


def test_an_entry_gives_its_model_an_endpoint_and_a_key_of_its_own(cli: Runner) -> None:
    cli.config_text(ENTRIES)
    local = settings(
        cli, "-m", "local", OPENAI_BASE_URL="http://10.0.0.1/v1", OPENAI_API_KEY="sk-x"
    )
    assert local["model"]["value"] == "qwen2.5-3b"
    assert local["base_url"] == {"value": "http://127.0.0.1:8080/v1", "from": "file [models.local]"}
    assert local["api"]["value"] == "completions"
    assert local["api_key"]["value"] is None  # OPENAI_API_KEY is not for this endpoint
    assert local["price_input"]["value"] == 1.0  # [prices] names it as -m does
    hosted = settings(cli, "-m", "deepseek-chat", DEEPSEEK_KEY="sk-deep-secret")
    assert hosted["base_url"]["value"] == "https://api.deepseek.com/v1"
    assert hosted["api_key"]["value"] not in (None, "sk-deep-secret")  # set, and masked
    flagged = settings(cli, "-m", "local", "--base-url", "http://127.0.0.1:7000/v1")
    assert flagged["base_url"] == {"value": "http://127.0.0.1:7000/v1", "from": "flag"}
    other = settings(cli, "-m", "gpt-4o-mini")
    assert other["base_url"]["value"] == "http://127.0.0.1:9/v1"  # no entry: the file's own


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        ('[models.m]\nbase = "x"\n', "unknown key(s) base"),
        (
            '[models.m]\napi_key_env = "UNSET_KEY"\n',
            "api_key_env names UNSET_KEY, which is not set",
        ),
        ('[models.m]\napi_key = "a"\napi_key_env = "B"\n', "give api_key or api_key_env, not both"),
        ("[models]\nm = 3\n", "holds one table per model: [models.NAME]"),
        ('[models.m]\napi_key_env = "NOT A NAME"\n', "is no variable name"),
    ],
)
def test_an_entry_that_is_wrong_is_named(cli: Runner, entry: str, said: str) -> None:
    cli.config_text(entry)
    result = cli(["config", "--json", "-m", "m"])
    assert result.code == 2
    assert said in one_error_line(result.stderr)
