"""``react-cli eval``: score a model on a dataset."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from react_cli.cli.app import (
    DefaultCommandGroup,
    help_when_bare,
    print_json,
    print_warning,
)
from react_cli.cli.batch_options import NO_BATCH_OPTIONS, BatchRunOptions
from react_cli.cli.help import Commands, Panel, examples
from react_cli.cli.options import DebugOpt
from react_cli.cli.run_options import NO_EVAL_OPTIONS, EvalOptions, with_options
from react_cli.core.errors import EvalIncompleteError, InterruptError, ReactCliError, UsageError

if TYPE_CHECKING:
    from react_cli.eval.events import EvalResult
    from react_cli.eval.plan import EvalPlan


eval_app = Commands(
    cls=DefaultCommandGroup,
    short_help="Score a model on a dataset; show, report and compare evals.",
)
eval_app.callback(invoke_without_command=True)(help_when_bare)


@eval_app.command(
    "run",
    short_help="Score a model on a dataset (the default 'eval' command).",
    epilog=examples(
        "react-cli eval hotpot_dev_v1_simplified.json --paper-subset -m gpt-4o-mini",
        "react-cli eval paper_dev.jsonl --methods all --limit 100 --out runs/all",
        "react-cli eval hotpot.json -m qwen -m gpt-4o-mini --protocol text,tools",
        "react-cli eval paper_dev.jsonl --batch -m gpt-4o-mini --out runs/batch",
    ),
)
@with_options(EvalOptions)
@with_options(BatchRunOptions, "batch")
def eval_command(
    dataset: Annotated[
        Path | None,
        typer.Argument(
            metavar="DATASET",
            help="HotpotQA JSON, FEVER JSONL or JSONL file (with --resume: the run's own).",
        ),
    ] = None,
    data_format: Annotated[
        str | None,
        typer.Option(
            "--format",
            metavar="[hotpotqa|fever|jsonl]",  # datasets.FORMATS, checked by load_dataset
            help="The dataset format [detected].",
            rich_help_panel=Panel.DATASET,
        ),
    ] = None,
    limit: Annotated[
        int | None,
        typer.Option(metavar="N", help="Run at most N questions.", rich_help_panel=Panel.DATASET),
    ] = None,
    offset: Annotated[
        int | None,
        typer.Option(
            metavar="N", help="Skip the first N selected questions.", rich_help_panel=Panel.DATASET
        ),
    ] = None,
    shuffle_seed: Annotated[
        int | None,
        typer.Option(
            metavar="N",
            help="Shuffle the questions with this seed first.",
            rich_help_panel=Panel.DATASET,
        ),
    ] = None,
    paper_subset: Annotated[
        bool,
        typer.Option(
            "--paper-subset",
            help="The ReAct paper's 500 questions (Random(233) over 7405).",
            rich_help_panel=Panel.DATASET,
        ),
    ] = False,
    shard: Annotated[
        str | None,
        typer.Option(
            metavar="I/N",
            help="Run the I-th of N parts of the questions (split by question id, the same on "
            "every machine); 'eval merge' joins the parts.",
            rich_help_panel=Panel.DATASET,
        ),
    ] = None,
    concurrency: Annotated[
        str | None,
        typer.Option(
            metavar="auto|N",
            help="Model requests at once: auto learns what the endpoint serves well, N fixes "
            "it (and runs N questions at once) [auto].",
            rich_help_panel=Panel.SPEED,
        ),
    ] = None,
    max_concurrency: Annotated[
        int | None,
        typer.Option(
            metavar="N",
            help="At most N requests at once with auto [64].",
            rich_help_panel=Panel.SPEED,
        ),
    ] = None,
    wiki_concurrency: Annotated[
        str | None,
        typer.Option(
            metavar="auto|N",
            help="Wikipedia (MediaWiki) requests at once: auto (up to 8) or N [auto].",
            rich_help_panel=Panel.SPEED,
        ),
    ] = None,
    max_total_cost: Annotated[
        float | None,
        typer.Option(
            metavar="AMOUNT",
            help="Start no question once this eval (a matrix: its cells together) cost AMOUNT "
            "(from the configured prices); --resume goes on.",
            rich_help_panel=Panel.LIMITS,
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            metavar="DIR",
            help="Output folder [<home>/evals/<time>-<dataset>].",
            rich_help_panel=Panel.OUTPUT,
        ),
    ] = None,
    resume: Annotated[
        Path | None,
        typer.Option(
            metavar="DIR",
            help="Continue the run in DIR with its dataset, selection and settings.",
            rich_help_panel=Panel.DATASET,
        ),
    ] = None,
    methods: Annotated[
        str | None,
        typer.Option(
            metavar="NAMES",
            help="Score several methods in one pass, sharing their work: names separated by "
            "commas (standard,cot,cot-sc,act,react,cot-sc+react,react+cot-sc) or 'all'.",
            rich_help_panel=Panel.METHOD,
        ),
    ] = None,
    matrix: Annotated[
        bool,
        typer.Option(
            "--matrix",
            help="A matrix of cells (a folder each) even for one model and protocol: each "
            "method its own cell (several -m or --protocol values make one anyway).",
            rich_help_panel=Panel.METHOD,
        ),
    ] = False,
    allow_overlap: Annotated[
        bool,
        typer.Option(
            "--allow-overlap",
            help="Score a distilled prompt on questions it holds as exemplars (the summary "
            "says so).",
            rich_help_panel=Panel.METHOD,
        ),
    ] = False,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="Print the summary object instead of its path.",
            rich_help_panel=Panel.OUTPUT,
        ),
    ] = False,
    options: EvalOptions = NO_EVAL_OPTIONS,
    batch: BatchRunOptions = NO_BATCH_OPTIONS,
    debug: DebugOpt = False,
) -> None:
    """Score a model on DATASET: summary.json path on stdout, progress on stderr.

    'eval --resume DIR' continues a run with the dataset, selection, methods and settings it
    was started with (options given now win; --methods adds methods it runs for every
    question).

    Several -m (each model at its [models.NAME] endpoint), or --protocol text,tools, run a
    matrix: every model × method × protocol a cell, an eval folder of its own under DIR/cells,
    all at once; matrix.json's path on stdout; 'eval --resume DIR' runs its missing cells and
    rows, 'eval show DIR' tests every pair of cells.

    Exit codes: 0 the run completed (whatever the score); 1 questions failed hard (endpoint
    errors; --resume retries them); 2 usage or configuration error (the endpoint refused the
    key or the model: the run stops at once); 130 interrupted (results kept), 143 by SIGTERM,
    129 by SIGHUP.
    """
    from react_cli.cli.notices import told
    from react_cli.display.terminal import make_console
    from react_cli.eval.batch.ledger import is_batch_folder
    from react_cli.eval.matrix.run import protocols_given, wants_matrix
    from react_cli.eval.plan import EvalRequest, plan_eval
    from react_cli.eval.runner import claimed, evaluate, shared_limits
    from react_cli.eval.view import ProgressView
    from react_cli.session import open_session

    models, protocols = options.models, protocols_given(options.protocol)
    request = EvalRequest(
        dataset=dataset,
        format=data_format,
        offset=offset,
        limit=limit,
        shuffle_seed=shuffle_seed,
        paper_subset=paper_subset,
        concurrency=concurrency,
        wiki_concurrency=wiki_concurrency,
        max_concurrency=max_concurrency,
        max_total_cost=max_total_cost,
        out=out,
        resume=resume,
        methods=methods,
        shard=shard,
        flags=options.flags(),
        allow_overlap=allow_overlap,
    )
    if wants_matrix(request, models, protocols, matrix):
        if batch.batch:
            raise UsageError("--batch runs one eval, not a matrix: give one -m and one --protocol")
        from react_cli.cli.matrix import run_matrix_command

        run_matrix_command(request, models, protocols, as_json=as_json, debug=debug)
        return
    plan = plan_eval(request)
    batched = batch.batch or is_batch_folder(plan.folder)
    if batched and plan.settings.replicas:
        raise UsageError("--batch sends its files to one endpoint: give one --base-url")
    if plan.overlap:
        print_warning(f"the prompt holds {len(plan.overlap)} of these questions as exemplars")
    shared, used = shared_limits(plan)  # what every request of the eval goes through
    view = ProgressView(make_console(), used.text)
    notices = told(debug, on_retry=view.retry_waiting, note=view.note)
    settings, prompts = plan.settings, plan.prompts
    session = open_session(settings, prompts, methods=plan.methods, told=notices, shared=shared)
    waves = batch.options()
    with claimed(plan) as folder, session as opened:  # each server once, for every question
        if batched:
            from react_cli.eval.batch.driver import run_batch

            result = run_batch(plan, folder, opened, waves, observer=view, say=view.note)
        else:
            result = evaluate(
                plan, folder, opened, observer=view, warn=print_warning, concurrency=used
            )
        _report(result, plan, as_json)  # then the spans and servers close


def _report(result: EvalResult, plan: EvalPlan, as_json: bool) -> None:
    """The summary (its path, or itself with --json), then the error the eval ended with."""
    from react_cli.cli.notices import max_tokens_warning
    from react_cli.display.terminal import plain
    from react_cli.eval.files import SUMMARY

    if as_json:
        print_json(result.summary.to_json())
    else:
        print(plain(str(plan.folder / SUMMARY)))
    max_tokens = plan.settings.max_tokens
    if result.summary.figures.cached_prompt_tokens and _cached_unpriced(plan):
        from react_cli.core.wording import CACHED_UNPRICED

        print_warning(f"the costs count {CACHED_UNPRICED} (see [prices] in the config file)")
    if result.max_tokens_reached:
        print_warning(max_tokens_warning(max_tokens, result.max_tokens_reached))
    error = ending_error(result, plan.folder, plan.resume_hint)
    if error is not None:
        raise error


def _cached_unpriced(plan: EvalPlan) -> bool:
    """Whether the eval's costs counted the server's cached tokens at the input price."""
    return plan.settings.prices() is not None and plan.settings.price_cached_input is None


def ending_error(result: EvalResult, folder: Path, again: str) -> ReactCliError | None:
    """The error an eval that did not answer every question exits with, or None; ``again``
    the command that continues it."""
    from react_cli.core.wording import plural
    from react_cli.eval.summary import EvalStatus

    if result.config_error is not None:
        return result.config_error  # the key or the model: exit 2, nothing more to run
    figures = result.summary.figures
    kept = plural(figures.n, "result")
    if result.status is EvalStatus.INTERRUPTED:
        from react_cli.infra.interrupts import interrupted

        return InterruptError(f"{interrupted()}; {kept} kept in {folder}; continue with: {again}")
    if result.status is EvalStatus.FAILED:
        return EvalIncompleteError(
            f"{result.last_error}; the run stopped with {kept} kept in {folder}; "
            f"continue with: {again}"
        )
    if result.status is EvalStatus.BUDGET:
        return EvalIncompleteError(
            f"stopped: the eval spent its --max-total-cost; {kept} kept in {folder}; "
            f"continue with: {again}"
        )
    if result.status is EvalStatus.STOPPED:
        return EvalIncompleteError(
            f"stopped: questions kept failing ({result.last_error}); continue with: {again}"
        )
    if figures.failed:
        failed = plural(figures.failed, "question")
        return EvalIncompleteError(
            f"{failed} failed ({result.last_error}); retry them with: {again}"
        )
    return None
