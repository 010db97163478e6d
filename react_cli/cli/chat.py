"""``react-cli chat``: question after question, each follow-up given the turns before it.

On a terminal (stdin and stdout both): a prompt with line editing and history (``lines``),
the trajectory as ``ask -v`` shows it unless ``--quiet``, then the answer and its sources.
Anywhere else: one question a line, exactly one line on stdout for each (a command's too), so
it scripts. Each question
is answered as ``ask`` answers it (its trace written before its answer is printed, the same
``Error:`` lines) and is a turn of the conversation (``conversation/``).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from react_cli.cli.app import app, print_error, print_json, print_warning
from react_cli.cli.ask import _finish, _prompts, conversation_context, keep_turn, named
from react_cli.cli.help import Panel, examples
from react_cli.cli.options import DebugOpt, JsonOpt, NoTraceOpt, VerboseOpt
from react_cli.cli.question import question_text
from react_cli.cli.run_options import (
    NO_CONVERSATION_OPTIONS,
    NO_RUN_OPTIONS,
    ConversationOptions,
    RunOptions,
    with_options,
)
from react_cli.core.errors import InterruptError, LLMConfigError, ReactCliError, UsageError
from react_cli.infra import interrupts

if TYPE_CHECKING:
    from react_cli.cli.lines import Reader
    from react_cli.conversation.history import Conversation
    from react_cli.conversation.store import ConversationStore
    from react_cli.core.method import Method
    from react_cli.display.render import Renderer
    from react_cli.loop.prompts import PromptSet
    from react_cli.session import OpenSession
    from react_cli.settings.settings import Settings

EXIT_WORDS = frozenset({"exit", "quit"})
COMMANDS = "/new starts a new conversation, /trace prints the last trace's path"
AGAIN = "(Ctrl-C again to leave; exit, quit or Ctrl-D ends too)"


@app.command(
    short_help="Ask question after question: each follow-up knows the ones before.",
    epilog=examples(
        "react-cli chat -m gpt-4o-mini",
        "react-cli chat -c --base-url http://127.0.0.1:8080/v1 -m gemma-3-270m",
        "printf '%s\\n' 'Who directed Ed Wood?' 'When was he born?' \\",
        "  | react-cli chat -m gpt-4o-mini --json",
    ),
)
@with_options(RunOptions)
@with_options(ConversationOptions, "conversing")
def chat(
    options: RunOptions = NO_RUN_OPTIONS,
    conversing: ConversationOptions = NO_CONVERSATION_OPTIONS,
    verbose: VerboseOpt = False,
    quiet: Annotated[
        bool,
        typer.Option(
            "-q",
            "--quiet",
            help="On a terminal: no trajectory, answers alone.",
            rich_help_panel=Panel.OUTPUT,
        ),
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

    Not on a terminal: one question per input line, one line on stdout for each (its answer;
    a question without an answer, a line that is no command, /new: an empty line, --json:
    null, and any Error: on stderr; /trace: the last trace's path, --json: as a JSON text);
    blank lines get none.

    Exit codes: 0 done (piped: every line answered); 1 a piped line got an error; 2 usage or
    configuration error (no model, rejected key, ...); 130 interrupted; 143 and 129: ended by
    SIGTERM or SIGHUP (the running question's trace kept).
    """
    from react_cli.settings.resolve import home_dir, resolve_with_origins

    if verbose and quiet:
        raise UsageError("-v and --quiet contradict each other")
    settings, origins = resolve_with_origins({**options.flags(), **conversing.flags()})
    prompts = _prompts(settings, None, named(origins))
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
    from react_cli.cli.consent import terminal_question
    from react_cli.cli.notices import told
    from react_cli.core.method import Method
    from react_cli.display.render import Renderer
    from react_cli.display.terminal import make_console
    from react_cli.session import open_session

    shown = verbose or (interactive and not quiet)
    prices = settings.prices()
    observer = Renderer(make_console(), live=True, prices=prices) if shown else None
    # one model, backend, set of tools and cache for all its questions; "always": for the
    # conversation
    asking = terminal_question(settings, observer)
    with open_session(settings, prompts, told=told(debug, observer), question=asking) as opened:
        talk = _Chat(settings, prompts, opened, Method(settings.method), observer)
        talk.conversation, talk.home, talk.as_json = conversation, home, as_json
        talk.store = None if no_trace else store
        if interactive:
            from react_cli.cli.lines import HISTORY_NAME, terminal_reader

            reader = terminal_reader(home / HISTORY_NAME, talk.warn)
            code = _terminal(talk, reader)
        else:
            code = _piped(talk)
    if code:
        raise typer.Exit(code)


