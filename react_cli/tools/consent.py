"""Consent: a tool with side effects runs only when the user allows it.

Which tools need consent is said by their declaration (``ToolSpec.needs_consent``): an MCP
tool its server does not mark read-only (``annotations.readOnlyHint: true``; the MCP spec
says an unmarked tool may be destructive), a Python tool marked ``@tool(needs_consent=True)``;
Search, Lookup and Finish never do.

The rules (``--allow-tool``, ``--deny-tool``, the config file's ``[tools]``) are matched,
in any case as ``ToolSet`` finds tools, against each name a tool goes by: its name as the
model is shown it, its native function name, and an MCP tool's name after its server's
(``files.write_file``). A deny rule wins over an allow rule: a denied tool is left out of the
run (no prompt lists it, no native declaration names it, no call reaches it); Finish is never
denied. An allow rule gives consent ahead, for every call of the tools it matches.

A call the rules leave open is put to the user, where there is one to ask (``Question``:
``cli.consent``'s, on a terminal; on the main thread only, never an eval's workers): yes,
no, or always (this tool, for as long as the command, or a chat's conversation, lasts).
Without one, it is refused. A refused call runs nothing: its observation tells the model, in
words it can act on, and its step records who refused it (``RefusedBy``); the run goes on.

The policy is applied where a tool is called: each tool that needs consent is wrapped
(:func:`consented`) in the tool set a session makes, so both protocols, every method and a
re-run on live tools get it alike. A re-run on the recording calls no tool, so nothing is
asked; its recorded refusals are played back as they were.
"""

from __future__ import annotations

import functools
import re
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum
from typing import Protocol

from react_cli.core.records import StrEnum
from react_cli.core.trajectory import RefusedBy
from react_cli.infra.deadline import Deadline
from react_cli.settings.settings import Settings
from react_cli.tools.base import FINISH, Tool, ToolResult, ToolSpec
from react_cli.tools.origin import OriginKind


class Answer(Enum):
    """What the user answered ``Run it? [y]es / [n]o / [a]lways this tool``."""

    YES = "yes"
    NO = "no"
    ALWAYS = "always"


class Question(Protocol):
    """The question put to the user about one call (``cli.consent``: on the terminal)."""

    def __call__(self, spec: ToolSpec, argument: str) -> Answer:
        """The user's answer to running ``spec``'s tool with ``argument`` (KeyboardInterrupt
        for Ctrl-C, which stops the run as it does anywhere)."""
        ...


class Verdict(StrEnum):
    """What a rule says of the tools it matches."""

    ALLOW = "allow"
    DENY = "deny"


@dataclass(frozen=True)
class Rule:
    """The rule that applies to a tool: its verdict and the pattern that matched."""

    verdict: Verdict
    pattern: str


@dataclass(frozen=True)
class ToolRules:
    """The allow and deny patterns of a command (see the module docstring)."""

    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()

    @classmethod
    def of(cls, settings: Settings) -> ToolRules:
        return cls(settings.tool_allow, settings.tool_deny)

    def rule(self, spec: ToolSpec) -> Rule | None:
        """The rule that applies to ``spec``: the first deny pattern matching one of its
        names, else the first allow pattern; None for none (and always for Finish)."""
        if spec.name.casefold() == FINISH.name.casefold():
            return None
        known = names(spec)
        for verdict, patterns in ((Verdict.DENY, self.deny), (Verdict.ALLOW, self.allow)):
            for pattern in patterns:
                if any(matches(pattern, name) for name in known):
                    return Rule(verdict, pattern)
        return None

    def denied(self, spec: ToolSpec) -> bool:
        rule = self.rule(spec)
        return rule is not None and rule.verdict is Verdict.DENY


def names(spec: ToolSpec) -> tuple[str, ...]:
    """Every name the rules match ``spec`` by: as shown, as a native function, and (an MCP
    tool) after its server's name (``files.write_file``)."""
    found = [spec.name, spec.function_name]
    origin = spec.origin
    if origin is not None and origin.kind is OriginKind.MCP and origin.server:
        prefix = f"{origin.server}."
        if not spec.name.casefold().startswith(prefix.casefold()):
            found.append(prefix + spec.name)
    return tuple(dict.fromkeys(found))


