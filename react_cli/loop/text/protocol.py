"""The paper's text protocol: a few-shot prompt the model continues, ``Thought k:`` /
``Action k: Name[argument]`` / ``Observation k:``, with stop sequences.

As in the paper: a thought without an action gets one extra call for ``Action k:`` alone (its
reply read to the end of the line); Act asks for ``Action k:`` only; ``--force-answer`` appends
``Action k: Finish[`` at the step limit and takes the rest of the line as the answer. The
prompt only grows by appending the kept model text and the observation, so servers' prefix
caches keep hitting. With ``constrain`` (``--constrain``) every call sends a grammar
(``grammar``) the reply must follow: a thought line, then ``Action k: Name[argument]``. A
follow-up question of a conversation is preceded by an ``Earlier in this conversation:`` block
holding each earlier ``Question:`` and its ``Answer:`` (:func:`earlier_block`), the newest kept
within the budget; every call of the paper's methods (CoT-SC's samples too) starts with it.
"""

from __future__ import annotations

from dataclasses import replace

from react_cli.core.conversation import Earlier, Turn, tokens
from react_cli.core.records import ToolCall
from react_cli.core.trajectory import Action, Cue, Reply, Step
from react_cli.llm.base import CallKind, Completion, ModelRequest
from react_cli.loop.prompts import QUESTION_MARKER, TOOLS_MARKER, PromptTemplate
from react_cli.loop.protocol import NO_EARLIER, Exchange, Protocol, Transcript
from react_cli.loop.text.cutter import ObservationCutter, strip_think
from react_cli.loop.text.grammar import action_grammar, answer_grammar, step_grammar
from react_cli.loop.text.parser import (
    ParsedStep,
    first_line,
    ignored_text,
    kept_in_prompt,
    parse_step,
)
from react_cli.loop.text.shown import ThoughtShown
from react_cli.tools.base import FINISH, ToolSet, ToolSpec
from react_cli.tools.paper import PAPER_TOOLS
from react_cli.tools.schema import ArgumentError, example, parameter_notes

# The model must stop before writing the tool's answer; a base model that finished its step
# often goes on with a whole new few-shot example, so a new Question/Claim line stops it too.
STOP_SEQUENCES = ("\nObservation", "\nQuestion:", "\nClaim:")
FORCED_CUE = "Finish["
LINE_END = ("\n",)
EARLIER_HEADING = "Earlier in this conversation:\n"


def earlier_block(earlier: Earlier) -> tuple[str, tuple[Turn, ...]]:
    """The ``Earlier in this conversation:`` block of a follow-up question, each earlier
    ``Question:`` and ``Answer:`` on a line of its own, and the turns it holds: the newest
    whose block stays within ``max_tokens`` ("" and none when not even the newest fits)."""
    budget = replace(earlier, max_tokens=earlier.max_tokens - tokens(EARLIER_HEADING))
    kept = budget.kept(lambda turn: tokens(_turn_lines(turn)))
    if not kept:
        return "", ()
    return EARLIER_HEADING + "".join(_turn_lines(turn) for turn in kept), kept


def _turn_lines(turn: Turn) -> str:
    question, answer = (" ".join(text.split()) for text in (turn.question, turn.answer or ""))
    return f"Question: {question}\nAnswer: {answer}\n"


_COUNTS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
PAPER_COUNT = "Action can be three types"


def written(spec: ToolSpec) -> str:
    """How a call of the tool is written: ``Search[entity]``, or (several arguments) its JSON
    object in the brackets, ``Concat[{"a": "...", "b": "..."}]``."""
    shown = spec.argument if spec.parameters is None else example(spec.schema, every=True)
    return f"{spec.name}[{shown}]"


def tool_lines(specs: tuple[ToolSpec, ...]) -> str:
    """The tools as the paper's instruction lists them: ``(1) Search[entity], which ...`` (a
    description that starts as a sentence, as a docstring does: ``(4) Calculate[expression]:
    Evaluate ...``), a tool of several arguments followed by what each is (its type, allowed
    values, whether it is optional, its description: ``Parameters: unit (one of "km", "mi"):
    ...``), each tool on one line."""
    return "\n".join(_tool_line(number, spec) for number, spec in enumerate(specs, start=1))


