"""``react-cli chat``: question after question, each follow-up given the turns before it.

On a terminal (stdin and stdout both): a prompt with line editing and history (``lines``),
the trajectory as ``ask -v`` shows it unless ``--quiet``, then the answer and its sources.
Anywhere else: one question a line, one answer a line on stdout, so it scripts. Each question
is answered as ``ask`` answers it (its trace written before its answer is printed, the same
``Error:`` lines) and is a turn of the conversation (``conversation/``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from react_cli.cli.app import app, debug_enabled, print_error, print_warning
from react_cli.cli.ask import _finish, _prompts, conversation_context, keep_turn
from react_cli.cli.options import (
    NO_CONVERSATION_OPTIONS,
    NO_RUN_OPTIONS,
    ConversationOptions,
    DebugOpt,
    JsonOpt,
    NoTraceOpt,
    RunOptions,
    VerboseOpt,
    question_text,
    with_options,
)
from react_cli.core.errors import InterruptError, LLMConfigError, ReactCliError, UsageError

if TYPE_CHECKING:
    from react_cli.cache.store import CacheStore
    from react_cli.cli.lines import Reader
    from react_cli.conversation.history import Conversation
    from react_cli.conversation.store import ConversationStore
    from react_cli.core.method import Method
    from react_cli.loop.events import Observer
    from react_cli.loop.prompts import PromptSet
    from react_cli.session import Session
    from react_cli.settings.settings import Settings
    from react_cli.telemetry.base import Spans
    from react_cli.tools.toolbox import Toolbox

EXIT_WORDS = frozenset({"exit", "quit"})
COMMANDS = "/new starts a new conversation, /trace prints the last trace's path"
AGAIN = "(Ctrl-C again to leave; exit, quit or Ctrl-D ends too)"


@app.command(short_help="Ask question after question: each follow-up knows the ones before.")
@with_options(RunOptions)
@with_options(ConversationOptions, "conversing")
def chat(
    options: RunOptions = NO_RUN_OPTIONS,
    conversing: ConversationOptions = NO_CONVERSATION_OPTIONS,
    verbose: VerboseOpt = False,
    quiet: Annotated[
        bool, typer.Option("-q", "--quiet", help="On a terminal: no trajectory, answers alone.")
    ] = False,
    no_trace: NoTraceOpt = False,
    as_json: JsonOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Ask question after question; each follow-up is given the earlier questions and answers
    (and may Lookup in the page the last Search found).

    On a terminal: a prompt with line editing and history, the trajectory as with -v unless
    --quiet, then the answer and its sources. exit, quit or Ctrl-D ends; Ctrl-C stops the
    running question (its trace is kept), a second Ctrl-C at an empty prompt ends; /new starts
    a new conversation, /trace prints the last trace's path.

    Not on a terminal: one question per input line, one answer per output line on stdout (a
    question without an answer: an empty line, and its Error: on stderr).

    Exit codes: 0 done (piped: every question answered); 1 a piped question got no answer; 2
    usage or configuration error (no model, rejected key, ...); 130 interrupted.
    """
    from react_cli.settings.resolve import home_dir, resolve

    if verbose and quiet:
        raise UsageError("-v and --quiet contradict each other")
    settings = resolve({**options.flags(), **conversing.flags()})
    prompts = _prompts(settings, None)
    interactive = _on_a_terminal()
    home = home_dir()
    created = datetime.now(timezone.utc)
    from react_cli.conversation.store import ConversationStore

    store = ConversationStore(home)
    conversation, note = store.chosen(
        created, latest=conversing.continue_, conversation_id=conversing.conversation
    )
    if note:
        print_warning(note)
    if not no_trace:
        from react_cli.traces.trace import check_writable, default_trace_path

        remedy = "give --no-trace, or another REACT_CLI_HOME"
        check_writable(default_trace_path(home, created, "chat"), remedy)
    from react_cli.telemetry.setup import open_spans

    spans = open_spans(settings, print_warning)
    from react_cli.core.method import Method
    from react_cli.session import open_cache
    from react_cli.tools.toolbox import Toolbox, open_toolbox

    toolbox, cache = Toolbox(), None  # the chat's servers and cache: one for all its questions
    try:
        cache = open_cache(settings, print_warning)
        if Method(settings.method).uses_tools:  # Standard and CoT call none: no server to start
            toolbox = open_toolbox(settings)
        shown = verbose or (interactive and not quiet)
        talk = _open(settings, prompts, spans, debug, show=shown, toolbox=toolbox, cache=cache)
        talk.conversation, talk.home, talk.as_json = conversation, home, as_json
        talk.store = None if no_trace else store
        if interactive:
            from react_cli.cli.lines import HISTORY_NAME, terminal_reader

            reader = terminal_reader(home / HISTORY_NAME, talk.warn)
            code = _terminal(talk, reader)
        else:
            code = _piped(talk)
    finally:
        spans.close()
        toolbox.close()  # whatever ended the chat: its servers stop
        if cache is not None:
            cache.close()
    if code:
        raise typer.Exit(code)


