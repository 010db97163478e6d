"""``--constrain``'s grammars: built from the run's tool set, every literal escaped, every rule
defined (llama.cpp's server dies on a grammar it cannot parse), and every reply a grammar allows
read by the parser as the step's action; the text protocol sends one with each call."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st
from scripted import DictTools, Loop, ScriptedModel

from react_cli.llm.base import CallKind
from react_cli.loop.limits import Limits
from react_cli.loop.text.grammar import action_grammar, answer_grammar, literal, step_grammar
from react_cli.loop.text.parser import parse_step
from react_cli.tools.base import FINISH, ToolSpec
from react_cli.tools.paper import PAPER_TOOLS

_RULE = re.compile(r"^([a-z0-9-]+) ::= (.*)$")
_TOKEN = re.compile(
    r'\s*(?:(?P<lit>"(?:[^"\\\n]|\\(?:[nrt"\\]|x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4}))*")'
    r"|(?P<cls>\[\^?(?:[^\]\\\n]|\\.)+\])(?P<rep>\{\d+,\d+\})?"
    r"|(?P<ref>[a-z0-9-]+)|(?P<alt>\|))"
)


def unescape(lit: str) -> str:
    body, out, i = lit[1:-1], [], 0
    while i < len(body):
        if body[i] != "\\":
            out.append(body[i])
            i += 1
            continue
        kind = body[i + 1]
        if kind in "xu":
            size = 2 if kind == "x" else 4
            out.append(chr(int(body[i + 2 : i + 2 + size], 16)))
            i += 2 + size
        else:
            out.append({"n": "\n", "r": "\r", "t": "\t"}.get(kind, kind))
            i += 2
    return "".join(out)


def as_regex(grammar: str) -> str:
    """The grammar (non-recursive, as ours are) as a Python regex; AssertionError for anything
    outside the subset we write, or a rule used but not defined."""
    rules: dict[str, str] = {}
    for line in grammar.strip().split("\n"):
        match = _RULE.match(line)
        assert match, line
        rules[match.group(1)] = match.group(2)

    def expand(name: str) -> str:
        body, pos, parts = rules[name], 0, []
        while pos < len(body):
            token = _TOKEN.match(body, pos)
            assert token and token.end() > pos, (name, body[pos:])
            pos = token.end()
            if token["lit"]:
                parts.append(re.escape(unescape(token["lit"])))
            elif token["cls"]:
                cls = token["cls"].replace("\\n", "\n")
                parts.append(cls + (token["rep"] or ""))
            elif token["alt"]:
                parts.append("|")
            else:
                assert token["ref"] in rules, f"{token['ref']} is not defined"
                parts.append(f"(?:{expand(token['ref'])})")
        return "".join(parts)

    return expand("root")


SPECS = (*PAPER_TOOLS[:2], ToolSpec('Say "hi"\\', "x", "odd."), FINISH)


@given(st.text())
def test_a_literal_is_the_text_it_says(text: str) -> None:
    lit = literal(text)
    assert "\n" not in lit and _TOKEN.fullmatch(lit)
    assert unescape(lit) == text.translate({c: 0xFFFD for c in range(0xD800, 0xE000)})


def test_the_grammars_are_the_research_notes_shape() -> None:
    grammar = step_grammar(3, PAPER_TOOLS, thoughts=True).splitlines()
    assert grammar[:2] == [
        'root ::= " " thought "\\n" "Action 3: " name "[" arg "]"',
        'name ::= "Search" | "Lookup" | "Finish"',
    ]
    assert [line.split(" ::= ")[0] for line in grammar] == [
        "root",
        "name",
        "thought",
        "head",
        "arg",
    ]
    assert step_grammar(3, PAPER_TOOLS, thoughts=False) == action_grammar(PAPER_TOOLS)
    assert '"Say \\"hi\\"\\\\"' in step_grammar(1, SPECS, thoughts=True)


REPLIES = st.one_of(
    st.from_regex(as_regex(step_grammar(2, SPECS, thoughts=True)), fullmatch=True),
    st.from_regex(as_regex(action_grammar(SPECS)), fullmatch=True),
)


@settings(max_examples=60, deadline=None)
@given(REPLIES)
def test_every_reply_a_grammar_allows_reads_as_its_action(reply: str) -> None:
    parsed = parse_step(reply, SPECS)
    assert parsed.call is not None, reply
    action = reply.split("\n")[-1]
    name, _, written = action.removeprefix(" ").removeprefix("Action 2: ").partition("[")
    assert (parsed.call.name, parsed.call.argument) == (name, written[:-1].strip())
    if "\n" in reply:  # a thought came first: it survived the cut of invented observations
        assert parsed.thought


def test_the_grammar_allows_a_plain_step_and_refuses_what_the_parser_would_not_read() -> None:
    pattern = as_regex(step_grammar(2, SPECS, thoughts=True))
    for allowed in (
        " I need to search Ed Wood.\nAction 2: Search[Ed Wood]",
        " Only.\nAction 2: Finish[x]",
    ):
        assert re.fullmatch(pattern, allowed)
    for refused in (
        " Observation 2: x\nAction 2: Search[y]",
        " x\nAction 2: Search[ ]",
        " x\nAction 2: Search[\x1f]",
        " x <think>\nAction 2: Search[y]",
        " x\nAction 2: Wikipedia[y]",
        " x\nAction 3: Search[y]",
    ):
        assert not re.fullmatch(pattern, refused), refused
    assert re.fullmatch(as_regex(answer_grammar()), "Tim Burton]")


def test_the_text_protocol_sends_a_grammar_with_each_kind_of_call() -> None:
    model = ScriptedModel([" thinking", " Search[Ed Wood]", "Tim Burton]"])
    loop = Loop(
        model, DictTools({"Ed Wood": "A film."}), limits=Limits(max_steps=1, force_answer=True)
    )
    loop.constrain = True
    result = loop.run("Q\n", "Who?")
    assert result.answer == "Tim Burton"
    kinds = [(r.kind, r.grammar) for r in model.requests]
    assert kinds == [
        (CallKind.STEP, step_grammar(1, PAPER_TOOLS, thoughts=True)),
        (CallKind.FOLLOWUP, action_grammar(PAPER_TOOLS)),
        (CallKind.FORCED, answer_grammar()),
    ]
    plain = ScriptedModel([" ok\nAction 1: Finish[x]"])
    Loop(plain, DictTools({})).run("Q\n", "Who?")
    assert plain.requests[0].grammar is None
