"""Native function calling: the run's tools declared to the chat endpoint, its calls run and
answered with ``role: tool`` messages (``--protocol tools``).

The chat starts with a system message (the template's instruction, the paper's adapted to
tools) and the question as a user message. Each step's request declares every tool of the set
(``search(entity)``, ``lookup(keyword)``, ``finish(answer)``, and any other, each with the JSON
Schema of its arguments); the reply's text is the step's thought and its call the step's
action, recorded as the paper writes it (``Search[X]``). The call's answer is a ``role: tool``
message carrying its id and exactly the observation the text protocol would show.

Several calls in one reply are one step each, in order, each answered: the reply (its text,
message, cost and time) is booked on the first; the others record it as their
``reply_step`` and make no model call. A ``finish`` among them ends the run after the calls
before it. A call the run cannot make is a step without a valid action (it counts toward
``max_parse_errors``) whose answer tells the model what was wrong. A reply without any call
gets one follow-up request asking for one (``tool_choice: "required"``, where the endpoint
takes it), as the paper asks for a missing action; Act asks for a call from the start.
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
from collections import deque
from collections.abc import Sequence
from typing import Any

from react_cli.core.conversation import Earlier, Turn, TurnStep, tokens
from react_cli.core.records import ToolCall
from react_cli.core.trajectory import Step
from react_cli.llm.base import AUTO, REQUIRED, CallKind, Completion, ModelRequest, ToolChoice
from react_cli.llm.toolcalls import assistant_message
from react_cli.loop.events import ActionChosen, ActionRequested, ThoughtStarted
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
NOT_RUN = "Not run: the step limit was reached."


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
        transcript.messages[1:1] = messages
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
    """One run's chat so far, the calls of the last reply still to run, and the tools."""

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
        self._pending: deque[tuple[ReadCall, int]] = deque()  # a call, the step of its reply
        self._answering: str | None = None  # the id the next observation answers
        self._rejection: str | None = None  # why the last turn's call is not valid

    @property
    def invalid_action(self) -> str:
        return self._rejection or no_call_hint(self.specs)

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
        if self._pending:  # the next call of an earlier reply: no model call
            read, reply_step = self._pending.popleft()
            step.reply_step = reply_step
            self._take(step, read, exchange)
            return
        exchange.tell(ThoughtStarted(k) if self.thoughts else ActionRequested(k))
        first = AUTO if self.thoughts else REQUIRED
        completion = exchange.ask(self._request(CallKind.STEP, k, first), step)
        step.raw, step.message = completion.text, _message(completion)
        calls, text = self._read(completion, k)
        step.thought = thought_of(text) if self.thoughts else ""
        if not calls:
            if completion.finish_reason == "length":
                step.max_tokens_reached = True
            self._append_text(completion.text)
            self.messages.append({"role": "user", "content": FOLLOWUP_CUE})
            exchange.tell(ActionRequested(k))
            completion = exchange.ask(self._request(CallKind.FOLLOWUP, k, REQUIRED), step)
            step.followup_raw, step.followup_message = completion.text, _message(completion)
            calls, _ = self._read(completion, k)
            if not calls:
                self._append_text(completion.text)
        if not calls:
            step.call, step.action = None, None
            self._answering, self._rejection = None, None
            return
        self._pending.extend((read, k) for read in calls[1:])
        self._take(step, calls[0], exchange)

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

    def _take(self, step: Step, read: ReadCall, exchange: Exchange) -> None:
        step.call, step.action = read.call, read.action
        self._answering, self._rejection = read.id, read.error
        exchange.tell(ActionChosen(step.index, read.action))

    def observe(self, step: Step) -> None:
        if self._answering is not None:
            self.messages.append(
                {"role": "tool", "tool_call_id": self._answering, "content": step.observation}
            )
        else:
            self.messages.append({"role": "user", "content": step.observation})
        self._answering = None

    def force_answer(self, step: Step, exchange: Exchange) -> None:
        """Every call still waiting is answered as not run; then ``finish`` is asked for by
        name, and its answer taken (no answer without a ``finish`` call)."""
        k = step.index
        while self._pending:
            read, _ = self._pending.popleft()
            self.messages.append({"role": "tool", "tool_call_id": read.id, "content": NOT_RUN})
        self.messages.append({"role": "user", "content": FORCED_CUE})
        exchange.tell(ActionRequested(k))
        choice = ToolChoice.of(FINISH.function_name)
        completion = exchange.ask(self._request(CallKind.FORCED, k, choice), step)
        step.raw, step.message = completion.text, _message(completion)
        finish = next(
            (
                read.call
                for read in self._read(completion, k)[0]
                if read.call is not None and read.call.name == FINISH.name
            ),
            None,
        )
        if finish is not None and finish.argument:
            step.call, step.action = finish, str(finish)
            exchange.tell(ActionChosen(k, step.action))


def _message(completion: Completion) -> dict[str, Any]:
    """The reply's assistant message as received (a model that gives none: made from it)."""
    return completion.message or assistant_message(completion.text, completion.tool_calls)
