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
from react_cli.tools.wikipedia import PAPER_TOOLS

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
    assert step_grammar(3, PAPER_TOOLS, thoughts=True) == (
        'root ::= " " thought "\\n" "Action 3: " name "[" arg "]"\n'
        'name ::= "Search" | "Lookup" | "Finish"\n'
        "thought ::= [^\\n]{1,400}\n"
        "arg ::= [^\\]\\n]{0,200}\n"
    )
    assert step_grammar(1, SPECS, thoughts=True).count("name ::=") == 1
    assert '"Say \\"hi\\"\\\\"' in step_grammar(1, SPECS, thoughts=True)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_every_reply_a_grammar_allows_reads_as_a_valid_action(data: st.DataObject) -> None:
    for grammar, thoughts in (
        (step_grammar(2, SPECS, thoughts=True), True),
        (step_grammar(2, SPECS, thoughts=False), False),
        (action_grammar(SPECS), False),
    ):
        pattern = as_regex(grammar)
        name = data.draw(st.sampled_from([s.name for s in SPECS]))
        argument = data.draw(
            st.text(st.characters(categories=["L", "N", "Zs"]), min_size=1, max_size=30)
        )
        thought = data.draw(st.text(st.characters(categories=["L", "Zs"]), min_size=1, max_size=40))
        reply = f" {thought}\nAction 2: {name}[{argument}]" if thoughts else f" {name}[{argument}]"
        if not argument.strip():
            continue
        assert re.fullmatch(pattern, reply, re.DOTALL)
        call = parse_step(reply, SPECS).call
        assert call is not None and (call.name, call.argument) == (name, argument.strip())
        assert not re.fullmatch(pattern, reply.replace(f"{name}[", "Wikipedia["), re.DOTALL)
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
