"""Options shared by every command that runs the agent, and how they become ``Settings``."""

from __future__ import annotations

import io
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any

import typer

from react_cli.environment import DEBUG_ENV
from react_cli.errors import UsageError

if TYPE_CHECKING:
    from react_cli.config import Settings


MAX_STDIN_BYTES = 1 << 20


def read_question(words: list[str] | None) -> str:
    """The question from the argument's words (joined, as ``llm`` does), or from stdin for
    ``-`` or no argument when stdin is piped.

    Any bytes are accepted: what is not UTF-8 becomes U+FFFD (see ``untrusted.clean_text``).
    """
    from react_cli.untrusted import BadInput, clean_text, size_text

    if words is None or words == ["-"]:
        if sys.stdin is None or sys.stdin.isatty():
            raise UsageError("no question given: pass QUESTION or pipe it on stdin")
        try:
            argument = _read_stdin(MAX_STDIN_BYTES)
        except BadInput:
            limit = size_text(MAX_STDIN_BYTES)
            raise UsageError(f"the question on stdin is larger than {limit}") from None
    else:
        argument = " ".join(words)
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


# Options shared by every command that runs the agent (ask, eval, config).
ModelOpt = Annotated[
    str | None,
    typer.Option("-m", "--model", metavar="NAME", help="Model name [env REACT_CLI_MODEL]."),
]


BaseUrlOpt = Annotated[
    str | None,
    typer.Option(
        metavar="URL",
        help="OpenAI-compatible base URL, e.g. http://127.0.0.1:8080/v1 for a local server "
        "[env OPENAI_BASE_URL, OPENAI_API_BASE; default https://api.openai.com/v1].",
    ),
]


ApiKeyOpt = Annotated[
    str | None,
    typer.Option(metavar="KEY", help="API key [env OPENAI_API_KEY]; local servers need none."),
]


ApiOpt = Annotated[
    str | None,
    typer.Option(
        metavar="[chat|completions]",  # checked by config.resolve, which names the source
        help="The endpoint: chat/completions or completions [env REACT_CLI_API; chat].",
    ),
]


PromptOpt = Annotated[
    str | None,
    typer.Option(
        metavar="NAME",
        help="Shipped prompt name or a file PATH [env REACT_CLI_PROMPT; hotpotqa].",
    ),
]


MaxStepsOpt = Annotated[int | None, typer.Option(metavar="N", help="Step limit [8].")]


TemperatureOpt = Annotated[
    float | None, typer.Option(metavar="T", help="Sampling temperature, 0 to 2 [0].")
]


MaxTokensOpt = Annotated[
    int | None,
    typer.Option(metavar="N", help="Max tokens per model call [env REACT_CLI_MAX_TOKENS; 256]."),
]


MaxTotalTokensOpt = Annotated[
    int | None, typer.Option(metavar="N", help="Stop the run once N tokens are used.")
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
    typer.Option(
        metavar="URL",
        help="MediaWiki host root, or zim:PATH for a Kiwix archive "
        "[env REACT_CLI_WIKI; https://en.wikipedia.org].",
    ),
]


LangOpt = Annotated[
    str | None,
    typer.Option(
        metavar="CODE", help="Wikipedia language: --lang zh = --wiki https://zh.wikipedia.org."
    ),
]


VariantOpt = Annotated[
    str | None,
    typer.Option(
        metavar="CODE",
        help="Language variant, e.g. zh-cn, zh-tw [env REACT_CLI_VARIANT; zh: zh-cn].",
    ),
]


NoStreamOpt = Annotated[
    bool, typer.Option("--no-stream", help="Plain requests instead of streaming.")
]


DebugOpt = Annotated[
    bool, typer.Option("--debug", help=f"Log HTTP traffic to stderr [env {DEBUG_ENV}=1].")
]


def settings_flags(**flags: Any) -> dict[str, Any]:
    """The settings the options a command was given set (None or off = not given)."""
    no_stream = flags.pop("no_stream", False)
    force_answer = flags.pop("force_answer", False)
    return _flags(
        **flags,
        stream=False if no_stream else None,
        force_answer=True if force_answer else None,
    )


RUN_OPTIONS = (
    "model",
    "base_url",
    "api_key",
    "api",
    "prompt",
    "lang",
    "max_steps",
    "temperature",
    "max_tokens",
    "max_total_tokens",
    "timeout",
    "force_answer",
    "wiki",
    "variant",
    "no_stream",
)
"""The parameters (by these names) of every command that takes the agent's run options."""


def run_flags(options: Mapping[str, Any]) -> dict[str, Any]:
    """The settings a command's run options give; ``options`` maps its parameter names to
    their values (its ``locals()`` on entry). --lang names a wiki and, if shipped, a prompt."""
    given = {name: options[name] for name in RUN_OPTIONS}
    lang = given.pop("lang")
    given.update(
        prompt=lang_prompt(lang, given["prompt"]),
        wiki=wiki_flags(given["wiki"], lang),
        run_timeout_s=given.pop("timeout"),
    )
    return settings_flags(**given)


def run_settings(**flags: Any) -> Settings:
    """Resolve settings from the options a command was given (None = not given)."""
    from react_cli.config import resolve

    return resolve(settings_flags(**flags))


def wiki_flags(wiki: str | None, lang: str | None) -> str | None:
    """The --wiki value, or the live host --lang names (giving both is an error)."""
    from react_cli.urls import lang_host

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