def _tool_line(number: int, spec: ToolSpec) -> str:
    said = spec.description
    line = f"({number}) {written(spec)}" + (
        f", which {said}" if said[:1].islower() else f": {said}"
    )
    notes = "" if spec.parameters is None else parameter_notes(spec.schema)
    if not notes:
        return line
    return f"{line}{'' if line.endswith(('.', '!', '?')) else '.'} Parameters: {notes}."


def prompt_start(
    template: PromptTemplate, question: str, specs: tuple[ToolSpec, ...], earlier: str = ""
) -> str:
    """The prompt before the first step, its instruction listing the run's tools, and a
    conversation's ``earlier`` turns before the question's line.

    A template's ``{tools}`` marker is where they go. The shipped paper prompts have none:
    they keep the paper's text verbatim, which lists (ReAct) or shows (the examples) its three
    tools, and so they stay while those are the run's. The model learns of another tool only
    from the instruction, where the paper lists its own: so when the run's tools are not the
    paper's (tools from files or servers, ``--no-wiki``), the paper's list is replaced by
    theirs (its "three types" counted again), and a prompt without that list (Act's, FEVER's,
    a file without a marker) gets theirs before its question's line.
    """
    if TOOLS_MARKER in template.text:
        return template.prefix(question, tool_lines(specs), earlier)
    text = template.prefix(question, earlier=earlier)
    if [(s.name, s.argument) for s in specs] == [(s.name, s.argument) for s in PAPER_TOOLS]:
        return text
    kinds = f"Action can be {_types(len(specs))}"
    paper = tool_lines(PAPER_TOOLS)
    if paper in text:
        text = text.replace(paper, tool_lines(specs), 1)
        return text.replace(PAPER_COUNT, kinds, 1)
    head = template.text[: max(0, template.text.find(QUESTION_MARKER))]
    line = head.rfind("\n") + 1
    listing = f"{kinds}:\n{tool_lines(specs)}\n\n"
    return text[:line] + listing + text[line:]


def _types(count: int) -> str:
    """``one type``, ``three types``, ``14 types``: how many kinds of action the run has."""
    word = _COUNTS[count] if count < len(_COUNTS) else str(count)
    return f"{word} type" if count == 1 else f"{word} types"


OBSERVATION_INDENT = "  "


def observation_lines(index: int, observation: str) -> str:
    """What the prompt gets for an observation: the paper's ``Observation k: text`` line
    (every Wikipedia observation is one line), or, for a result of several lines,
    ``Observation k:`` and each line under it indented (blank ones left empty), so no line of
    a tool's result begins like ``Thought``, ``Action`` or ``Observation`` (nor stops the
    model's next reply as a stop sequence would)."""
    if "\n" not in observation:
        return f"\nObservation {index}: {observation}\n"
    lines = (OBSERVATION_INDENT + line if line else "" for line in observation.split("\n"))
    return f"\nObservation {index}:\n" + "\n".join(lines) + "\n"


def invalid_action_hint(specs: tuple[ToolSpec, ...]) -> str:
    """``Invalid action. Valid actions are Search[entity], Lookup[keyword] and Finish[answer].``"""
    actions = [written(spec) for spec in specs]
    listed = ", ".join(actions[:-1]) + " and " + actions[-1] if len(actions) > 1 else actions[0]
    return f"Invalid action. Valid actions are {listed}."


class TextProtocol(Protocol):
    """The paper's prompt format (with thoughts: ReAct; without: Act), its replies constrained
    by a grammar with ``constrain``."""

    def __init__(self, *, thoughts: bool = True, constrain: bool = False) -> None:
        super().__init__(thoughts=thoughts)
        self.constrain = constrain

    def start(
        self,
        template: PromptTemplate,
        question: str,
        tools: ToolSet,
        earlier: Earlier = NO_EARLIER,
    ) -> TextTranscript:
        block, kept = earlier_block(earlier)
        prompt = prompt_start(template, question, tools.specs, block)
        transcript = TextTranscript(
            prompt, tools.specs, thoughts=self.thoughts, constrain=self.constrain
        )
        transcript.earlier = kept
        return transcript


