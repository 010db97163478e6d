"""The option sets commands share, each taken as one argument (``@with_options``), and how the
options a command was given become ``Settings``."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any, TypeVar, get_type_hints

from react_cli.cli.options import (
    AllowToolOpt,
    ApiKeyOpt,
    ApiOpt,
    BaseUrlsOpt,
    CacheOpt,
    ConstrainOpt,
    ContinueOpt,
    ConversationOpt,
    DenyToolOpt,
    ForceAnswerOpt,
    LangOpt,
    MaxCostOpt,
    MaxHistoryTokensOpt,
    MaxNoProgressOpt,
    MaxStepsOpt,
    MaxTokensOpt,
    MaxTotalTokensOpt,
    McpOpt,
    MethodOpt,
    ModelOpt,
    ModelsOpt,
    NoStreamOpt,
    NoWikiOpt,
    OtelOpt,
    PromptOpt,
    ProtocolOpt,
    SampleConcurrencyOpt,
    SamplesOpt,
    SampleTemperatureOpt,
    ServiceTierOpt,
    TemperatureOpt,
    TimeoutOpt,
    ToolsFromOpt,
    ToolTimeoutOpt,
    VariantOpt,
    WikiOpt,
)
from react_cli.core.errors import UsageError

if TYPE_CHECKING:
    from react_cli.settings.settings import Settings

R = TypeVar("R")


def _flags(**options: Any) -> dict[str, Any]:
    return {name: value for name, value in options.items() if value is not None}


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
    """The run options every command that runs the agent takes (ask, chat, eval, tools,
    config), as given: None or off = not given. Declared here once, by help panel;
    ``@with_options(RunOptions)`` adds them to a command, which receives them as one
    ``options`` argument."""

    model: ModelOpt = None
    base_url: BaseUrlsOpt = None
    api_key: ApiKeyOpt = None
    api: ApiOpt = None
    temperature: TemperatureOpt = None
    no_stream: NoStreamOpt = False
    service_tier: ServiceTierOpt = None
    method: MethodOpt = None
    prompt: PromptOpt = None
    protocol: ProtocolOpt = None
    samples: SamplesOpt = None
    sample_temperature: SampleTemperatureOpt = None
    force_answer: ForceAnswerOpt = False
    constrain: ConstrainOpt = False
    wiki: WikiOpt = None
    lang: LangOpt = None
    variant: VariantOpt = None
    no_wiki: NoWikiOpt = False
    tools_from: ToolsFromOpt = None
    mcp: McpOpt = None
    tool_timeout: ToolTimeoutOpt = None
    allow_tool: AllowToolOpt = None
    deny_tool: DenyToolOpt = None
    max_steps: MaxStepsOpt = None
    max_tokens: MaxTokensOpt = None
    max_total_tokens: MaxTotalTokensOpt = None
    max_cost: MaxCostOpt = None
    max_no_progress: MaxNoProgressOpt = None
    timeout: TimeoutOpt = None
    sample_concurrency: SampleConcurrencyOpt = None
    cache: CacheOpt = None
    otel: OtelOpt = None

    def flags(self) -> dict[str, Any]:
        """The settings these options give, as ``settings.resolve`` flags; --lang names a wiki
        and, if one is shipped, a prompt; --max-steps is the hybrids' ReAct limit too."""
        given = {option.name: getattr(self, option.name) for option in fields(self)}
        lang = given.pop("lang")
        urls = given.pop("base_url") or [None]
        given.update(
            base_url=urls[0],
            replicas=tuple(urls[1:]) or None,
            wiki_tools=False if given.pop("no_wiki") else None,
            tool_timeout_s=given.pop("tool_timeout"),
            tool_allow=given.pop("allow_tool"),
            tool_deny=given.pop("deny_tool"),
        )
        given.update(
            prompt=lang_prompt(lang, self.prompt),
            wiki=wiki_flags(self.wiki, lang),
            run_timeout_s=given.pop("timeout"),
            hybrid_max_steps=self.max_steps,
        )
        return settings_flags(**given)


@dataclass(frozen=True)
class EvalOptions(RunOptions):
    """``eval``'s run options: ``-m`` may be repeated (a matrix of models)."""

    model: ModelsOpt = None  # type: ignore[assignment]

    @property
    def models(self) -> tuple[str, ...]:
        """The models given, each once, in order."""
        return tuple(dict.fromkeys(self.model or ()))

    def flags(self) -> dict[str, Any]:
        """As ``RunOptions.flags``, the model among them when one is given."""
        models = self.models
        flags = RunOptions.flags(replace(self, model=None))
        if len(models) == 1:
            flags["model"] = models[0]
        return flags


NO_RUN_OPTIONS = RunOptions()
NO_EVAL_OPTIONS = EvalOptions()
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