def _on_a_terminal() -> bool:
    """Both ends are a terminal (a chat with stdout redirected reads lines, draws no prompt)."""
    return bool(sys.stdin is not None and sys.stdin.isatty() and sys.stdout.isatty())


def _open(
    settings: Settings,
    prompts: PromptSet,
    spans: Spans,
    debug: bool,
    *,
    show: bool,
    toolbox: Toolbox,
    cache: CacheStore | None,
) -> _Chat:
    """The chat's session (one model, backend and set of tools for all its questions, behind
    the cache when ``--cache`` asks for it) and its observer; where its questions go is set
    after."""
    from react_cli.cli.notices import show_contact_hint, stderr_debug_log, stderr_retry_notice
    from react_cli.core.method import Method
    from react_cli.display.render import Renderer
    from react_cli.display.terminal import make_console
    from react_cli.session import build_backend, build_model, open_session
    from react_cli.telemetry.setup import protocol_name

    debug_log = stderr_debug_log if debug or debug_enabled() else None
    observer = Renderer(make_console(), live=True, prices=settings.prices()) if show else None
    notices = observer.retry_waiting if observer else stderr_retry_notice
    warn = observer.warning if observer else print_warning
    model = build_model(settings, debug_log, notices, on_warning=warn, cache=cache)
    backend = build_backend(settings, debug_log, notices, cache=cache)
    session = open_session(settings, prompts, model=model, backend=backend, toolbox=toolbox)
    method = Method(settings.method)
    if any(part.loop for part in method.parts) and toolbox.wiki:  # it calls Wikipedia
        show_contact_hint(settings)
    facts = {"method": str(method), "protocol": protocol_name(session.protocols, method)}
    return _Chat(settings, prompts, session, method, observer, spans, facts, warn)


