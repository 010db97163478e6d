"""``react-cli ask``: one question, the answer alone on stdout."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from react_cli.cli.app import app, print_json, print_warning
from react_cli.cli.help import Panel, examples
from react_cli.cli.options import DebugOpt, JsonOpt, NoTraceOpt, VerboseOpt
from react_cli.cli.question import read_question
from react_cli.cli.run_options import (
    NO_CONVERSATION_OPTIONS,
    NO_RUN_OPTIONS,
    ConversationOptions,
    RunOptions,
    with_options,
)
from react_cli.core.errors import (
    InterruptError,
    LLMConfigError,
    NoAnswerError,
    TraceError,
    UsageError,
)
from react_cli.core.method import Method
from react_cli.core.records import ProtocolName, StopReason
from react_cli.core.trajectory import actions_of
from react_cli.infra.interrupts import guarded, hold, interrupted, pressed

if TYPE_CHECKING:
    from react_cli.conversation.history import Conversation
    from react_cli.conversation.store import ConversationStore
    from react_cli.core.conversation import Earlier
    from react_cli.loop.prompts import PromptSet
    from react_cli.session import Session
    from react_cli.settings.resolve import Origin
    from react_cli.settings.settings import Settings
    from react_cli.traces.fork import Fork
    from react_cli.traces.trace import Trace


@app.command(
    short_help="Answer a question; the answer alone goes to stdout.",
    epilog=examples(
        "react-cli ask -m gpt-4o-mini 'Who directed the film Ed Wood?'",
        "react-cli ask -v --base-url http://127.0.0.1:8080/v1 -m gemma-3-270m \\",
        "  --api completions 'Who directed the film Ed Wood?'",
        "react-cli ask -m gpt-4o-mini -c 'When was he born?'",
        "react-cli ask -m gpt-4o-mini --wiki zim:hotpot.zim --method react+cot-sc \\",
        "  'Were Scott Derrickson and Ed Wood of the same nationality?'",
    ),
)
@guarded
@with_options(RunOptions)
@with_options(ConversationOptions, "conversing")
def ask(
    question: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="QUESTION",
            help="The question (several words are joined); '-' or omitted reads stdin.",
        ),
    ] = None,
    options: RunOptions = NO_RUN_OPTIONS,
    conversing: ConversationOptions = NO_CONVERSATION_OPTIONS,
    verbose: VerboseOpt = False,
    trace: Annotated[
        Path | None,
        typer.Option(
            metavar="PATH",
            help="Write the trace here instead of the home directory.",
            rich_help_panel=Panel.OUTPUT,
        ),
    ] = None,
    no_trace: NoTraceOpt = False,
    as_json: JsonOpt = False,
    debug: DebugOpt = False,
    from_trace: Annotated[
        Path | None,
        typer.Option(
            metavar="TRACE",
            help="Fork this trace: replay its steps before --from-step, then live.",
            rich_help_panel=Panel.REPLAY,
        ),
    ] = None,
    from_step: Annotated[
        int | None,
        typer.Option(
            metavar="N",
            help="The step a fork continues live from (1 = the first).",
            rich_help_panel=Panel.REPLAY,
        ),
    ] = None,
) -> None:
    """Answer QUESTION: the answer alone on stdout, the trajectory (-v) on stderr.

    Each question is a turn of a conversation: -c continues the latest, --conversation ID a
    given one (a follow-up is given the earlier questions and answers); --no-trace keeps
    neither trace nor turn.

    A call of a tool with side effects (an MCP tool not marked read-only, a
    @tool(needs_consent=True)) is asked about first on a terminal, and refused without one
    unless --allow-tool gives consent ahead.

    Exit codes: 0 answered; 1 no answer (step limit, endpoint failure, ...); 2 usage or
    configuration error (no model, no key, rejected key, unknown model); 130 interrupted
    (Ctrl-C), 143 by SIGTERM, 129 by SIGHUP: servers stopped, the trace written.
    """
    from react_cli.settings.resolve import absolute_path, home_dir, resolve_with_origins

    if trace is not None and no_trace:
        raise UsageError("--trace and --no-trace contradict each other")
    # absolute, so a tool that changes the working directory moves no trace
    trace = None if trace is None else absolute_path(trace)
    from_trace = None if from_trace is None else absolute_path(from_trace)
    settings, origins = resolve_with_origins({**options.flags(), **conversing.flags()})
    fork = _fork(from_trace, from_step, options, conversing, bool(question))
    if fork is not None:
        settings = fork.settings(settings, options.protocol)
    prompts = _prompts(settings, fork if options.prompt is None else None, named(origins))
    text = fork.trace.run.question if fork else read_question(question or None)
    created = datetime.now(timezone.utc)
    extra = fork.trace_extra() if fork else None
    store, conversation = None, None
    if fork is None:
        store, conversation = _conversation(conversing, created)
    earlier = fork.earlier if fork else conversation_context(conversation, settings)
    if conversation is not None:
        extra = {"conversation": conversation.record(earlier).to_json()}
    kept = None if no_trace else store
    path: Path | None = None

    def stopped() -> NoReturn:
        """Ctrl-C while the run was being set up: its trace (no steps) and its turn kept."""
        from react_cli.traces.recorder import interrupted_trace

        record = interrupted_trace(settings, prompts, text, created=created, extra=extra)
        keep_turn(kept, conversation, None, record, path, created)
        _interrupted_before_the_run(record, path)

    # From here on, Ctrl-C (even while modules load) still leaves a trace saying so.
    try:
        from react_cli.traces.trace import check_writable, default_trace_path

        if not no_trace:
            path = trace or default_trace_path(home_dir(), created, text)
            check_writable(path)  # before paying for a run whose trace would be lost
        from react_cli.cli.consent import terminal_question
        from react_cli.cli.notices import told
        from react_cli.display.render import Renderer
        from react_cli.display.terminal import make_console
        from react_cli.session import open_session
        from react_cli.traces.recorder import trace_of

        prices = settings.prices()
        observer = Renderer(make_console(), live=True, prices=prices) if verbose else None
        asking = terminal_question(settings, observer)
    except KeyboardInterrupt:  # before the session opens (its own are on_interrupt's)
        hold()
        stopped()
    with open_session(
        settings, prompts, told=told(debug, observer), question=asking, on_interrupt=stopped
    ) as opened:
        session = fork.session(opened.session) if fork else opened.session
        outcome, result = session.answer(text, Method(settings.method), observer, earlier)
        traced = trace_of(session, outcome, result, created=created, extra=extra)
        hold()  # a Ctrl-C from now on waits until the trace is written
        keep_turn(kept, conversation, session, traced, path, created)
        _finish(traced, path, as_json, settings)  # then the spans and servers close


def _fork(
    from_trace: Path | None,
    from_step: int | None,
    options: RunOptions,
    conversing: ConversationOptions,
    asked: bool,
) -> Fork | None:
    """The saved run ``--from-trace`` forks (None: no fork); UsageError for what contradicts
    one (a conversation, a question ``asked``)."""
    if from_trace is None and from_step is None:
        return None
    from react_cli.traces.fork import Fork

    if from_trace is None:
        raise UsageError("--from-step forks a saved run: give --from-trace TRACE too")
    if conversing.given:
        raise UsageError("a fork goes on its trace's conversation: give no -c/--conversation")
    if asked:
        raise UsageError("a fork asks the trace's question: give no QUESTION")
    fork = Fork.open(from_trace, from_step)
    if options.method is not None and options.method != fork.method:
        raise UsageError(f"a fork continues the trace's method, {fork.method}")
    return fork


def _conversation(
    conversing: ConversationOptions, created: datetime
) -> tuple[ConversationStore, Conversation]:
    """The conversation a question goes on (a new one unless the options name one)."""
    from react_cli.conversation.store import ConversationStore
    from react_cli.settings.resolve import home_dir

    store = ConversationStore(home_dir())
    conversation, note = store.chosen(
        created, latest=conversing.continue_, conversation_id=conversing.conversation
    )
    if note:
        print_warning(note)
    return store, conversation


def conversation_context(conversation: Conversation | None, settings: Settings) -> Earlier:
    """What a question on ``conversation`` is given of its earlier turns."""
    from react_cli.loop.protocol import NO_EARLIER

    if conversation is None or not conversation.turns:
        return NO_EARLIER
    return conversation.earlier(settings.max_history_tokens)


def keep_turn(
    store: ConversationStore | None,
    conversation: Conversation | None,
    session: Session | None,
    traced: Trace,
    path: Path | None,
    created: datetime,
) -> None:
    """``traced``'s run as the conversation's next turn, saved in ``store`` (None: kept in
    memory alone; a failure to save is a warning: the answer and its trace still count).
    Another command may have added a turn since the run started (two follow-ups at once):
    this one then comes after it, and its trace (not written yet) says which turn it is."""
    if conversation is None:
        return
    from react_cli.core.errors import ConversationError

    run = traced.run
    carried = session.tools().carried(run.steps) if session is not None else {}
    conversation.add(run, carried, path, created)
    if store is None:
        return
    try:
        store.save(conversation)
    except ConversationError as exc:
        print_warning(str(exc))
        return
    record = traced.extra.get("conversation")
    turn = len(conversation.turns)
    if isinstance(record, dict) and record.get("turn") != turn:
        traced.extra["conversation"] = {**record, "turn": turn}
        from react_cli.display.terminal import plain

        note = f"note: another question went on conversation {conversation.id} meanwhile"
        print(plain(f"{note}: this one is its turn {turn}"), file=sys.stderr, flush=True)


def _finish(traced: Trace, path: Path | None, as_json: bool, settings: Settings) -> None:
    """Write the trace, then print the answer (or the JSON summary); then the exit's reason.
    The trace is written first, so nothing that happens to stdout can lose it; the answer is
    printed even when the trace cannot be written (that error comes after it)."""
    from react_cli.cli.notices import max_tokens_warning
    from react_cli.display.terminal import plain
    from react_cli.traces.summary import RunSummary

    lost: TraceError | None = None
    if path is not None:
        try:
            traced.write(path)
        except TraceError as exc:
            lost, path = exc, None
    result = traced.run
    if as_json:
        print_json(RunSummary(traced, path).to_json())
    elif result.answer is not None:
        print(" ".join(plain(result.answer).split()))
    if lost is not None:
        raise lost
    if not as_json and not pressed():
        _print_sources(traced)
    if result.max_tokens_reached:
        print_warning(max_tokens_warning(settings.max_tokens))
    if result.stop_reason == StopReason.INTERRUPTED or pressed():
        raise _interrupted(path)
    if isinstance(result.failure, LLMConfigError):  # a key or a model name to fix: exit 2
        raise result.failure
    if result.answer is None:
        reason = StopReason(result.stop_reason)
        said = describe_stop(reason, settings.max_steps, result.error)
        calls = settings.protocol == ProtocolName.TOOLS and reason is StopReason.PARSE_ERRORS
        if calls and all(action.written is None for action in actions_of(result.steps)):
            said += " (no reply called a tool: the endpoint may ignore tools; try --protocol text)"
        raise NoAnswerError(f"no answer: {said}")


def _print_sources(traced: Trace) -> None:
    """The pages the answer came from, on stderr after it (none without an answer, or for a
    method without Wikipedia)."""
    from react_cli.display.sources import answer_sources

    sys.stdout.flush()  # the answer first, where both go to one terminal
    for line in answer_sources(traced):
        print(line, file=sys.stderr)


def _prompts(settings: Settings, fork: Fork | None, named: bool) -> PromptSet:
    """The prompts of the settings' method (the general ones for a run without Wikipedia's
    tools whose prompt was not ``named``), or a fork's recorded prompt (without --prompt)."""
    from react_cli.loop.prompts import PromptSet, prompt_set, wants_general

    if fork is not None:
        template = fork.trace.template()
        return PromptSet(template, {Method(settings.method): template})
    general = wants_general(settings.wiki_tools, named)
    protocol = ProtocolName(settings.protocol)
    return prompt_set(settings.prompt, [Method(settings.method)], protocol, general=general)


