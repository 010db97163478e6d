"""The options commands share, declared once, each in its help panel (``cli.help.Panel``).

Options one command alone takes are declared beside it. How a command takes a set of these
as one argument, and how they become settings, is ``cli.run_options``.
"""

from __future__ import annotations

from typing import Annotated

import typer

from react_cli.cli.help import Panel
from react_cli.settings.environment import DEBUG_ENV

# --- model and endpoint -----------------------------------------------------------------------
ModelOpt = Annotated[
    str | None,
    typer.Option(
        "-m",
        "--model",
        metavar="NAME",
        help="Model name [env REACT_CLI_MODEL].",
        rich_help_panel=Panel.MODEL,
    ),
]
ModelsOpt = Annotated[
    list[str] | None,
    typer.Option(
        "-m",
        "--model",
        metavar="NAME",
        help="Model name; repeat it for a matrix of models, each at its [models.NAME] "
        "endpoint [env REACT_CLI_MODEL].",
        rich_help_panel=Panel.MODEL,
    ),
]
BaseUrlOpt = Annotated[
    str | None,
    typer.Option(
        metavar="URL",
        help="OpenAI-compatible base URL, e.g. http://127.0.0.1:8080/v1 for a local server "
        "[env OPENAI_BASE_URL, OPENAI_API_BASE; default https://api.openai.com/v1].",
        rich_help_panel=Panel.MODEL,
    ),
]
BaseUrlsOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--base-url",
        metavar="URL",
        help="OpenAI-compatible base URL, e.g. http://127.0.0.1:8080/v1 for a local server "
        "[env OPENAI_BASE_URL, OPENAI_API_BASE; default https://api.openai.com/v1]; repeated: "
        "replicas of one model, each question on the least busy one.",
        rich_help_panel=Panel.MODEL,
    ),
]
ApiKeyOpt = Annotated[
    str | None,
    typer.Option(
        metavar="KEY",
        help="API key [env OPENAI_API_KEY]; local servers need none.",
        rich_help_panel=Panel.MODEL,
    ),
]
ApiOpt = Annotated[
    str | None,
    typer.Option(
        metavar="[chat|completions]",  # checked by config.resolve, which names the source
        help="The endpoint: chat/completions or completions [env REACT_CLI_API; chat].",
        rich_help_panel=Panel.MODEL,
    ),
]
TemperatureOpt = Annotated[
    float | None,
    typer.Option(
        metavar="T", help="Sampling temperature, 0 to 2 [0].", rich_help_panel=Panel.MODEL
    ),
]
ServiceTierOpt = Annotated[
    str | None,
    typer.Option(
        metavar="[auto|default|flex|priority]",  # checked by settings.validation
        help="Ask for this processing tier (sent as service_tier); flex: cheaper, slower, "
        "a 900 s request timeout unless set, waits out 'resource unavailable' "
        "[config service_tier; not sent].",
        rich_help_panel=Panel.MODEL,
    ),
]
NoStreamOpt = Annotated[
    bool,
    typer.Option(
        "--no-stream", help="Plain requests instead of streaming.", rich_help_panel=Panel.MODEL
    ),
]

