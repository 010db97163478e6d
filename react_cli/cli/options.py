"""Options commands share, declared once, and how the run options become ``Settings``."""

from __future__ import annotations

import functools
import inspect
import io
import sys
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Annotated, Any, TypeVar, get_type_hints

import typer

from react_cli.core.errors import UsageError
from react_cli.settings.environment import DEBUG_ENV

if TYPE_CHECKING:
    from react_cli.settings.settings import Settings


MAX_STDIN_BYTES = 1 << 20
R = TypeVar("R")


def read_question(words: list[str] | None) -> str:
    """The question from the argument's words (joined, as ``llm`` does), or from stdin for
    ``-`` or no argument when stdin is piped.

    Any bytes are accepted: what is not UTF-8 becomes U+FFFD (see ``untrusted.clean_text``).
    """
    from react_cli.infra.untrusted import BadInput, size_text

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
    question = question_text(argument)
    if not question:
        raise UsageError("the question is empty")
    return question


def question_text(text: str) -> str:
    """A question as it is asked: on one line, single spaces, always valid UTF-8."""
    from react_cli.infra.untrusted import clean_text

    return " ".join(clean_text(text).split())


def _read_stdin(limit: int) -> str:
    """At most ``limit`` bytes of stdin as text, decoded here whatever the locale says;
    BadInput when it holds more."""
    from react_cli.infra.untrusted import decode, read_at_most

    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is None:  # a text stream without bytes underneath (an embedding program's)
        buffer = io.BytesIO(sys.stdin.read(limit + 1).encode("utf-8", "surrogatepass"))
    return decode(read_at_most(buffer, limit))


def _flags(**options: Any) -> dict[str, Any]:
    return {name: value for name, value in options.items() if value is not None}


# The options of commands that run the agent or its tools; RunOptions gathers the run options.
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


ProtocolOpt = Annotated[
    str | None,
    typer.Option(
        metavar="[text|tools]",  # checked by config.resolve
        help="How the loop speaks to the model: the paper's text prompt, or the chat API's "
        "native tool calls [env REACT_CLI_PROTOCOL; text].",
    ),
]


PromptOpt = Annotated[
    str | None,
    typer.Option(
        metavar="NAME",
        help="Shipped prompt name or a file PATH [env REACT_CLI_PROMPT; hotpotqa].",
    ),
]


MethodOpt = Annotated[
    str | None,
    typer.Option(
        metavar="NAME",
        help="standard, cot, cot-sc, act, react, react+cot-sc or cot-sc+react "
        "[env REACT_CLI_METHOD; react].",
    ),
]


MaxStepsOpt = Annotated[
    int | None,
    typer.Option(metavar="N", help="Step limit [8; the hybrids' ReAct: 7 HotpotQA, 5 FEVER]."),
]


SamplesOpt = Annotated[int | None, typer.Option(metavar="N", help="CoT-SC samples [21].")]
SampleTemperatureOpt = Annotated[
    float | None, typer.Option(metavar="T", help="CoT-SC sampling temperature [0.7].")
]
SampleConcurrencyOpt = Annotated[
    int | None, typer.Option(metavar="N", help="Sampling requests at once, without n [4].")
]


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


MaxCostOpt = Annotated[
    float | None,
    typer.Option(
        metavar="AMOUNT",
        help="Stop the run once it cost AMOUNT (from the model's configured prices).",
    ),
]


MaxNoProgressOpt = Annotated[
    int | None,
    typer.Option(
        metavar="N",
        help="Stop after N observations in a row that brought nothing new (not found, no "
        "more results, a page already seen) [off].",
    ),
]


