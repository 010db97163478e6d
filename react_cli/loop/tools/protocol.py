"""Native function calling: the run's tools declared to the chat endpoint, its calls run and
answered with ``role: tool`` messages (``--protocol tools``).

The chat starts with a system message (the template's instruction, the paper's adapted to
tools), the template's example messages if it has any (a distilled prompt's), and the
question as a user message. Each step's request declares every tool of the set
(``search(entity)``, ``lookup(keyword)``, ``finish(answer)``, and any other, each with the JSON
Schema of its arguments); the reply's text is the step's thought and its call the step's
action, recorded as the paper writes it (``Search[X]``). The call's answer is a ``role: tool``
message carrying its id and exactly the observation the text protocol would show.

Several calls in one reply are one step's actions, run in order and each answered; a
``finish`` among them ends the run after the calls before it. A call the run cannot make is
an action that is not run, whose answer tells the model what was wrong; a step none of whose
calls can be made has no valid action (it counts toward ``max_parse_errors``). A reply
without any call gets one follow-up request asking for one (``tool_choice: "required"``,
where the endpoint takes it), as the paper asks for a missing action; Act asks for a call
from the start.
``--force-answer`` asks for ``finish`` by name. The chat only grows by appending, so servers'
prefix caches keep hitting.

A follow-up question of a conversation comes after the earlier turns' messages, between the
system message and its own: each earlier question as a user message, each reply that made
calls as an assistant message with them (``finish`` too), each call answered by its
observation cut to a line (the turn's trace keeps it whole), ``finish`` by the answer; the
newest turns kept within the budget (:func:`earlier_messages`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from react_cli.core.conversation import Earlier, Turn, TurnStep, tokens
from react_cli.core.records import ToolCall
from react_cli.core.trajectory import Action, Cue, Reply, Step
from react_cli.llm.base import AUTO, REQUIRED, CallKind, Completion, ModelRequest, ToolChoice
from react_cli.llm.toolcalls import assistant_message
from react_cli.loop.prompts import PromptTemplate
from react_cli.loop.protocol import NO_EARLIER, Exchange, Protocol, Transcript
from react_cli.loop.tools.calls import (
    ReadCall,
    calls_in_text,
    kept_text,
    no_call_hint,
    read_call,
    thought_of,
    tool_list,
    wire_call,
)
from react_cli.tools.base import FINISH, ToolSet, ToolSpec

FOLLOWUP_CUE = "Call one of your tools now."
FORCED_CUE = "You have no steps left: call finish with your best answer now."


class ToolsProtocol(Protocol):
    """Native tool calls (with thoughts: ReAct; without: Act)."""

    def start(
        self,
        template: PromptTemplate,
        question: str,
        tools: ToolSet,
        earlier: Earlier = NO_EARLIER,
    ) -> ToolsTranscript:
        system, user = template.chat(question, tool_list(tools.specs))
        transcript = ToolsTranscript(system, user, tools.specs, thoughts=self.thoughts)
        messages, transcript.earlier = earlier_messages(earlier, template, tools.specs)
        transcript.messages[1:1] = [*template.examples, *messages]
        return transcript


def earlier_messages(
    earlier: Earlier, template: PromptTemplate, specs: Sequence[ToolSpec]
) -> tuple[list[dict[str, Any]], tuple[Turn, ...]]:
    """The messages of the earlier turns a follow-up question comes after, and the turns
    they hold: the newest whose messages stay within ``max_tokens``."""
    listed = tool_list(specs)

    def size(turn: Turn) -> int:
        return tokens(json.dumps(_turn_messages(turn, 0, template, specs, listed)))

    kept = earlier.kept(size)
    messages = [
        message
        for number, turn in enumerate(kept, start=1)
        for message in _turn_messages(turn, number, template, specs, listed)
    ]
    return messages, kept


def _turn_messages(
    turn: Turn, number: int, template: PromptTemplate, specs: Sequence[ToolSpec], listed: str
) -> list[dict[str, Any]]:
    """One earlier turn as the chat showed it, its calls given ids of their own
    (``earlier_2_1``: turn 2's first call)."""
    user = template.chat(turn.question, listed)[1]
    messages: list[dict[str, Any]] = [{"role": "user", "content": user}]
    replies: dict[int, list[TurnStep]] = {}
    for step in turn.steps:
        replies.setdefault(step.reply, []).append(step)
    finished = False
    count = 0
    for steps in replies.values():
        calls = []
        for step in steps:
            count += 1
            calls.append(wire_call(step.call, specs, f"earlier_{number}_{count}"))
        messages.append(assistant_message(steps[0].thought, tuple(calls)))
        for step, call in zip(steps, calls, strict=True):
            finish = step.call.name.casefold() == FINISH.name.casefold()
            finished = finished or finish
            content = (turn.answer or "") if finish else step.observation
            messages.append({"role": "tool", "tool_call_id": call.id, "content": content})
    if not finished:  # answered without a finish call (Standard, CoT, CoT-SC)
        messages.append(assistant_message(turn.answer or "", ()))
    return messages


class ToolsTranscript(Transcript):
    """One run's chat so far, the ids the last step's answers carry, and the tools."""

    def __init__(
        self, system: str, user: str, specs: tuple[ToolSpec, ...], *, thoughts: bool
    ) -> None:
        self.messages: list[dict[str, Any]] = [
            {"role": "system", "content": system},
            {"role": "user", "content": user},
        ]
        self.specs = specs
        self.declarations = tuple(spec.declaration() for spec in specs)
        self.thoughts = thoughts
        self._answering: list[str | None] = []  # each action's call id (None: no call)

    def _request(self, kind: CallKind, step: int, choice: ToolChoice) -> ModelRequest:
        return ModelRequest(
            kind,
            "",
            step=step,
            messages=tuple(self.messages),
            tools=self.declarations,
            tool_choice=choice,
        )

    def turn(self, step: Step, exchange: Exchange) -> None:
        k = step.index
        cue = Cue.THOUGHT if self.thoughts else Cue.ACTION
        first = AUTO if self.thoughts else REQUIRED
        completion = exchange.ask(self._request(CallKind.STEP, k, first), step, cue)
        calls, text = self._read(completion, k)
        thought = thought_of(text) if self.thoughts else None
        if not calls:
            self._append_text(completion.text)
            self.messages.append({"role": "user", "content": FOLLOWUP_CUE})
            cut = completion.finish_reason == "length"
            exchange.replied(step, _reply(cue, completion, cut), thought=thought)
            request = self._request(CallKind.FOLLOWUP, k, REQUIRED)
            completion = exchange.ask(request, step, Cue.ACTION)
            calls, _ = self._read(completion, k)
            if not calls:
                self._append_text(completion.text)
            cue, thought = Cue.ACTION, None
        self._answering = [read.id for read in calls] or [None]
        actions = [Action(read.action, read.call, read.error or "") for read in calls]
        no_call = Action(None, None, no_call_hint(self.specs))
        exchange.replied(step, _reply(cue, completion), actions or [no_call], thought)

    def _read(self, completion: Completion, k: int) -> tuple[list[ReadCall], str]:
        """The reply's calls (native, else written into its text), each with a unique id, and
        its text without them; appends the reply to the chat when it has any call."""
        wire, text = list(completion.tool_calls), completion.text
        if not wire:
            wire, text = calls_in_text(completion.text)
        if not wire:
            return [], text
        ids: set[str] = set()
        reads, sent = [], []
        for number, call in enumerate(wire, start=1):
            call_id = call.id if call.id and call.id not in ids else f"call_{k}_{number}"
            ids.add(call_id)
            reads.append(read_call(call, call_id, self.specs))
            sent.append(ToolCall(call.name, call.argument, call_id))
        self.messages.append(assistant_message(kept_text(text), tuple(sent)))
        return reads, text

    def _append_text(self, text: str) -> None:
        if text.strip():
            self.messages.append(assistant_message(kept_text(text), ()))

    def observe(self, step: Step) -> None:
        for action, call_id in zip(step.actions, self._answering, strict=False):
            if call_id is not None:
                answer = {"role": "tool", "tool_call_id": call_id, "content": action.observation}
                self.messages.append(answer)
            else:
                self.messages.append({"role": "user", "content": action.observation})

    def force_answer(self, step: Step, exchange: Exchange) -> None:
        """``finish`` is asked for by name, and its answer taken (no answer without a
        ``finish`` call)."""
        k = step.index
        self.messages.append({"role": "user", "content": FORCED_CUE})
        choice = ToolChoice.of(FINISH.function_name)
        completion = exchange.ask(self._request(CallKind.FORCED, k, choice), step, Cue.ACTION)
        finish = next(
            (
                read.call
                for read in self._read(completion, k)[0]
                if read.call is not None and read.call.name == FINISH.name
            ),
            None,
        )
        actions = [Action(str(finish), finish)] if finish is not None and finish.argument else []
        exchange.replied(step, _reply(Cue.ACTION, completion), actions)


def _reply(cue: Cue, completion: Completion, cut: bool = False) -> Reply:
    """A reply as received: its text and assistant message (a model that gives none: one made
    from them); ``cut``: max_tokens stopped it before any call."""
    message = completion.message or assistant_message(completion.text, completion.tool_calls)
    return Reply(cue, completion.text, message, max_tokens_reached=cut)
