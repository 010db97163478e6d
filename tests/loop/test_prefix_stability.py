"""The prompt prefix stays byte-stable (issue 34), as the endpoint received it, since a silent
change loses every prompt-cache hit: in the text protocol step k+1's prompt starts with step
k's exactly (chat and completions, streamed and not, with the paper's follow-up call for a bare
thought); across an eval's questions the few-shot block is identical, byte for byte; in the
tools protocol each call's messages start with the previous call's, its tools and system
message the same for every question."""

from __future__ import annotations

import itertools
import json
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from eval_fakes import HOTPOT, HOTPOT_SCRIPTS, PerQuestion, Q, question_of
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, Reply
from inproc import Runner, servers_env
from method_fakes import SCRIPTS, MethodsEndpoint
from tool_fakes import ProtocolsEndpoint, tools_script

MAX_STEPS = "4"


def text_of(body: dict[str, Any]) -> str:
    """What a text-protocol request asks the model to continue: the prompt, or the one user
    message of a chat request."""
    if "prompt" in body:
        return str(body["prompt"])
    (message,) = body["messages"]
    return str(message["content"])


def by_question(bodies: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Each question's prompts, in the order its calls were made."""
    found: dict[str, list[str]] = defaultdict(list)
    for body in bodies:
        found[question_of(body)].append(text_of(body))
    return found


def bodies_of(llm: FakeOpenAI) -> list[dict[str, Any]]:
    return [request.json for request in llm.requests if request.json is not None]


def few_shot_block(prompt: str, question: str) -> str:
    """What comes before the question: the instruction and the examples."""
    at = prompt.rindex(f"Question: {question}")
    return prompt[:at]


# A bare thought (no action) makes the paper's follow-up call for the action alone: the
# prefix holds through it too.
SCRIPTS_WITH_FOLLOWUP: dict[str, list[str | Reply]] = {
    **HOTPOT_SCRIPTS,
    Q[2]: [
        " I should look up the magazine first.",
        "Search[Arthur's Magazine]",
        " Done.\nAction 2: Finish[1844]",
    ],
}


@pytest.mark.parametrize(
    "args",
    [(), ("--no-stream",), ("--api", "completions"), ("--api", "completions", "--no-stream")],
    ids=["chat", "chat-json", "completions", "completions-json"],
)
def test_text_prompts_only_grow_and_share_one_few_shot_block(
    cli: Runner, wiki: FakeMediaWiki, tmp_path: Path, args: tuple[str, ...]
) -> None:
    out = tmp_path / "eval"
    with FakeOpenAI(PerQuestion(SCRIPTS_WITH_FOLLOWUP)) as llm:
        command = ["eval", str(HOTPOT), "--out", str(out), "--max-steps", MAX_STEPS, *args]
        result = cli([*command, "--concurrency", "3"], **servers_env(llm, wiki))
        assert result.code == 0, result.stderr
        prompts = by_question(bodies_of(llm))
    assert set(prompts) == set(Q)
    assert max(len(calls) for calls in prompts.values()) >= 4
    assert any(prompt.endswith("\nAction 1:") for prompt in prompts[Q[2]])  # the follow-up
    for question, calls in prompts.items():
        for before, after in itertools.pairwise(calls):
            assert after.startswith(before), (question, before[-200:], after[len(before) - 200 :])
            assert len(after) > len(before)
    blocks = {few_shot_block(calls[0], question) for question, calls in prompts.items()}
    assert len(blocks) == 1  # byte for byte the same instruction and examples
    (block,) = blocks
    assert block.count("Question:") == 6  # the paper's six HotpotQA examples


def test_each_method_sends_one_few_shot_block_per_prompt_across_questions(
    cli: Runner, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    """Every method's prompt is the same bytes up to its question, whichever question."""
    out = tmp_path / "methods"
    with FakeOpenAI(MethodsEndpoint(SCRIPTS)) as llm:
        command = ["eval", str(HOTPOT), "--out", str(out), "--methods", "all", "--max-steps", "3"]
        result = cli([*command, "--samples", "3"], **servers_env(llm, wiki))
        assert result.code == 0, result.stderr
        bodies = bodies_of(llm)
    blocks: dict[str, set[str]] = defaultdict(set)
    for body in bodies:
        prompt, question = text_of(body), question_of(body)
        block = few_shot_block(prompt, question)
        blocks[block[-300:]].add(block)  # each kind of prompt ends its examples its own way
    assert len(blocks) >= 3  # ReAct's, Act's, Standard's, CoT's examples
    assert all(len(variants) == 1 for variants in blocks.values())


@pytest.fixture()
def tools_llm() -> Iterator[FakeOpenAI]:
    tools = {question: tools_script(script) for question, script in SCRIPTS.items()}
    with FakeOpenAI(ProtocolsEndpoint(MethodsEndpoint(SCRIPTS), tools)) as server:
        yield server


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "json"])
def test_tools_messages_only_grow_and_open_the_same_way(
    cli: Runner, tools_llm: FakeOpenAI, wiki: FakeMediaWiki, tmp_path: Path, stream: bool
) -> None:
    out = tmp_path / "tools"
    command = ["eval", str(HOTPOT), "--out", str(out), "--max-steps", MAX_STEPS]
    command += ["--protocol", "tools", "--concurrency", "2"] + ([] if stream else ["--no-stream"])
    result = cli(command, **servers_env(tools_llm, wiki))
    assert result.code == 0, result.stderr
    chats: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for body in bodies_of(tools_llm):
        chats[str(body["messages"][1]["content"])].append(body)
    assert len(chats) == len(Q)
    assert max(len(calls) for calls in chats.values()) >= 2
    for calls in chats.values():
        for before, after in itertools.pairwise(calls):
            sent = [json.dumps(m, sort_keys=False) for m in before["messages"]]
            again = [json.dumps(m, sort_keys=False) for m in after["messages"]]
            assert again[: len(sent)] == sent  # the chat only grows, each message the same bytes
            assert len(again) > len(sent)
            assert json.dumps(after["tools"]) == json.dumps(before["tools"])
    openings = {
        (json.dumps(calls[0]["messages"][0]), json.dumps(calls[0]["tools"]))
        for calls in chats.values()
    }
    assert len(openings) == 1  # one system message and one tool list for every question
