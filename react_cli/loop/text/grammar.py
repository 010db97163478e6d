"""GBNF grammars that constrain a text-protocol reply (``--constrain``): one thought line, then
``Action k: Name[argument]`` with Name a tool of the run's set.

llama.cpp's server and llama-cpp-python's take a GBNF ``grammar`` on both endpoints (vLLM's
``structured_outputs`` reads the same text: xgrammar's EBNF is compatible). A grammar the
server cannot parse kills llama.cpp's server, so every literal is written by
:func:`literal` (quote, backslash and control characters escaped) and every class is a fixed
one; nothing the model or the user wrote reaches a grammar but the tool names. The step number
is a literal (a grammar left to write it gives ``Action 2005:``); text and arguments are
bounded (``{m,n}``), so a constrained reply always ends. The grammar allows only what the
parser reads as the action: the thought never starts like an invented ``Observation`` line
(which the client cuts), holds no ``<`` (a ``<think>`` block would swallow the action), and an
argument starts with neither a space nor ``]`` (an empty argument is no action).
"""

from __future__ import annotations

from collections.abc import Sequence

from react_cli.tools.base import ToolSpec

THOUGHT_CHARS = 400
ARGUMENT_CHARS = 200
# Characters no part of a reply holds: controls (newlines among them), Unicode line breaks.
_NEVER = "\\x00-\\x1f\\x7f\\x85\\u2028\\u2029"
# Spaces Python's str.strip() removes: an argument starting with one would be read without it.
_SPACES = "\\x20\\xa0\\u1680\\u2000-\\u200a\\u202f\\u205f\\u3000"
_CLOSE = "\\]］"  # the brackets that end an argument, as the parser reads them
THOUGHT = (
    f"thought ::= head [^{_NEVER}<]{{0,{THOUGHT_CHARS - 2}}}",
    f"head ::= [^{_NEVER}{_SPACES}<*_#>Oo] [^{_NEVER}<] | [Oo] [^{_NEVER}<Bb]",
)
ARGUMENT = f"arg ::= [^{_NEVER}{_SPACES}{_CLOSE}［] [^{_NEVER}{_CLOSE}［]{{0,{ARGUMENT_CHARS - 1}}}"


def literal(text: str) -> str:
    """``text`` as a GBNF string literal."""
    out = []
    for char in text:
        code = ord(char)
        if char in '"\\':
            out.append("\\" + char)
        elif char == "\n":
            out.append("\\n")
        elif char == "\r":
            out.append("\\r")
        elif char == "\t":
            out.append("\\t")
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02X}")
        elif 0xD800 <= code <= 0xDFFF:  # a lone surrogate cannot be sent as UTF-8
            out.append("\\uFFFD")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def _names(specs: Sequence[ToolSpec]) -> str:
    return "name ::= " + " | ".join(literal(spec.name) for spec in specs)


def _grammar(*rules: str) -> str:
    return "\n".join(rules) + "\n"


def step_grammar(step: int, specs: Sequence[ToolSpec], *, thoughts: bool) -> str:
    """A step's reply after ``Thought k:`` (ReAct) or ``Action k:`` (Act)."""
    if not thoughts:
        return action_grammar(specs)
    head = f'root ::= " " thought "\\n" {literal(f"Action {step}: ")} name "[" arg "]"'
    return _grammar(head, _names(specs), *THOUGHT, ARGUMENT)


def action_grammar(specs: Sequence[ToolSpec]) -> str:
    """The reply to the paper's extra call for the action alone, or an Act step's (after
    ``Action k:``)."""
    return _grammar('root ::= " " name "[" arg "]"', _names(specs), ARGUMENT)


def answer_grammar() -> str:
    """The reply after ``--force-answer``'s ``Action k: Finish[``: the answer and ``]``."""
    return _grammar('root ::= arg "]"', ARGUMENT)
