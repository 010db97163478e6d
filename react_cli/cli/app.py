"""The typer application, its entry point, and how failures reach the user.

Every ``ReactCliError`` becomes one ``Error: ...`` line on stderr and its exit code; nothing
else is printed on failure unless ``REACT_CLI_DEBUG=1`` asks for the traceback.
"""

from __future__ import annotations

import io
import os
import re
import sys
from typing import Annotated, Any, TextIO

import typer

from react_cli import __version__
from react_cli.cli.help import (
    COMMANDS_HEADING,
    Commands,
    Panel,
    PanelGroup,
    command_rows,
    examples,
    param_sections,
    write_sections,
)
from react_cli.core.errors import (
    EXIT_INTERRUPTED,
    EXIT_NO_ANSWER,
    EXIT_OK,
    InterruptError,
    ReactCliError,
)
from react_cli.infra import interrupts
from react_cli.settings.environment import DATA_MANIFEST_ENV, DEBUG_ENV, ENV_VARS, HOME_ENV

_NOT_A_SPACE = re.compile(r"[^\S ]")  # white space other than the space: tabs, line breaks


_FLAGS = {
    "run_timeout_s": "--timeout",
    "contact": "contact (no flag): who Wikipedia should email",
    "otel": "--otel/--no-otel",
    "otel_capture_content": "otel_capture_content (no flag): prompts, replies, tool calls in spans",
    "otel_timeout_s": "otel_timeout_s (no flag): the longest wait to send the last spans",
    "wiki_tools": "--no-wiki (0: Search and Lookup off)",
    "tool_timeout_s": "--tool-timeout",
    "data_url": "data_url (no flag): a mirror every download comes from",
}


def _environment_help() -> str:
    """Every environment variable react-cli reads, for the end of ``react-cli --help``."""

    rows = [(HOME_ENV, "the home directory: config.toml, traces/, evals/, data/, zim/")]
    for name, names in ENV_VARS.items():
        rows.append((", ".join(names), _FLAGS.get(name, "--" + name.replace("_", "-"))))
    rows.append((DATA_MANIFEST_ENV, "a manifest of datasets of your own, for data get"))
    rows.append((f"{DEBUG_ENV}=1", "log HTTP traffic (--debug), show tracebacks"))
    width = max(len(variables) for variables, _ in rows)
    lines = [f"  {variables:<{width}}  {what}" for variables, what in rows]
    return "Environment (a flag wins over it, it wins over the config file):\n" + "\n".join(lines)


app = Commands(
    name="react-cli",
    add_completion=True,
    pretty_exceptions_enable=False,
    epilog=_environment_help()
    + "\n\n"
    + examples(
        "react-cli ask -m gpt-4o-mini 'Who directed the film Ed Wood?'",
        "react-cli chat --base-url http://127.0.0.1:8080/v1 -m gemma-3-270m",
        "react-cli eval hotpot_dev_v1_simplified.json --limit 20 -m gpt-4o-mini",
        "react-cli replay examples/traces/arthurs-magazine.json",
    ),
)


class DefaultCommandGroup(PanelGroup):
    """A group whose first word may be left out: ``eval DATASET`` means ``eval run DATASET``.

    Any first argument that is not one of the group's commands (a file name, an option such as
    ``--resume``) is handed to the default command, so the group's other commands (``eval
    report``, ``eval show``, ...) can live beside it. Its help is the default command's, with
    the group's commands listed first.
    """

    default_command = "run"

    # typer hands its own Context, a subclass of the (vendored) click Context it declares
    def parse_args(self, ctx: typer.Context, args: list[str]) -> list[str]:  # type: ignore[override]
        help_asked = args[:1] and args[0] in (ctx.help_option_names or ())
        if args and not help_asked and args[0] not in self.commands:
            args = [self.default_command, *args]
        return super().parse_args(ctx, args)

    def format_help(self, ctx: typer.Context, formatter: Any) -> None:  # type: ignore[override]
        command = self.commands[self.default_command]
        inner = type(ctx)(command, info_name=ctx.info_name, parent=ctx.parent)
        command.format_usage(inner, formatter)
        formatter.write_usage(ctx.command_path, "COMMAND [ARGS]...", prefix="       ")
        command.format_help_text(inner, formatter)
        write_sections([(COMMANDS_HEADING, command_rows(self, ctx, formatter.width))], formatter)
        write_sections(param_sections(command, inner), formatter)
        command.format_epilog(inner, formatter)


