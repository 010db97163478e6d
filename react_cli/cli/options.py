"""Options shared by every command that runs the agent, and how they become ``Settings``."""

from __future__ import annotations

import io
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from react_cli.cli.app import DEBUG_ENV
from react_cli.errors import UsageError

if TYPE_CHECKING:
    from react_cli.config import Settings


MAX_STDIN_BYTES = 1 << 20


def read_question(argument: str | None) -> str:
    """The question from the argument, or from stdin for ``-`` / no argument when piped.

    Any bytes are accepted: what is not UTF-8 becomes U+FFFD (see ``untrusted.clean_text``).
    """
    from react_cli.untrusted import BadInput, clean_text, size_text

    if argument is None or argument == "-":
        if sys.stdin is None or sys.stdin.isatty():
            raise UsageError("no question given: pass QUESTION or pipe it on stdin")
        try:
            argument = _read_stdin(MAX_STDIN_BYTES)
        except BadInput:
            limit = size_text(MAX_STDIN_BYTES)
            raise UsageError(f"the question on stdin is larger than {limit}") from None
    question = " ".join(clean_text(argument).split())
    if not question:
        raise UsageError("the question is empty")
    return question


def _read_stdin(limit: int) -> str:
    """At most ``limit`` bytes of stdin as text, decoded here whatever the locale says;
    BadInput when it holds more."""
    from react_cli.untrusted import decode, read_at_most

    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is None:  # a text stream without bytes underneath (an embedding program's)
        buffer = io.BytesIO(sys.stdin.read(limit + 1).encode("utf-8", "surrogatepass"))
    return decode(read_at_most(buffer, limit))


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
    typer.Option(help="MediaWiki host root or zim:PATH [env REACT_CLI_WIKI; en.wikipedia.org]."),
]


LangOpt = Annotated[
    str | None,
    typer.Option(help="Wikipedia language: --lang zh = --wiki https://zh.wikipedia.org."),
]


VariantOpt = Annotated[
    str | None,
    typer.Option(help="Language variant, e.g. zh-cn, zh-tw [env REACT_CLI_VARIANT; zh: zh-cn]."),
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


def wiki_flags(wiki: str | None, lang: str | None) -> str | None:
    """The --wiki value, or the live host --lang names (giving both is an error)."""
    from react_cli.config import lang_host

    if lang is None:
        return wiki
    if wiki is not None:
        raise UsageError("--lang and --wiki contradict each other: give one")
    return lang_host(lang)


def lang_prompt(lang: str | None, prompt: str | None) -> str | None:
    """The prompt option, or the shipped prompt for --lang (hotpotqa-zh for zh) if any."""
    from react_cli.prompts import shipped_names

    if prompt is not None or lang is None:
        return prompt
    name = f"hotpotqa-{lang.strip().lower()}"
    return name if name in shipped_names() else None