@dataclass
class _Chat:
    """A chat's session and where its questions go: the conversation, the store keeping it
    (None: ``--no-trace``, nothing kept), the last trace written."""

    settings: Settings
    prompts: PromptSet
    session: Session
    method: Method
    observer: Observer | None
    spans: Spans
    facts: dict[str, Any]
    warn: Callable[[str], None]
    store: ConversationStore | None = None
    conversation: Conversation | None = None
    as_json: bool = False
    home: Path | None = None
    last_trace: Path | None = None

    def ask(self, text: str) -> tuple[bool, ReactCliError | None]:
        """Answer ``text`` as the conversation's next turn: whether a line went to stdout
        (the answer, or --json's object), and the error the question ended with, if any."""
        from react_cli.infra.interrupts import guard, hold
        from react_cli.loop.events import Tee
        from react_cli.traces.recorder import interrupted_trace, trace_of
        from react_cli.traces.trace import default_trace_path

        assert self.conversation is not None and self.home is not None
        created = datetime.now(timezone.utc)
        earlier = conversation_context(self.conversation, self.settings)
        extra = {"conversation": self.conversation.record(earlier).to_json()}
        path = None if self.store is None else default_trace_path(self.home, created, text)
        with guard():  # the first Ctrl-C stops this question; later ones wait for its trace
            try:
                with self.spans.run(text, self.facts) as watching:
                    watchers = (watching,) if self.observer is None else (self.observer, watching)
                    outcome, run = self.session.answer(text, self.method, Tee(watchers), earlier)
                traced = trace_of(self.session, outcome, run, created=created, extra=extra)
            except KeyboardInterrupt:
                hold()
                traced = interrupted_trace(
                    self.settings, self.prompts, text, created=created, extra=extra
                )
            hold()
            keep_turn(self.store, self.conversation, self.session, traced.run, path, created)
            printed = self.as_json or traced.run.answer is not None
            try:
                _finish(traced, path, self.as_json, self.settings)
            except ReactCliError as exc:
                return printed, exc
            finally:
                self.last_trace = traced.path or self.last_trace
        return True, None

    def command(self, text: str) -> bool:
        """Run ``text`` if it is a command (``/new``, ``/trace``); whether it was one."""
        if not text.startswith("/"):
            return False
        from react_cli.conversation.history import Conversation
        from react_cli.core.wording import quoted
        from react_cli.display.terminal import plain

        word = text.split()[0].lower()
        if word == "/new":
            self.conversation = Conversation.start(datetime.now(timezone.utc))
            print(f"(a new conversation: {self.conversation.id})", file=sys.stderr, flush=True)
        elif word == "/trace":
            if self.last_trace is None:
                print_error("no trace yet: ask a question first")
            else:
                print(plain(str(self.last_trace)), flush=True)
        else:
            print_error(f"no command {quoted(word)}: {COMMANDS}; exit or quit ends")
        return True


def _terminal(talk: _Chat, read: Reader) -> int:
    """Questions typed at the prompt until exit, quit, Ctrl-D or a second Ctrl-C."""
    assert talk.conversation is not None
    conversation = talk.conversation
    turns = len(conversation.turns)
    going = f"turn {turns + 1} next" if turns else "new"
    print(
        f"conversation {conversation.id} ({going}): exit, quit or Ctrl-D ends; {COMMANDS}",
        file=sys.stderr,
        flush=True,
    )
    armed = False  # a Ctrl-C was the last thing: the next one at an empty prompt ends
    while True:
        try:
            line = read()
        except KeyboardInterrupt:
            if armed:
                raise InterruptError("interrupted") from None
            armed = True
            print(AGAIN, file=sys.stderr, flush=True)
            continue
        except EOFError:
            return 0
        text = question_text(line)
        if not text:
            continue
        armed = False
        if text.casefold() in EXIT_WORDS:
            return 0
        if talk.command(text):
            continue
        _, error = talk.ask(text)
        if error is None:
            continue
        if isinstance(error, LLMConfigError):  # a key or a model to fix: no question can go on
            raise error
        print_error(str(error))
        if isinstance(error, InterruptError):
            armed = True
            print(AGAIN, file=sys.stderr, flush=True)


def _piped(talk: _Chat) -> int:
    """One question a line, one answer a line; 1 when a question got none."""
    from react_cli.cli.lines import MAX_LINE_BYTES, TOO_LONG, piped_lines
    from react_cli.infra.untrusted import size_text

    if sys.stdin is None:
        return 0
    failed = False
    for line in piped_lines(sys.stdin):
        if line is TOO_LONG:
            _no_answer(f"the question is larger than {size_text(MAX_LINE_BYTES)}")
            failed = True
            continue
        text = question_text(line)
        if not text:
            continue
        if text.casefold() in EXIT_WORDS:
            break
        if talk.command(text):
            continue
        printed, error = talk.ask(text)
        if error is None:
            continue
        if not printed:
            print(flush=True)  # the question's line: empty
        if isinstance(error, (LLMConfigError, InterruptError)):
            raise error
        print_error(str(error))
        failed = True
    return 1 if failed else 0


def _no_answer(message: str) -> None:
    print(flush=True)
    print_error(message)