def help_when_bare(ctx: typer.Context) -> None:
    """A command group run without a command prints its help (exit 0), as ``git`` does."""
    if ctx.invoked_subcommand is None:
        print(ctx.get_help())
        raise typer.Exit()


def _version(value: bool) -> None:
    if value:
        print(f"react-cli {__version__}")
        raise typer.Exit()


@app.callback(invoke_without_command=True)
def _root(
    ctx: typer.Context,
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_version,
            is_eager=True,
            help="Show version.",
            rich_help_panel=Panel.GENERAL,
        ),
    ] = False,
) -> None:
    """Answer questions with ReAct (Thought/Action/Observation) over Wikipedia.

    Start with an example below (OPENAI_API_KEY set, or --base-url naming a local server);
    'react-cli models' lists the endpoint's models, 'react-cli config' the settings, and
    'react-cli COMMAND -h' a command's options and examples.

    Exit codes: 0 answered; 1 no answer (step limit, endpoint failure, ...); 2 usage or
    configuration error; 130 interrupted (Ctrl-C), 143 by SIGTERM, 129 by SIGHUP.
    """
    help_when_bare(ctx)


def print_json(data: object, indent: int | None = None) -> None:
    """JSON on stdout with untrusted text made terminal-safe (and paths always printable);
    on a stdout whose encoding cannot hold its text, the same JSON with ``\\uXXXX`` escapes."""
    import json

    from react_cli.display.terminal import safe_json
    from react_cli.infra.untrusted import clean_text

    text = clean_text(safe_json(data, indent=indent))
    try:
        text.encode(sys.stdout.encoding or "utf-8")
    except (UnicodeEncodeError, LookupError):
        text = json.dumps(json.loads(text), indent=indent)  # ASCII
    print(text)


def debug_enabled() -> bool:
    return os.environ.get(DEBUG_ENV, "") not in ("", "0")


def _print_error(message: str) -> None:
    """The one ``Error: ...`` line of a failed command, on stderr."""
    print(f"Error: {_one_line(message)}", file=sys.stderr, flush=True)


def print_error(message: str) -> None:
    """The ``Error: ...`` line of a failure a command goes on after (a chat's question)."""
    _print_error(message)


def print_warning(message: str) -> None:
    """One ``warning: ...`` line on stderr: something to fix or repaired; the command goes on."""
    print(f"warning: {_one_line(message)}", file=sys.stderr, flush=True)


def print_note(message: str) -> None:
    """One ``note: ...`` line on stderr: something learnt that changes how the command goes on
    (no failure, nothing to fix)."""
    print(f"note: {_one_line(message)}", file=sys.stderr, flush=True)


def _one_line(message: str) -> str:
    """``message`` cleaned onto one line: each line break (and white space around it) one
    space. Runs of spaces stay: a command printed for pasting (``terminal.shell_word``) may
    quote a name holding two."""
    from react_cli.display.terminal import plain

    lines = _NOT_A_SPACE.sub("\n", plain(message)).split("\n")
    return " ".join(line.strip(" ") for line in lines if line.strip(" "))


