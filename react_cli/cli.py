"""Command-line layer: parse options, call the library, map ``ReactCliError`` to exit codes.

Only typer and the light modules are imported at start-up; requests, bs4 and rich are
imported inside commands so ``react-cli --help`` stays fast.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from react_cli import __version__
from react_cli.errors import EXIT_INTERRUPTED, EXIT_NO_ANSWER, EXIT_OK, ReactCliError, UsageError

if TYPE_CHECKING:
    from react_cli.config import Settings

app = typer.Typer(
    name="react-cli",
    help="Answer questions with ReAct (Thought/Action/Observation) over Wikipedia.",
    add_completion=False,
    no_args_is_help=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)
prompts_app = typer.Typer(help="List and show the prompt templates.", rich_markup_mode=None)
app.add_typer(prompts_app, name="prompts")

DEBUG_ENV = "REACT_CLI_DEBUG"


def _version(value: bool) -> None:
    if value:
        print(f"react-cli {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show version.")
    ] = False,
) -> None:
    """Answer questions with ReAct (Thought/Action/Observation) over Wikipedia.

    Exit codes: 0 answered; 1 no answer (step limit, endpoint failure, ...); 2 usage or
    configuration error; 130 interrupted.
    """


def read_question(argument: str | None) -> str:
    """The question from the argument, or from stdin for ``-`` / no argument when piped."""
    if argument is None or argument == "-":
        if sys.stdin is None or sys.stdin.isatty():
            raise UsageError("no question given: pass QUESTION or pipe it on stdin")
        argument = sys.stdin.read()
    question = " ".join(argument.split())
    if not question:
        raise UsageError("the question is empty")
    return question


def _flags(**options: Any) -> dict[str, Any]:
    return {name: value for name, value in options.items() if value is not None}


# Options shared by every command that runs the agent (ask, eval, ...).
ModelOpt = Annotated[
    str | None, typer.Option("-m", "--model", help="Model name [env REACT_CLI_MODEL].")
]
BaseUrlOpt = Annotated[
    str | None,
    typer.Option(help="OpenAI-compatible base URL [env OPENAI_BASE_URL; default OpenAI]."),
]
ApiKeyOpt = Annotated[
    str | None, typer.Option(help="API key [env OPENAI_API_KEY]; local servers need none.")
]
ApiOpt = Annotated[str | None, typer.Option(help="chat or completions [default chat].")]
PromptOpt = Annotated[str | None, typer.Option(help="Prompt name or file [default hotpotqa].")]
MaxStepsOpt = Annotated[int | None, typer.Option(help="Step limit [default 8].")]
TemperatureOpt = Annotated[float | None, typer.Option(help="Sampling temperature [0].")]
MaxTokensOpt = Annotated[int | None, typer.Option(help="Max tokens per model call.")]
MaxTotalTokensOpt = Annotated[
    int | None, typer.Option(help="Stop the run once this many tokens are used.")
]
TimeoutOpt = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        metavar="SECONDS",
        help="Stop the run after this long; each request gets only the time left "
        "[env REACT_CLI_TIMEOUT].",
    ),
]
ForceAnswerOpt = Annotated[
    bool,
    typer.Option(
        "--force-answer", help="At the step limit, ask the model once more for Finish[...]."
    ),
]
WikiOpt = Annotated[
    str | None,
    typer.Option(help="MediaWiki host root [env REACT_CLI_WIKI; en.wikipedia.org]."),
]
NoStreamOpt = Annotated[
    bool, typer.Option("--no-stream", help="Plain requests instead of streaming.")
]
DebugOpt = Annotated[
    bool, typer.Option("--debug", help=f"Log HTTP traffic to stderr [env {DEBUG_ENV}=1].")
]


def run_settings(**flags: Any) -> Settings:
    """Resolve settings from the options a command was given (None = not given)."""
    from react_cli.config import resolve

    no_stream = flags.pop("no_stream", False)
    force_answer = flags.pop("force_answer", False)
    return resolve(
        _flags(
            **flags,
            stream=False if no_stream else None,
            force_answer=True if force_answer else None,
        )
    )


@app.command()
def ask(
    question: Annotated[
        str | None, typer.Argument(help="The question; '-' or omitted reads it from stdin.")
    ] = None,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    api_key: ApiKeyOpt = None,
    api: ApiOpt = None,
    prompt: PromptOpt = None,
    max_steps: MaxStepsOpt = None,
    temperature: TemperatureOpt = None,
    max_tokens: MaxTokensOpt = None,
    max_total_tokens: MaxTotalTokensOpt = None,
    timeout: TimeoutOpt = None,
    force_answer: ForceAnswerOpt = False,
    wiki: WikiOpt = None,
    verbose: Annotated[
        bool, typer.Option("-v", "--verbose", help="Show the trajectory on stderr.")
    ] = False,
    trace: Annotated[
        Path | None, typer.Option(help="Write the trace here instead of the home directory.")
    ] = None,
    no_trace: Annotated[bool, typer.Option("--no-trace", help="Write no trace.")] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON object instead of the answer.")
    ] = False,
    no_stream: NoStreamOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Answer QUESTION: the answer alone on stdout, the trajectory (-v) on stderr."""
    from react_cli.config import home_dir
    from react_cli.prompts import load_prompt
    from react_cli.render import Renderer, json_line, make_console, plain
    from react_cli.run import build_model, build_tools, run_question, stderr_debug_log
    from react_cli.trace import default_trace_path, now_utc

    if trace is not None and no_trace:
        raise UsageError("--trace and --no-trace contradict each other")
    settings = run_settings(
        model=model,
        base_url=base_url,
        api_key=api_key,
        api=api,
        prompt=prompt,
        max_steps=max_steps,
        temperature=temperature,
        max_tokens=max_tokens,
        max_total_tokens=max_total_tokens,
        run_timeout_s=timeout,
        force_answer=force_answer,
        wiki=wiki,
        no_stream=no_stream,
    )
    template = load_prompt(settings.prompt)
    text = read_question(question)
    debug_log = stderr_debug_log if debug or _debug_env() else None
    llm = build_model(settings, debug_log)
    tools = build_tools(settings, debug_log)
    created = now_utc()
    path = None if no_trace else (trace or default_trace_path(home_dir(), created, text))
    observer = Renderer(make_console()) if verbose else None
    outcome = run_question(
        text,
        settings=settings,
        template=template,
        model=llm,
        tools=tools,
        observer=observer,
        trace_path=path,
        created=created,
    )
    result = outcome.result
    if as_json:
        summary = {
            "answer": result.answer,
            "stop_reason": result.stop_reason,
            "forced": result.forced,
            "error": result.error,
            "steps": outcome.trace["steps"],
            "usage": outcome.trace["usage"],
            "duration_s": outcome.trace["duration_s"],
            "trace": str(path) if path else None,
        }
        print(json_line(summary))
    elif result.answer is not None:
        print(" ".join(plain(result.answer).split()))
    if result.stop_reason == "interrupted":
        _error("interrupted" + (f"; trace written to {path}" if path else ""))
        raise typer.Exit(EXIT_INTERRUPTED)
    if result.answer is None:
        _error(f"no answer: {describe_stop(result.stop_reason, settings.max_steps, result.error)}")
        raise typer.Exit(EXIT_NO_ANSWER)