def _on_a_terminal() -> bool:
    """Both ends are a terminal (a chat with stdout redirected reads lines, draws no prompt)."""
    return bool(sys.stdin is not None and sys.stdin.isatty() and sys.stdout.isatty())


@dataclass
class _Chat:
    """A chat's session and where its questions go: the conversation, the store keeping it
    (None: ``--no-trace``, nothing kept), the last trace written."""

    settings: Settings
    prompts: PromptSet
    opened: OpenSession
    method: Method
    observer: Renderer | None
    store: ConversationStore | None = None
    conversation: Conversation | None = None
    as_json: bool = False
    home: Path | None = None
    last_trace: Path | None = None

    def ask(self, text: str) -> tuple[bool, ReactCliError | None]:
        """Answer ``text`` as the conversation's next turn: whether a line went to stdout
        (the answer, or --json's object), and the error the question ended with, if any."""
        from react_cli.infra.interrupts import guard, hold
        from react_cli.traces.recorder import interrupted_trace, trace_of
        from react_cli.traces.trace import default_trace_path

        assert self.conversation is not None and self.home is not None
        created = datetime.now(timezone.utc)
        earlier = conversation_context(self.conversation, self.settings)
        extra = {"conversation": self.conversation.record(earlier).to_json()}
        path = None if self.store is None else default_trace_path(self.home, created, text)
        session = self.opened.session
        with guard():  # the first Ctrl-C stops this question; later ones wait for its trace
            try:
                outcome, run = session.answer(text, self.method, self.observer, earlier)
                traced = trace_of(session, outcome, run, created=created, extra=extra)
            except KeyboardInterrupt:
                hold()
                traced = interrupted_trace(
                    self.settings, self.prompts, text, created=created, extra=extra
                )
            hold()
            keep_turn(self.store, self.conversation, session, traced, path, created)
            printed = self.as_json or traced.run.answer is not None
            try:
                _finish(traced, path, self.as_json, self.settings)
            except ReactCliError as exc:
                return printed, exc
            finally:
                self.last_trace = traced.path or self.last_trace
        return True, None

    def command(self, text: str, *, piped: bool = False) -> bool | None:
        """Run ``text`` if it is a command (``/new``, ``/trace``): None when it is none, else
        whether it went well. ``piped``: it prints one line on stdout whatever happens (the
        trace's path, else :meth:`no_line`), so a reader pairing lines stays in step."""
        if not text.startswith("/"):
            return None
        from react_cli.conversation.history import Conversation
        from react_cli.core.wording import quoted
        from react_cli.display.terminal import plain

        word = text.split()[0].lower()
        if word == "/trace" and self.last_trace is not None:
            path = plain(str(self.last_trace))
            if self.as_json and piped:
                print_json(path)
            else:
                print(path, flush=True)
            return True
        if piped:
            self.no_line()
        if word == "/new":
            self.conversation = Conversation.start(datetime.now(timezone.utc))
            self.opened.consent.forget()  # "always" lasts for a conversation
            print(f"(a new conversation: {self.conversation.id})", file=sys.stderr, flush=True)
            return True
        if word == "/trace":
            print_error("no trace yet: ask a question first")
        else:
            print_error(f"no command {quoted(word)}: {COMMANDS}; exit or quit ends")
        return False

    def warn(self, message: str) -> None:
        """A warning, through the renderer when it shows the run."""
        self.opened.told.warn(message)

    def no_line(self) -> None:
        """A piped line's stdout line when it has nothing to show: empty (``--json``: null)."""
        print("null" if self.as_json else "", flush=True)


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
            if armed or interrupts.ending():  # SIGTERM, SIGHUP: the chat ends
                raise InterruptError(interrupts.interrupted()) from None
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
        if talk.command(text) is not None:
            continue
        _, error = talk.ask(text)
        if error is None:
            continue
        if isinstance(error, LLMConfigError) or interrupts.ending():  # no question can go on
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
            talk.no_line()
            print_error(f"the question is larger than {size_text(MAX_LINE_BYTES)}")
            failed = True
            continue
        text = question_text(line)
        if not text:
            continue
        if text.casefold() in EXIT_WORDS:
            break
        done = talk.command(text, piped=True)
        if done is not None:
            failed |= not done
            continue
        try:
            printed, error = talk.ask(text)
        except ReactCliError as exc:  # raised before its line was printed
            printed, error = False, exc
        if error is None:
            continue
        if not printed:
            talk.no_line()  # the question's line
        if isinstance(error, (LLMConfigError, InterruptError)):
            raise error
        print_error(str(error))
        failed = True
    return 1 if failed else 0