class _Output(io.TextIOBase):
    """stdout or stderr while a command runs: a write never fails the command.

    A character the stream's encoding cannot hold is written as its replacement (``?``); once
    a write fails (a full disk, a reader that went away), later ones are dropped and the
    failure is kept for ``main`` to report when the command is done: what the command does
    besides printing (writing a trace, an eval's rows) is never lost to its output.
    """

    def __init__(self, stream: TextIO) -> None:
        super().__init__()
        self.stream = stream
        self.failure: OSError | None = None

    def write(self, text: str) -> int:
        if self.failure is None:
            try:
                try:
                    self.stream.write(text)
                except UnicodeEncodeError:
                    encoding = self.stream.encoding or "ascii"
                    self.stream.write(text.encode(encoding, "replace").decode(encoding))
            except OSError as exc:
                self.failure = exc
        return len(text)

    def flush(self) -> None:
        if self.failure is None and not self.stream.closed:  # closed: at the interpreter's exit
            try:
                self.stream.flush()
            except OSError as exc:
                self.failure = exc

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return self.stream.isatty()

    def fileno(self) -> int:
        return self.stream.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]  # TextIOBase says str | None
        return self.stream.encoding or "utf-8"

    @property
    def errors(self) -> str | None:  # type: ignore[override]  # read-only here
        return self.stream.errors

    def __getattr__(self, name: str) -> Any:  # ``buffer`` and the like
        return getattr(self.stream, name)


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the app, turn every known failure into one line and an exit code.

    Commands report how they failed by raising a ``ReactCliError``; only this function prints
    the ``Error:`` line and chooses the exit code. Output that fails (see ``_Output``) is
    reported once the command is done: one ``Error:`` line for a full disk, nothing for a
    reader that went away (``react-cli traces | head -1``), as Unix tools do.
    """
    out, err = _Output(sys.stdout or _nowhere()), _Output(sys.stderr or _nowhere())
    sys.stdout, sys.stderr = out, err
    try:
        with interrupts.catching():  # SIGTERM and SIGHUP stop a command as Ctrl-C does
            code = _run(argv)
        out.flush()
        if out.failure is not None:
            if code == EXIT_OK and not isinstance(out.failure, BrokenPipeError):
                _print_error(_os_error_message(out.failure))
            code = code or EXIT_NO_ANSWER
        err.flush()
    finally:
        sys.stdout, sys.stderr = out.stream, err.stream
    for failed in (out, err):
        if failed.failure is not None:
            _silence(failed.stream)
    sys.exit(code)


def _run(argv: list[str] | None) -> int:
    """The command's exit code, its failure (if any) said in one ``Error:`` line."""
    from typer.exceptions import Abort, TyperException

    try:
        command = typer.main.get_command(app)
        code = command.main(args=argv, prog_name="react-cli", standalone_mode=False)
        if code == EXIT_INTERRUPTED:  # typer turns a Ctrl-C it catches into a silent exit 130
            _print_error(interrupts.interrupted())
            code = interrupts.exit_code()
    except TyperException as exc:
        _print_error(exc.format_message() + _dash_hint(exc))
        code = exc.exit_code
    except ReactCliError as exc:
        _print_error(str(exc))
        code = interrupts.exit_code() if isinstance(exc, InterruptError) else exc.exit_code
    except (KeyboardInterrupt, Abort):
        _print_error(interrupts.interrupted())
        code = interrupts.exit_code()
    except BrokenPipeError:  # a write that bypassed _Output (none of ours does)
        code = EXIT_NO_ANSWER
    except OSError as exc:
        _print_error(_os_error_message(exc))
        code = EXIT_NO_ANSWER
    except Exception as exc:
        if debug_enabled():
            raise
        _print_error(f"internal error: {exc!r} (set {DEBUG_ENV}=1 for a traceback)")
        code = EXIT_NO_ANSWER
    return code if isinstance(code, int) else EXIT_OK


def _dash_hint(exc: Exception) -> str:
    """For an unknown option like no other (``ask -5 degrees?``) of a command that takes an
    argument: that an argument starting with ``-`` goes after ``--``."""
    option, ctx = getattr(exc, "option_name", None), getattr(exc, "ctx", None)
    if not isinstance(option, str) or getattr(exc, "possibilities", None) or ctx is None:
        return ""  # not click's NoSuchOption (typer vendors click, or not), or a typo of one
    if not any(param.param_type_name == "argument" for param in ctx.command.params):
        return ""
    words = ctx.command_path.split()[1:]
    example = " ".join([*words, "--", f"'{option}…'"])
    what = "a question" if words == ["ask"] else "an argument"
    return f" ({what} starting with '-' goes after '--': react-cli {example})"


def _nowhere() -> TextIO:
    """Where a stream the command was started without (``2>&-``: Python's ``None``) writes."""
    return open(os.devnull, "w", encoding="utf-8")


def _silence(stream: TextIO) -> None:
    """Point a stream that failed at /dev/null, so that the interpreter's flush at exit finds
    nothing to fail on (and prints no "Exception ignored")."""
    try:
        fd = stream.fileno()
    except (OSError, ValueError):  # a stream without a file (an embedding program's)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


def _os_error_message(exc: OSError) -> str:
    where = f"{exc.filename}: " if exc.filename else "cannot write the output: "
    return f"{where}{exc.strerror or exc}"
