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
    from react_cli.records import ToolResult, Tools
    from react_cli.replay import Recorded

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
wiki_app = typer.Typer(
    help="Use the Wikipedia tools directly (what the agent would observe); build ZIM archives.",
    rich_markup_mode=None,
    no_args_is_help=True,
)
app.add_typer(wiki_app, name="wiki")

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
    lang: LangOpt = None,
    variant: VariantOpt = None,
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
    from_trace: Annotated[
        Path | None,
        typer.Option(help="Fork this trace: replay its steps before --from-step, then go live."),
    ] = None,
    from_step: Annotated[
        int | None, typer.Option(help="The step K a fork continues live from (1 = first).")
    ] = None,
) -> None:
    """Answer QUESTION: the answer alone on stdout, the trajectory (-v) on stderr."""
    from react_cli.config import home_dir
    from react_cli.prompts import load_prompt
    from react_cli.render import Renderer, make_console, plain
    from react_cli.run import build_model, build_tools, run_question, stderr_debug_log
    from react_cli.trace import default_trace_path, now_utc

    if trace is not None and no_trace:
        raise UsageError("--trace and --no-trace contradict each other")
    settings = run_settings(
        model=model,
        base_url=base_url,
        api_key=api_key,
        api=api,
        prompt=lang_prompt(lang, prompt),
        max_steps=max_steps,
        temperature=temperature,
        max_tokens=max_tokens,
        max_total_tokens=max_total_tokens,
        run_timeout_s=timeout,
        force_answer=force_answer,
        wiki=wiki_flags(wiki, lang),
        variant=variant,
        no_stream=no_stream,
    )
    fork = None
    if from_trace is not None or from_step is not None:
        from react_cli.replay import Fork

        if question is not None:
            raise UsageError("a fork asks the trace's question: give no QUESTION")
        fork = Fork.open(from_trace, from_step)
    # A fork keeps the recorded prompt unless --prompt asks for another one.
    template = fork.recorded.template() if fork and prompt is None else load_prompt(settings.prompt)
    text = fork.recorded.result.question if fork else read_question(question)
    debug_log = stderr_debug_log if debug or _debug_env() else None
    llm = build_model(settings, debug_log)
    tools = build_tools(settings, debug_log)
    if fork:
        llm, tools = fork.model(llm), fork.tools(tools)
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
        trace_extra=fork.trace_extra() if fork else None,
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
        _print_json(summary)
    elif result.answer is not None:
        print(" ".join(plain(result.answer).split()))
    if result.stop_reason == "interrupted":
        _error("interrupted" + (f"; trace written to {path}" if path else ""))
        raise typer.Exit(EXIT_INTERRUPTED)
    if result.answer is None:
        _error(f"no answer: {describe_stop(result.stop_reason, settings.max_steps, result.error)}")
        raise typer.Exit(EXIT_NO_ANSWER)


