"""Settings that go into a request header are checked when the settings are resolved (issue 18,
class 12): a contact holding a control character (a CRLF ``.env`` file's trailing CR) is one
``Error:`` line and exit 2 before anything is sent, and any other contact (``Łukasz``, ``张伟``)
is sent, percent-encoded where it is not ASCII, instead of an internal error or a run whose
every Wikipedia call fails.

(URL and ``~/.netrc`` credentials outside Latin-1, the other header-bound values, are sent as
UTF-8 Basic auth: ``test_secrets.test_credentials_from_netrc_never_show``.)
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote

import pytest
from eval_fakes import prompt_of
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, Reply
from hostile import cli_fuzz, text
from hypothesis import example, given
from inproc import GOOD_RUN, Runner, one_error_line


def _reply(body: dict[str, Any]) -> Reply:
    """Search Arthur's Magazine, then answer."""
    searched = "Observation 1:" in prompt_of(body).rpartition("Question:")[2]
    return Reply(GOOD_RUN[2] if searched else GOOD_RUN[0])


@pytest.fixture(scope="module")
def model() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(_reply) as server:
        yield server


@cli_fuzz(10)
@given(contact=text)
@example(contact="Łukasz")
@example(contact="张伟 <zhang@例子.中国>")
@example(contact="ops@example.org\r")
@example(contact="100% me, (ops) team")
def test_any_contact_is_sent_encoded_or_refused(
    cli: Runner, wiki: FakeMediaWiki, model: FakeOpenAI, contact: str
) -> None:
    cli.config(contact=contact)
    wiki.requests.clear()
    asked = len(model.requests)
    result = cli.ask(model, wiki, "--json", "--no-trace")
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    if any(unicodedata.category(char) == "Cc" for char in contact):
        line = one_error_line(result.stderr)
        assert result.code == 2 and line.startswith("Error: the contact (")
        assert "at character" in line
        assert len(model.requests) == asked and not wiki.requests  # refused before any request
        return
    assert result.code == 0, result.stderr
    observation = json.loads(result.stdout)["steps"][0]["actions"][0]["observation"]
    assert observation.startswith("Arthur's Magazine (1844"), result.stdout
    agents = {request["headers"]["User-Agent"] for request in wiki.requests}
    assert len(agents) == 1
    agent = agents.pop()
    assert all(" " <= char <= "~" for char in agent), agent  # printable ASCII
    if contact and "%" not in contact:
        assert f"({contact})" in unquote(agent)