CacheOpt = Annotated[
    bool | None,
    typer.Option(
        "--cache/--no-cache",
        help="Answer model calls at temperature 0 and Wikipedia requests from <home>/cache "
        "when it holds them, and keep new ones there [env REACT_CLI_CACHE; off].",
        show_default=False,
    ),
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


ConstrainOpt = Annotated[
    bool,
    typer.Option(
        "--constrain",
        help="Text protocol: constrain each reply to a thought and a valid action with a "
        "grammar (llama.cpp's and vLLM's servers).",
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


OtelOpt = Annotated[
    bool | None,
    typer.Option(
        "--otel/--no-otel",
        help="Send the run's spans over OTLP (the 'otel' extra) [env REACT_CLI_OTEL; on when "
        "OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set].",
        show_default=False,
    ),
]


ToolsFromOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--tools-from",
        metavar="FILE.py",
        help="Add the @react_cli.tool functions of this Python file (repeatable) "
        "[env REACT_CLI_TOOLS_FROM].",
    ),
]


McpOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--mcp",
        metavar="'COMMAND ARGS…'|URL|NAME",
        help="Add an MCP server's tools: a command started for the run (stdio), a "
        "streamable-HTTP URL, or a server of the config file's [mcp] table (repeatable; "
        "the 'mcp' extra).",
    ),
]


NoWikiOpt = Annotated[
    bool, typer.Option("--no-wiki", help="No Search and Lookup: only the other tools.")
]


ToolTimeoutOpt = Annotated[
    float | None,
    typer.Option(
        "--tool-timeout",
        metavar="SECONDS",
        help="Longest call of a tool from a file or a server, and an MCP server's start "
        "[env REACT_CLI_TOOL_TIMEOUT; 30].",
    ),
]


DebugOpt = Annotated[
    bool, typer.Option("--debug", help=f"Log HTTP traffic to stderr [env {DEBUG_ENV}=1].")
]


# The options of commands that answer questions (ask, chat), beside the run options.
VerboseOpt = Annotated[bool, typer.Option("-v", "--verbose", help="Show the trajectory on stderr.")]
NoTraceOpt = Annotated[bool, typer.Option("--no-trace", help="Write no trace.")]
JsonOpt = Annotated[
    bool, typer.Option("--json", help="Print one JSON object instead of the answer.")
]
ContinueOpt = Annotated[
    bool,
    typer.Option(
        "-c", "--continue", help="Continue the most recent conversation: earlier turns as context."
    ),
]
ConversationOpt = Annotated[
    str | None,
    typer.Option(
        "--conversation",
        metavar="ID",
        help="Continue conversation ID ('react-cli traces' lists them).",
    ),
]
MaxHistoryTokensOpt = Annotated[
    int | None,
    typer.Option(
        metavar="N",
        help="A follow-up gets the newest earlier turns within N tokens "
        "[env REACT_CLI_MAX_HISTORY_TOKENS; 1000].",
    ),
]


def settings_flags(**flags: Any) -> dict[str, Any]:
    """The settings the options a command was given set (None or off = not given)."""
    no_stream = flags.pop("no_stream", False)
    force_answer = flags.pop("force_answer", False)
    constrain = flags.pop("constrain", False)
    return _flags(
        **flags,
        stream=False if no_stream else None,
        force_answer=True if force_answer else None,
        constrain=True if constrain else None,
    )