# --- method and prompt ------------------------------------------------------------------------
MethodOpt = Annotated[
    str | None,
    typer.Option(
        metavar="NAME",
        help="standard, cot, cot-sc, act, react, react+cot-sc or cot-sc+react "
        "[env REACT_CLI_METHOD; react].",
        rich_help_panel=Panel.METHOD,
    ),
]
PromptOpt = Annotated[
    str | None,
    typer.Option(
        metavar="NAME",
        help="Shipped prompt name or a file PATH [env REACT_CLI_PROMPT; hotpotqa].",
        rich_help_panel=Panel.METHOD,
    ),
]
ProtocolOpt = Annotated[
    str | None,
    typer.Option(
        metavar="[text|tools]",  # checked by config.resolve
        help="How the loop speaks to the model: the paper's text prompt, or the chat API's "
        "native tool calls [env REACT_CLI_PROTOCOL; text].",
        rich_help_panel=Panel.METHOD,
    ),
]
SamplesOpt = Annotated[
    int | None,
    typer.Option(metavar="N", help="CoT-SC samples [21].", rich_help_panel=Panel.METHOD),
]
SampleTemperatureOpt = Annotated[
    float | None,
    typer.Option(
        metavar="T", help="CoT-SC sampling temperature [0.7].", rich_help_panel=Panel.METHOD
    ),
]
ForceAnswerOpt = Annotated[
    bool,
    typer.Option(
        "--force-answer",
        help="At the step limit, ask the model once more for Finish[...].",
        rich_help_panel=Panel.METHOD,
    ),
]
ConstrainOpt = Annotated[
    bool,
    typer.Option(
        "--constrain",
        help="Text protocol: constrain each reply to a thought and a valid action with a "
        "grammar (llama.cpp's and vLLM's servers).",
        rich_help_panel=Panel.METHOD,
    ),
]

# --- Wikipedia --------------------------------------------------------------------------------
WikiOpt = Annotated[
    str | None,
    typer.Option(
        metavar="URL",
        help="MediaWiki host root, or zim:PATH for a Kiwix archive "
        "[env REACT_CLI_WIKI; https://en.wikipedia.org].",
        rich_help_panel=Panel.WIKIPEDIA,
    ),
]
LangOpt = Annotated[
    str | None,
    typer.Option(
        metavar="CODE",
        help="Wikipedia language: --lang zh = --wiki https://zh.wikipedia.org.",
        rich_help_panel=Panel.WIKIPEDIA,
    ),
]
VariantOpt = Annotated[
    str | None,
    typer.Option(
        metavar="CODE",
        help="Language variant, e.g. zh-cn, zh-tw [env REACT_CLI_VARIANT; zh: zh-cn].",
        rich_help_panel=Panel.WIKIPEDIA,
    ),
]
NoWikiOpt = Annotated[
    bool,
    typer.Option(
        "--no-wiki",
        help="No Search and Lookup: only the other tools.",
        rich_help_panel=Panel.WIKIPEDIA,
    ),
]

# --- tools and MCP ----------------------------------------------------------------------------
ToolsFromOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--tools-from",
        metavar="FILE.py",
        help="Add the @react_cli.tool functions of this Python file (repeatable) "
        "[env REACT_CLI_TOOLS_FROM].",
        rich_help_panel=Panel.TOOLS,
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
        rich_help_panel=Panel.TOOLS,
    ),
]
ToolTimeoutOpt = Annotated[
    float | None,
    typer.Option(
        "--tool-timeout",
        metavar="SECONDS",
        help="Longest call of a tool from a file or a server, and an MCP server's start "
        "[env REACT_CLI_TOOL_TIMEOUT; 30].",
        rich_help_panel=Panel.TOOLS,
    ),
]
AllowToolOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--allow-tool",
        metavar="PATTERN",
        help="Give consent ahead: the tools it matches run without asking (a name or a glob "
        "such as 'files.*'; repeatable; adds to the config file's [tools] allow).",
        rich_help_panel=Panel.TOOLS,
    ),
]
DenyToolOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--deny-tool",
        metavar="PATTERN",
        help="Leave the tools it matches out of the run: the model is never shown them; wins "
        "over --allow-tool (repeatable; adds to the config file's [tools] deny).",
        rich_help_panel=Panel.TOOLS,
    ),
]

