"""``react-cli eval``: score a model on a dataset."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from react_cli.cli.app import app, debug_enabled, print_error, print_json, print_warning
from react_cli.cli.options import (
    ApiKeyOpt,
    ApiOpt,
    BaseUrlOpt,
    DebugOpt,
    ForceAnswerOpt,
    LangOpt,
    MaxStepsOpt,
    MaxTokensOpt,
    MaxTotalTokensOpt,
    ModelOpt,
    NoStreamOpt,
    PromptOpt,
    TemperatureOpt,
    TimeoutOpt,
    VariantOpt,
    WikiOpt,
    lang_prompt,
    run_settings,
    wiki_flags,
)
from react_cli.errors import EXIT_INTERRUPTED, EXIT_NO_ANSWER, UsageError


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
    timeout: TimeoutOpt = None,
    force_answer: ForceAnswerOpt = False,
    wiki: WikiOpt = None,
    lang: LangOpt = None,
    variant: VariantOpt = None,
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
    from react_cli.run import build_backend, build_model, max_tokens_warning, stderr_debug_log
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
    prompt = lang_prompt(lang, prompt)
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
        run_timeout_s=timeout,
        force_answer=force_answer,
        wiki=wiki_flags(wiki, lang),
        variant=variant,
        no_stream=no_stream,
    )
    template = load_prompt(settings.prompt)
    debug_log = stderr_debug_log if debug or debug_enabled() else None
    view = ProgressView(make_console())
    clients = [build_model(settings, debug_log, view.retry_waiting)]  # fails before any output
    backend = build_backend(settings, debug_log, view.retry_waiting)
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
        model_factory=lambda: (
            clients.pop() if clients else build_model(settings, debug_log, view.retry_waiting)
        ),
        backend=backend,
        observer=view,
    )
    summary = outcome.summary
    if as_json:
        print_json(summary)
    else:
        print(directory / "summary.json")
    if outcome.max_tokens_reached:
        print_warning(max_tokens_warning(settings.max_tokens, outcome.max_tokens_reached))
    again = f"continue with --resume {directory}"
    if outcome.status == "interrupted":
        print_error(f"interrupted; {summary['n']} results kept in {directory} ({again})")
        raise typer.Exit(EXIT_INTERRUPTED)
    if outcome.status == "stopped":
        print_error(f"stopped: questions kept failing ({outcome.last_error}); {again}")
        raise typer.Exit(EXIT_NO_ANSWER)
    if summary["failed"]:
        print_error(f"{summary['failed']} questions failed ({outcome.last_error}); retry: {again}")
        raise typer.Exit(EXIT_NO_ANSWER)