def matches(pattern: str, name: str) -> bool:
    """Whether the glob ``pattern`` (``*`` any run of characters, ``?`` one) matches all of
    ``name``, in any case. The parts between stars are found left to right, each at its first
    place (where a glob of stars alone may put it), so nothing is tried twice: linear in the
    name for each part, never a backtracking regex."""
    pattern, name = pattern.casefold(), name.casefold()
    first, *rest = pattern.split("*")
    if not rest:
        return _part(first).fullmatch(name) is not None
    *middle, last = rest
    end = len(name) - len(last)
    if end < len(first) or not _part(first).match(name):
        return False
    if _part(last).fullmatch(name, end) is None:
        return False
    at = len(first)
    for part in filter(None, middle):
        found = _part(part).search(name, at, end)
        if found is None:
            return False
        at = found.end()
    return True


@functools.lru_cache(maxsize=1024)
def _part(text: str) -> re.Pattern[str]:
    """A part of a glob between stars: its characters, ``?`` any one."""
    return re.compile("".join("." if char == "?" else re.escape(char) for char in text), re.S)


class Consent(Protocol):
    """Whether a call may run: the seam a session's tool set calls before each call of a tool
    that needs consent (or that a rule denies)."""

    @property
    def rules(self) -> ToolRules: ...

    def refusal(self, spec: ToolSpec, argument: str) -> RefusedBy | None:
        """None when the call of ``spec``'s tool with ``argument`` may run; else who refused."""
        ...


@dataclass
class ByRules:
    """The policy of the module docstring: the rules decide; a call they leave open is put
    to ``question`` (a terminal's; None: nobody to ask, refused); "always" is remembered
    until :meth:`forget`."""

    rules: ToolRules = field(default_factory=ToolRules)
    question: Question | None = None
    always: set[str] = field(default_factory=set)  # tools the user allowed, by folded name

    def refusal(self, spec: ToolSpec, argument: str) -> RefusedBy | None:
        rule = self.rules.rule(spec)
        if rule is not None and rule.verdict is Verdict.DENY:
            return RefusedBy.DENY_RULE
        if not spec.needs_consent or rule is not None:
            return None
        key = spec.name.casefold()
        if key in self.always:
            return None
        if self.question is None or threading.current_thread() is not threading.main_thread():
            return RefusedBy.NO_TERMINAL  # an eval's workers never ask
        answer = self.question(spec, argument)
        if answer is Answer.ALWAYS:
            self.always.add(key)
        return RefusedBy.USER if answer is Answer.NO else None

    def forget(self) -> None:
        """Forget every "always" (a chat's new conversation)."""
        self.always.clear()


@dataclass(frozen=True)
class Consented:
    """A tool whose every call is first put to ``consent``; a refused call runs nothing."""

    tool: Tool
    consent: Consent

    @property
    def spec(self) -> ToolSpec:
        return self.tool.spec

    def call(self, argument: str, *, deadline: Deadline) -> ToolResult:
        started = time.monotonic()
        refused = self.consent.refusal(self.spec, argument)
        asked = time.monotonic() - started  # the user's time, not the tool's
        if refused is not None:
            said = refused_observation(self.spec.name, refused)
            return ToolResult(said, refused=refused, asked_s=asked)
        result = self.tool.call(argument, deadline=deadline)
        result.asked_s = asked
        return result


def consented(tools: Iterable[Tool], consent: Consent, *, keep_denied: bool = False) -> list[Tool]:
    """``tools`` under ``consent``: those a rule denies left out (``keep_denied``: kept, each
    call refused, for a re-run whose recording lists them), those that need consent wrapped."""
    kept: list[Tool] = []
    for tool in tools:
        denied = consent.rules.denied(tool.spec)
        if denied and not keep_denied:
            continue
        kept.append(Consented(tool, consent) if denied or tool.spec.needs_consent else tool)
    return kept


_WHY = {
    RefusedBy.USER: "",
    RefusedBy.DENY_RULE: " (a deny rule forbids it)",
    RefusedBy.NO_TERMINAL: " (it needs consent, and there was no terminal to ask)",
}


def refused_observation(name: str, refused: RefusedBy) -> str:
    """What the model is told of a refused call of ``name``: that it did not run, and what
    to do instead."""
    why = _WHY[refused]
    return (
        f"The user did not allow {name}{why}: the call did not run. Do without it: use "
        "another tool, or finish with what you know."
    )