@app.command("eval")
def eval_command(
    dataset: Annotated[Path, typer.Argument(help="HotpotQA JSON, FEVER JSONL or JSONL file.")],
    data_format: Annotated[
        str | None,
        typer.Option("--format", help="hotpotqa, fever or jsonl [default: detected]."),
    ] = None,
    limit: Annotated[int | None, typer.Option(help="Run at most N questions.")] = None,
    offset: Annotated[int, typer.Option(help="Skip the first N selected questions.")] = 0,
    shuffle_seed: Annotated[
        int | None, typer.Option(help="Shuffle the questions with this seed first.")
    ] = None,
    paper_subset: Annotated[
        bool,
        typer.Option(
            "--paper-subset", help="The ReAct paper's 500 questions (Random(233) over 7405)."
        ),
    ] = False,
    concurrency: Annotated[int, typer.Option(help="Questions run at once.")] = 4,
    wiki_concurrency: Annotated[
        int, typer.Option(help="Wikipedia requests in flight at most.")
    ] = 2,
    out: Annotated[
        Path | None, typer.Option(help="Output folder [default <home>/evals/<time>-<name>].")
    ] = None,
    resume: Annotated[
        Path | None, typer.Option(help="Continue the run in this folder, skipping done work.")
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the summary object instead of its path.")
    ] = False,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    api_key: ApiKeyOpt = None,
    api: ApiOpt = None,
    prompt: PromptOpt = None,
    max_steps: MaxStepsOpt = None,
    temperature: TemperatureOpt = None,
    max_tokens: MaxTokensOpt = None,
    max_total_tokens: MaxTotalTokensOpt = None,
    wiki: WikiOpt = None,
    no_stream: NoStreamOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Score a model on a dataset: summary.json path on stdout, progress on stderr.

    Exit codes: 0 the run completed (whatever the score); 1 questions failed hard (endpoint
    errors; --resume retries them); 2 usage error; 130 interrupted (results kept).
    """
    from react_cli.config import home_dir
    from react_cli.datasets import load_dataset, select
    from react_cli.eval_view import ProgressView
    from react_cli.evaluate import Evaluation, prepare_out_dir, run_evaluation
    from react_cli.prompts import load_prompt
    from react_cli.render import make_console
    from react_cli.run import build_backend, build_model, stderr_debug_log
    from react_cli.trace import now_utc, slug

    if concurrency < 1 or wiki_concurrency < 1:
        raise UsageError("--concurrency and --wiki-concurrency must be at least 1")
    if out is not None and resume is not None and out != resume:
        raise UsageError("--out and --resume name different folders; --resume DIR is enough")
    data = load_dataset(dataset, data_format)
    examples = select(
        data.examples,
        offset=offset,
        limit=limit,
        shuffle_seed=shuffle_seed,
        paper_subset=paper_subset,
    )
    if prompt is None and data.format == "fever":
        prompt = "fever"
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
        wiki=wiki,
        no_stream=no_stream,
    )
    template = load_prompt(settings.prompt)
    debug_log = stderr_debug_log if debug or _debug_env() else None
    clients = [build_model(settings, debug_log)]  # fails on a missing model before any output
    backend = build_backend(settings)
    directory = resume or out
    if directory is None:
        stamp = now_utc().strftime("%Y%m%dT%H%M%SZ")
        directory = home_dir() / "evals" / f"{stamp}-{slug(dataset.stem)}"
    prepare_out_dir(directory, resume is not None)
    evaluation = Evaluation(
        dataset=data,
        examples=examples,
        selection={
            "offset": offset,
            "limit": limit,
            "shuffle_seed": shuffle_seed,
            "paper_subset": paper_subset,
        },
        settings=settings,
        template=template,
        out_dir=directory,
        concurrency=concurrency,
        wiki_concurrency=wiki_concurrency,
    )
    outcome = run_evaluation(
        evaluation,
        model_factory=lambda: clients.pop() if clients else build_model(settings, debug_log),
        backend=backend,
        observer=ProgressView(make_console()),
    )
    summary = outcome.summary
    if as_json:
        _print_json(summary)
    else:
        print(directory / "summary.json")
    again = f"continue with --resume {directory}"
    if outcome.status == "interrupted":
        _error(f"interrupted; {summary['n']} results kept in {directory} ({again})")
        raise typer.Exit(EXIT_INTERRUPTED)
    if outcome.status == "stopped":
        _error(f"stopped: questions kept failing ({outcome.last_error}); {again}")
        raise typer.Exit(EXIT_NO_ANSWER)
    if summary["failed"]:
        _error(f"{summary['failed']} questions failed ({outcome.last_error}); retry: {again}")
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


TraceArg = Annotated[
    Path | None, typer.Argument(help="A trace file; omitted = the most recent run's trace.")
]
NthOpt = Annotated[
    int | None, typer.Option("-n", help="Use the N-th most recent trace (1 = newest).")
]


@app.command()
def replay(
    trace: TraceArg = None,
    nth: NthOpt = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the trace normalised (or the re-run's result).")
    ] = False,
    step_delay: Annotated[
        float, typer.Option(help="Pause this many seconds after each step while rendering.")
    ] = 0.0,
    rerun: Annotated[
        bool,
        typer.Option(help="Re-run offline with today's code on the recorded outputs; diff."),
    ] = False,
    live_tools: Annotated[
        bool, typer.Option(help="Re-run on the recorded model outputs but real Wikipedia.")
    ] = False,
    wiki: WikiOpt = None,
    verbose: Annotated[
        bool, typer.Option("-v", "--verbose", help="Show the re-run's trajectory on stderr.")
    ] = False,
) -> None:
    """Show a saved run as 'ask -v' showed it (stdout), or re-run it and diff (--rerun).

    Exit codes: 0 shown, or re-run reproduced the recording; 1 the re-run differs, or the
    trace is missing or unreadable; 2 usage error.
    """
    from react_cli.config import home_dir
    from react_cli.replay import load_run, select_trace

    if step_delay < 0:
        raise UsageError("--step-delay must be ≥ 0")
    rerunning = rerun or live_tools
    if verbose and not rerunning:
        raise UsageError("-v applies to --rerun / --live-tools only")
    if wiki is not None and not live_tools:
        raise UsageError("--wiki applies to --live-tools only")
    if step_delay and (as_json or rerunning):
        raise UsageError("--step-delay applies to rendering only, not to --json or --rerun")
    recorded = load_run(select_trace(home_dir(), trace, nth))
    if rerunning:
        _rerun(recorded, live_tools=live_tools, wiki=wiki, verbose=verbose, as_json=as_json)
    elif as_json:
        _print_json(recorded.normalised(), indent=2)
    else:
        from react_cli.render import make_console
        from react_cli.render import replay_run as play
        from react_cli.replay import PacedRenderer

        play(PacedRenderer(make_console(stderr=False), step_delay), recorded.result)


def _rerun(
    recorded: Recorded, *, live_tools: bool, wiki: str | None, verbose: bool, as_json: bool
) -> None:
    """Re-run a recorded run; exit 1 with a step-by-step diff when it does not reproduce."""
    from react_cli.render import Renderer, make_console, plain
    from react_cli.replay import compare
    from react_cli.replay import rerun as rerun_run

    tools = None
    if live_tools:
        from react_cli.run import build_tools

        tools = build_tools(run_settings(wiki=wiki))
    observer = Renderer(make_console()) if verbose else None
    now = rerun_run(recorded, tools=tools, observer=observer)
    differences = compare(recorded.result, now)
    if as_json:
        report = {
            "reproduced": not differences,
            "answer": now.answer,
            "stop_reason": now.stop_reason,
            "differences": [d.to_dict() for d in differences],
        }
        _print_json(report)
    elif not differences:
        if now.answer is not None:
            print(" ".join(plain(now.answer).split()))
    else:
        print(f"The re-run differs from {plain(str(recorded.path))}:")
        for difference in differences:
            print(f"{difference.where}:")
            print(f"  - {plain(difference.recorded)}")
            print(f"  + {plain(difference.now)}")
    if differences:
        _error(f"the re-run differs from the recorded run ({differences[0].where} first)")
        raise typer.Exit(EXIT_NO_ANSWER)


@app.command()
def traces(
    limit: Annotated[int, typer.Option("-n", help="Show at most N runs.")] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON list.")] = False,
) -> None:
    """List recent runs, newest first; '#' is the number 'replay -n' takes."""
    from react_cli.config import home_dir
    from react_cli.replay import summarize, trace_files

    if limit < 1:
        raise UsageError("-n must be at least 1")
    rows = [
        {"n": n, **summarize(path)}
        for n, path in enumerate(trace_files(home_dir())[:limit], start=1)
    ]
    if as_json:
        _print_json(rows, indent=2)
        return
    if not rows:
        print(f"no traces in {home_dir() / 'traces'} yet", file=sys.stderr)
        return
    _print_traces(rows)


def _print_traces(rows: list[dict[str, Any]]) -> None:
    """One line per run, fixed columns, untrusted text cleaned and shortened."""
    from react_cli.render import plain
    from react_cli.replay import local_time

    def short(text: str, width: int) -> str:
        text = " ".join(plain(text).split())
        return text if len(text) <= width else text[: width - 1] + "…"

    print(f"{'#':>3}  {'time':<16}  {'stop':<15}  {'steps':>5}  {'model':<20}  question → answer")
    for row in rows:
        if "error" in row:
            name = short(Path(row["path"]).name, 60)
            print(
                f"{row['n']:>3}  {'?':<16}  {'broken':<15}  {'':>5}  {'':<20}  {name}: "
                f"{short(row['error'], 80)}"
            )
            continue
        answer = "—" if row["answer"] is None else short(row["answer"], 40)
        print(
            f"{row['n']:>3}  {local_time(row['created']):<16}  {short(row['stop_reason'], 15):<15}"
            f"  {row['steps']:>5}  {short(str(row['model'] or ''), 20):<20}"
            f"  {short(row['question'], 60)} → {answer}"
        )


def _wiki_session(wiki: str | None, lang: str | None, variant: str | None) -> Tools:
    from react_cli.run import build_tools

    return build_tools(run_settings(wiki=wiki_flags(wiki, lang), variant=variant))


def _observe(result: ToolResult, as_json: bool) -> None:
    """Print one observation (or, with --json, it and its details); backend failures exit 1."""
    from react_cli.errors import WikiError
    from react_cli.render import plain

    if "error" in result.details:
        raise WikiError(str(result.details["error"]))
    if as_json:
        record = {"observation": result.observation, "details": result.details}
        _print_json(record)
    else:
        print(plain(result.observation))


JsonOpt = Annotated[bool, typer.Option("--json", help="Print the details as JSON too.")]


@wiki_app.command("search")
def wiki_search(
    entity: Annotated[str, typer.Argument(help="What the agent would write in Search[...].")],
    wiki: WikiOpt = None,
    lang: LangOpt = None,
    variant: VariantOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Print the observation Search[ENTITY] gives."""
    _observe(_wiki_session(wiki, lang, variant).search(entity), as_json)


@wiki_app.command("lookup")
def wiki_lookup(
    entity: Annotated[str, typer.Argument(help="The page to load, as in Search[...].")],
    keyword: Annotated[str, typer.Argument(help="What the agent would write in Lookup[...].")],
    count: Annotated[int, typer.Option("-n", help="How many successive Lookups to print.")] = 1,
    wiki: WikiOpt = None,
    lang: LangOpt = None,
    variant: VariantOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Search ENTITY, then print the observations of N successive Lookup[KEYWORD]."""
    from react_cli.errors import WikiError
    from react_cli.wiki.base import NO_MORE

    if count < 1:
        raise UsageError("-n must be at least 1")
    session = _wiki_session(wiki, lang, variant)
    found = session.search(entity)
    if "error" in found.details:
        raise WikiError(str(found.details["error"]))
    if "resolved_title" not in found.details or found.details.get("disambiguation"):
        raise ReactCliError(f"no page to look in: {found.observation}")
    for _ in range(count):
        result = session.lookup(keyword)
        _observe(result, as_json)
        if result.observation == NO_MORE:
            break


@wiki_app.command("build-zim")
def wiki_build_zim(
    corpus: Annotated[
        Path, typer.Argument(help="JSONL of {title, text}, or a HotpotQA distractor file.")
    ],
    out: Annotated[Path, typer.Argument(help="The .zim file to write.")],
    language: Annotated[
        str, typer.Option(help="ISO 639-3 language of the text, for the full-text index.")
    ] = "eng",
    title: Annotated[str | None, typer.Option(help="Archive title [corpus name].")] = None,
) -> None:
    """Build a ZIM archive with a full-text index, for --wiki zim:OUT."""
    from react_cli.wiki.zimbuild import build_zim

    if not corpus.is_file():
        raise UsageError(f"corpus not found: {str(corpus)!r}")
    report = build_zim(corpus, out, language=language, name=title or "")
    skipped = f", {report.duplicates} repeated titles skipped" if report.duplicates else ""
    print(f"{out}: {report.articles} articles{skipped}; use --wiki zim:{out}")


def _print_json(data: object, indent: int | None = None) -> None:
    """JSON on stdout with untrusted text made terminal-safe."""
    from react_cli.render import safe_json

    print(safe_json(data, indent=indent))


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