class TextTranscript(Transcript):
    """One run's prompt so far, and the actions its replies are read against."""

    def __init__(
        self,
        prompt: str,
        specs: tuple[ToolSpec, ...],
        *,
        thoughts: bool,
        constrain: bool = False,
    ) -> None:
        self.prompt = prompt
        self.specs = specs
        self.thoughts = thoughts
        self.constrain = constrain

    def _request(self, kind: CallKind, step: int, stop: tuple[str, ...]) -> ModelRequest:
        return ModelRequest(
            kind, self.prompt, stop, step, ObservationCutter, grammar=self._grammar(kind, step)
        )

    def _grammar(self, kind: CallKind, step: int) -> str | None:
        if not self.constrain:
            return None
        if kind is CallKind.STEP:
            return step_grammar(step, self.specs, thoughts=self.thoughts)
        return action_grammar(self.specs) if kind is CallKind.FOLLOWUP else answer_grammar()

    def turn(self, step: Step, exchange: Exchange) -> None:
        k = step.index
        cue = Cue.THOUGHT if self.thoughts else Cue.ACTION
        self.prompt += f"Thought {k}:" if self.thoughts else f"Action {k}:"
        shown = ThoughtShown(self.specs) if self.thoughts else None
        request = self._request(CallKind.STEP, k, STOP_SEQUENCES)
        completion = exchange.ask(request, step, cue, shown)
        parsed = parse_step(completion.text, self.specs)
        thought = parsed.thought if self.thoughts else None
        if parsed.action_text is None and self.thoughts:  # the loop keeps its first line
            thought = parse_step(first_line(completion.text), self.specs).thought
        if parsed.action_text is not None:
            self.prompt += kept_in_prompt(completion.text, self.specs)
        elif not self.thoughts:  # Act: this was the action call; like a failed "Action k:"
            self.prompt += first_line(completion.text)
        else:
            # As in the paper: keep the thought, then ask for the action alone.
            exchange.replied(step, self._reply(cue, completion, parsed), thought=thought)
            self.prompt += f"{first_line(completion.text)}\nAction {k}:"
            request = self._request(CallKind.FOLLOWUP, k, LINE_END)
            completion = exchange.ask(request, step, Cue.ACTION)
            parsed = parse_step(completion.text, self.specs)
            self.prompt += kept_in_prompt(completion.text, self.specs)
            cue, thought = Cue.ACTION, None
        action = self._action(parsed)
        exchange.replied(step, self._reply(cue, completion, parsed), [action], thought)

    def _reply(self, cue: Cue, completion: Completion, parsed: ParsedStep) -> Reply:
        """A reply as read: what of it the loop ignores, whether max_tokens cut it before its
        action (the command warns: a cut thought costs an extra call and often the action)."""
        text = completion.text
        ignored = ignored_text(text, thought_call=cue is Cue.THOUGHT, specs=self.specs)
        cut = completion.finish_reason == "length" and parsed.action_text is None
        return Reply(cue, text, ignored=ignored, max_tokens_reached=cut)

    def _action(self, parsed: ParsedStep) -> Action:
        """The action a reply wrote, with the argument its tool runs with (a JSON object's
        canonical text, for a tool of several arguments); one that cannot be run tells the
        model which actions there are, or why it does not fit its tool."""
        written, call = parsed.action_text or None, parsed.call
        if call is None:
            return Action(written, None, invalid_action_hint(self.specs))
        spec = next((s for s in self.specs if s.name == call.name), None)
        if spec is None:
            return Action(written, call)
        try:
            return Action(written, ToolCall(call.name, spec.read_argument(call.argument)))
        except ArgumentError as exc:
            return Action(written, None, f"Invalid action: {exc}.")

    def observe(self, step: Step) -> None:
        for action in step.actions:
            self.prompt += observation_lines(step.index, action.observation)

    def force_answer(self, step: Step, exchange: Exchange) -> None:
        """The prompt ends with the last observation; ``Action k: Finish[`` is appended and
        the model's continuation up to the end of the line is the answer."""
        k = step.index
        prompt = f"{self.prompt}Action {k}: {FORCED_CUE}"
        grammar = self._grammar(CallKind.FORCED, k)
        request = ModelRequest(
            CallKind.FORCED, prompt, LINE_END, k, ObservationCutter, grammar=grammar
        )
        completion = exchange.ask(request, step, Cue.ACTION)
        call = parse_step(completion.text, self.specs).call  # it may restate "Action k: Finish[x]"
        if call is None or call.name != FINISH.name:
            line = strip_think(completion.text).split("\n")[0]
            cued = FORCED_CUE + line + ("" if "]" in line else "]")
            call = parse_step(cued, self.specs).call
        answered = call is not None and call.name == FINISH.name and bool(call.argument)
        actions = [Action(str(call), call)] if answered and call is not None else []
        exchange.replied(step, Reply(Cue.ACTION, completion.text), actions)