@dataclass(frozen=True)
class RunOptions:
    """The run options every command that runs the agent takes (ask, eval, config), as given:
    None or off = not given. Declared here once; ``@with_options(RunOptions)`` adds them to a
    command, which receives them as one ``options`` argument."""

    model: ModelOpt = None
    base_url: BaseUrlOpt = None
    api_key: ApiKeyOpt = None
    api: ApiOpt = None
    protocol: ProtocolOpt = None
    prompt: PromptOpt = None
    method: MethodOpt = None
    max_steps: MaxStepsOpt = None
    samples: SamplesOpt = None
    sample_temperature: SampleTemperatureOpt = None
    sample_concurrency: SampleConcurrencyOpt = None
    temperature: TemperatureOpt = None
    max_tokens: MaxTokensOpt = None
    max_total_tokens: MaxTotalTokensOpt = None
    max_cost: MaxCostOpt = None
    max_no_progress: MaxNoProgressOpt = None
    timeout: TimeoutOpt = None
    force_answer: ForceAnswerOpt = False
    constrain: ConstrainOpt = False
    wiki: WikiOpt = None
    lang: LangOpt = None
    variant: VariantOpt = None
    no_stream: NoStreamOpt = False
    otel: OtelOpt = None
    tools_from: ToolsFromOpt = None
    mcp: McpOpt = None
    no_wiki: NoWikiOpt = False
    tool_timeout: ToolTimeoutOpt = None
    cache: CacheOpt = None

    def flags(self) -> dict[str, Any]:
        """The settings these options give, as ``config.resolve`` flags; --lang names a wiki
        and, if one is shipped, a prompt; --max-steps is the hybrids' ReAct limit too."""
        given = {option.name: getattr(self, option.name) for option in fields(self)}
        lang = given.pop("lang")
        given.update(
            wiki_tools=False if given.pop("no_wiki") else None,
            tool_timeout_s=given.pop("tool_timeout"),
        )
        given.update(
            prompt=lang_prompt(lang, self.prompt),
            wiki=wiki_flags(self.wiki, lang),
            run_timeout_s=given.pop("timeout"),
            hybrid_max_steps=self.max_steps,
        )
        return settings_flags(**given)


NO_RUN_OPTIONS = RunOptions()
"""A command's ``options`` default (typer replaces the parameter: see :func:`with_options`)."""


@dataclass(frozen=True)
class ConversationOptions:
    """Which conversation a question goes on (ask, chat): a new one unless ``-c`` or
    ``--conversation ID``; and how much of it a follow-up is given."""

    continue_: ContinueOpt = False
    conversation: ConversationOpt = None
    max_history_tokens: MaxHistoryTokensOpt = None

    def flags(self) -> dict[str, Any]:
        """The settings these options give."""
        return _flags(max_history_tokens=self.max_history_tokens)

    @property
    def given(self) -> bool:
        return self.continue_ or self.conversation is not None


NO_CONVERSATION_OPTIONS = ConversationOptions()


def with_options(
    kind: type[Any], name: str = "options"
) -> Callable[[Callable[..., R]], Callable[..., R]]:
    """A decorator: the fields of the dataclass ``kind``, each a typer option, take the place
    of the command's ``name`` parameter where typer reads it, and the command is called with
    them gathered in one ``kind``: options shared by commands are declared once."""
    types = get_type_hints(kind, include_extras=True)

    def decorate(command: Callable[..., R]) -> Callable[..., R]:
        signature = inspect.signature(command, eval_str=True)
        place = signature.parameters[name].kind
        added = [
            inspect.Parameter(
                field.name, place, default=field.default, annotation=types[field.name]
            )
            for field in fields(kind)
        ]
        parameters: list[inspect.Parameter] = []
        for parameter in signature.parameters.values():
            parameters += added if parameter.name == name else [parameter]

        @functools.wraps(command)
        def run(*args: Any, **kwargs: Any) -> R:
            given = {field.name: kwargs.pop(field.name) for field in fields(kind)}
            return command(*args, **{name: kind(**given)}, **kwargs)

        run.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
        run.__annotations__ = {parameter.name: parameter.annotation for parameter in parameters}
        return run

    return decorate


def run_settings(**flags: Any) -> Settings:
    """Resolve settings from the options a command was given (None = not given)."""
    from react_cli.settings.resolve import resolve

    return resolve(settings_flags(**flags))


def wiki_flags(wiki: str | None, lang: str | None) -> str | None:
    """The --wiki value, or the live host --lang names (giving both is an error)."""
    from react_cli.settings.urls import lang_host

    if lang is None:
        return wiki
    if wiki is not None:
        raise UsageError("--lang and --wiki contradict each other: give one")
    return lang_host(lang)


def lang_prompt(lang: str | None, prompt: str | None) -> str | None:
    """The prompt option, or the shipped prompt for --lang (hotpotqa-zh for zh) if any."""
    from react_cli.loop.prompts import shipped_names

    if prompt is not None or lang is None:
        return prompt
    name = f"hotpotqa-{lang.strip().lower()}"
    return name if name in shipped_names() else None