# --- limits and budgets -----------------------------------------------------------------------
MaxStepsOpt = Annotated[
    int | None,
    typer.Option(
        metavar="N",
        help="Step limit [8; the hybrids' ReAct: 7 HotpotQA, 5 FEVER].",
        rich_help_panel=Panel.LIMITS,
    ),
]
MaxTokensOpt = Annotated[
    int | None,
    typer.Option(
        metavar="N",
        help="Max tokens per model call [env REACT_CLI_MAX_TOKENS; 256].",
        rich_help_panel=Panel.LIMITS,
    ),
]
MaxTotalTokensOpt = Annotated[
    int | None,
    typer.Option(
        metavar="N", help="Stop the run once N tokens are used.", rich_help_panel=Panel.LIMITS
    ),
]
MaxCostOpt = Annotated[
    float | None,
    typer.Option(
        metavar="AMOUNT",
        help="Stop the run once it cost AMOUNT (from the model's configured prices).",
        rich_help_panel=Panel.LIMITS,
    ),
]
MaxNoProgressOpt = Annotated[
    int | None,
    typer.Option(
        metavar="N",
        help="Stop after N observations in a row that brought nothing new (not found, no "
        "more results, a page already seen) [off].",
        rich_help_panel=Panel.LIMITS,
    ),
]
TimeoutOpt = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        metavar="SECONDS",
        help="Stop the run after this long; each request gets only the time left "
        "[env REACT_CLI_TIMEOUT].",
        rich_help_panel=Panel.LIMITS,
    ),
]

# --- speed and cache --------------------------------------------------------------------------
SampleConcurrencyOpt = Annotated[
    int | None,
    typer.Option(
        metavar="N",
        help="CoT-SC sampling requests at once, for endpoints without n [4].",
        rich_help_panel=Panel.SPEED,
    ),
]
CacheOpt = Annotated[
    bool | None,
    typer.Option(
        "--cache/--no-cache",
        help="Answer model calls at temperature 0 and Wikipedia requests from <home>/cache "
        "when it holds them, and keep new ones there [env REACT_CLI_CACHE; off].",
        show_default=False,
        rich_help_panel=Panel.SPEED,
    ),
]

# --- conversation -----------------------------------------------------------------------------
ContinueOpt = Annotated[
    bool,
    typer.Option(
        "-c",
        "--continue",
        help="Continue the most recent conversation: earlier turns as context.",
        rich_help_panel=Panel.CONVERSATION,
    ),
]
ConversationOpt = Annotated[
    str | None,
    typer.Option(
        "--conversation",
        metavar="ID",
        help="Continue conversation ID ('react-cli traces' lists them).",
        rich_help_panel=Panel.CONVERSATION,
    ),
]
MaxHistoryTokensOpt = Annotated[
    int | None,
    typer.Option(
        metavar="N",
        help="A follow-up gets the newest earlier turns within N tokens "
        "[env REACT_CLI_MAX_HISTORY_TOKENS; 1000].",
        rich_help_panel=Panel.CONVERSATION,
    ),
]

# --- output and traces ------------------------------------------------------------------------
VerboseOpt = Annotated[
    bool,
    typer.Option(
        "-v", "--verbose", help="Show the trajectory on stderr.", rich_help_panel=Panel.OUTPUT
    ),
]
NoTraceOpt = Annotated[
    bool, typer.Option("--no-trace", help="Write no trace.", rich_help_panel=Panel.OUTPUT)
]
JsonOpt = Annotated[
    bool,
    typer.Option(
        "--json",
        help="Print one JSON object instead of the answer.",
        rich_help_panel=Panel.OUTPUT,
    ),
]
OtelOpt = Annotated[
    bool | None,
    typer.Option(
        "--otel/--no-otel",
        help="Send the run's spans over OTLP (the 'otel' extra) [env REACT_CLI_OTEL; on when "
        "OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set].",
        show_default=False,
        rich_help_panel=Panel.OUTPUT,
    ),
]

# --- debugging --------------------------------------------------------------------------------
DebugOpt = Annotated[
    bool,
    typer.Option(
        "--debug",
        help=f"Log HTTP traffic to stderr [env {DEBUG_ENV}=1].",
        rich_help_panel=Panel.DEBUGGING,
    ),
]