def named(origins: Mapping[str, Origin]) -> bool:
    """Whether the prompt was named (a flag, the environment or the config file), not left
    to its default."""
    from react_cli.settings.resolve import Source

    return origins["prompt"].source is not Source.DEFAULT


def _interrupted_before_the_run(stopped: Trace, path: Path | None) -> NoReturn:
    """Ctrl-C while the run was being set up: write its trace (no steps), exit 130."""
    if path is not None:
        stopped.write(path)
    raise _interrupted(path)


def _interrupted(trace: Path | None) -> InterruptError:
    return InterruptError(interrupted() + (f"; trace written to {trace}" if trace else ""))


def describe_stop(stop_reason: StopReason, max_steps: int, error: str | None) -> str:
    """A one-line human reason for a run that ended without an answer."""
    reasons = {
        StopReason.MAX_STEPS: f"the step limit ({max_steps}) was reached",
        StopReason.REPEATED_ACTION: "the model repeated the same action",
        StopReason.PARSE_ERRORS: "the model kept writing no valid action",
        StopReason.TOKEN_BUDGET: "the token budget was used up",
        StopReason.COST_BUDGET: "the cost budget (--max-cost) was spent",
        StopReason.NO_PROGRESS: "observations in a row brought nothing new (--max-no-progress)",
        StopReason.TIMEOUT: error or "the time limit was reached",
        StopReason.TOOL_ERRORS: error or "the Wikipedia tool kept failing",
        StopReason.LLM_ERROR: error or "the model endpoint failed",
        StopReason.NO_ANSWER: "the model wrote no answer (no 'Answer:' line)",
    }
    return reasons.get(stop_reason, stop_reason.value)