def describe_stop(stop_reason: str, max_steps: int, error: str | None) -> str:
    """A one-line human reason for a run that ended without an answer."""
    reasons = {
        "max_steps": f"the step limit ({max_steps}) was reached",
        "repeated_action": "the model repeated the same action",
        "parse_errors": "the model kept writing no valid action",
        "token_budget": "the token budget was used up",
        "timeout": error or "the time limit was reached",
        "tool_errors": error or "the Wikipedia tool kept failing",
        "llm_error": error or "the model endpoint failed",
    }
    return reasons.get(stop_reason, stop_reason)


@prompts_app.callback(invoke_without_command=True)
def prompts_list(ctx: typer.Context) -> None:
    """List the shipped prompt templates (use 'prompts show NAME' to print one)."""
    if ctx.invoked_subcommand is not None:
        return
    from react_cli.prompts import load_prompt, shipped_names

    for name in shipped_names():
        template = load_prompt(name)
        first = template.text.strip().splitlines()[0] if template.text.strip() else ""
        print(f"{name}\t{first[:70]}")


@prompts_app.command("show")
def prompts_show(name: Annotated[str, typer.Argument(help="Prompt name or file.")]) -> None:
    """Print a prompt template exactly as it is sent (with its {question} marker)."""
    from react_cli.prompts import load_prompt

    sys.stdout.write(load_prompt(name).text)


def _debug_env() -> bool:
    return os.environ.get(DEBUG_ENV, "") not in ("", "0")


def _error(message: str) -> None:
    from react_cli.render import plain

    one_line = " ".join(plain(message).split())
    print(f"Error: {one_line}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the app, turn every known failure into one line and an exit code."""
    from typer.exceptions import Abort, TyperException

    command = typer.main.get_command(app)
    try:
        code = command.main(args=argv, prog_name="react-cli", standalone_mode=False)
    except TyperException as exc:
        _error(exc.format_message())
        code = exc.exit_code
    except ReactCliError as exc:
        _error(str(exc))
        code = exc.exit_code
    except (KeyboardInterrupt, Abort):
        _error("interrupted")
        code = EXIT_INTERRUPTED
    except Exception as exc:
        if _debug_env():
            raise
        _error(f"internal error: {exc!r} (set {DEBUG_ENV}=1 for a traceback)")
        code = EXIT_NO_ANSWER
    sys.stdout.flush()
    sys.exit(code if isinstance(code, int) else EXIT_OK)
