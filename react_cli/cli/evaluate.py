"""``react-cli eval``: score a model on a dataset."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from react_cli.cli.app import (
    HELP_OPTIONS,
    DefaultCommandGroup,
    debug_enabled,
    help_when_bare,
    print_json,
    print_warning,
)
from react_cli.cli.options import NO_RUN_OPTIONS, DebugOpt, RunOptions, with_options
from react_cli.core.errors import EvalIncompleteError, InterruptError, ReactCliError

if TYPE_CHECKING:
    from react_cli.eval.events import EvalResult
    from react_cli.eval.plan import EvalPlan


eval_app = typer.Typer(
    cls=DefaultCommandGroup,
    short_help="Score a model on a dataset; show, report and compare evals.",
    rich_markup_mode=None,
    context_settings=HELP_OPTIONS,
)
eval_app.callback(invoke_without_command=True)(help_when_bare)


@eval_app.command("run", short_help="Score a model on a dataset (the default 'eval' command).")
@with_options(RunOptions)
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
        ),
    ] = None,
    limit: Annotated[int | None, typer.Option(metavar="N", help="Run at most N questions.")] = None,
    offset: Annotated[
        int | None, typer.Option(metavar="N", help="Skip the first N selected questions.")
    ] = None,
    shuffle_seed: Annotated[
        int | None, typer.Option(metavar="N", help="Shuffle the questions with this seed first.")
    ] = None,
    paper_subset: Annotated[
        bool,
        typer.Option(
            "--paper-subset", help="The ReAct paper's 500 questions (Random(233) over 7405)."
        ),
    ] = False,
    concurrency: Annotated[
        str | None,
        typer.Option(
            metavar="auto|N",
            help="Model requests at once: auto learns what the endpoint serves well, N fixes "
            "it (and runs N questions at once) [auto].",
        ),
    ] = None,
    max_concurrency: Annotated[
        int | None, typer.Option(metavar="N", help="At most N requests at once with auto [64].")
    ] = None,
    wiki_concurrency: Annotated[
        str | None,
        typer.Option(
            metavar="auto|N",
            help="Wikipedia (MediaWiki) requests at once: auto (up to 8) or N [auto].",
        ),
    ] = None,
    max_total_cost: Annotated[
        float | None,
        typer.Option(
            metavar="AMOUNT",
            help="Start no question once this eval cost AMOUNT (from the configured prices); "
            "--resume goes on.",
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(metavar="DIR", help="Output folder [<home>/evals/<time>-<dataset>]."),
    ] = None,
    resume: Annotated[
        Path | None,
        typer.Option(
            metavar="DIR",
            help="Continue the run in DIR with its dataset, selection and settings.",
        ),
    ] = None,
    methods: Annotated[
        str | None,
        typer.Option(
            metavar="NAMES",
            help="Score several methods in one pass, sharing their work: names separated by "
            "commas (standard,cot,cot-sc,act,react,cot-sc+react,react+cot-sc) or 'all'.",
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the summary object instead of its path.")
    ] = False,
    options: RunOptions = NO_RUN_OPTIONS,
    debug: DebugOpt = False,
) -> None:
    """Score a model on DATASET: summary.json path on stdout, progress on stderr.

    'eval --resume DIR' continues a run with the dataset, selection, methods and settings it
    was started with (options given now win; --methods adds methods it runs for every
    question). Exit codes: 0 the run completed (whatever the
    score); 1 questions failed hard (endpoint errors; --resume retries them); 2 usage or
    configuration error (the endpoint refused the key or the model: the run stops at once);
    130 interrupted (results kept).
    """
    from react_cli.cli.notices import show_contact_hint, stderr_debug_log
    from react_cli.display.terminal import make_console
    from react_cli.eval.events import Concurrency
    from react_cli.eval.plan import EvalRequest, plan_eval
    from react_cli.eval.runner import evaluate
    from react_cli.eval.store import claim_folder
    from react_cli.eval.view import ProgressView
    from react_cli.session import (
        build_backend,
        build_model,
        endpoint_facts,
        open_cache,
        wiki_limiter,
    )
    from react_cli.telemetry.setup import open_spans

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
        flags=options.flags(),
    )
    plan = plan_eval(request)
    settings = plan.settings
    debug_log = stderr_debug_log if debug or debug_enabled() else None
    # What every worker's client learns of the endpoint (whether it answers n, cuts streams),
    # and the limiters every request of the eval goes through.
    facts = endpoint_facts(plan.concurrency, plan.max_concurrency)
    wiki = wiki_limiter(plan.wiki_concurrency)
    zim = settings.wiki.lower().startswith("zim:")
    concurrency_used = Concurrency(facts, None if zim else wiki, settings.stream)
    view = ProgressView(make_console(), concurrency_used.text)
    first = build_model(settings, debug_log, view.retry_waiting, facts, print_warning)
    clients = [first]  # fails at once
    spans = open_spans(settings, print_warning)  # off (and free) unless asked for
    from react_cli.tools.toolbox import Toolbox, open_toolbox

    calls = any(method.uses_tools for method in plan.methods)
    toolbox = open_toolbox(settings) if calls else Toolbox()  # each server once, for all
    try:
        lock = claim_folder(plan.folder, plan.resuming)
    except BaseException:
        toolbox.close()
        raise
    cache = None
    try:
        cache = open_cache(settings, print_warning)
        if cache is not None:
            clients = []  # every worker's client behind the one cache
        backend = build_backend(settings, debug_log, view.retry_waiting, wiki, cache)
        show_contact_hint(settings)
        eval_spans = spans.eval(_eval_facts(plan))
        result = evaluate(
            plan,
            lock,
            model_factory=lambda: (
                clients.pop()
                if clients
                else build_model(
                    settings, debug_log, view.retry_waiting, facts, print_warning, cache
                )
            ),
            backend=backend,
            toolbox=toolbox,
            observer=view,
            warn=print_warning,
            watch=lambda example: eval_spans.question(
                example.question, {"index": example.index, "id": _id(example.id)}
            ),
            concurrency=concurrency_used,
        )
    finally:
        lock.close()  # the store lets it go when it closes; this is for a failed start
        toolbox.close()
        if cache is not None:
            cache.close()
    eval_spans.finish(_ended_facts(result))
    try:
        _report(result, plan.folder, settings.max_tokens, as_json)
    finally:
        spans.close()  # after the summary: a slow collector delays nothing the user waits for


def _eval_facts(plan: EvalPlan) -> dict[str, str | int | None]:
    """What the eval's span says it ran."""
    return {
        "dataset": plan.dataset.path.name,
        "format": plan.dataset.format.value,
        "methods": ",".join(str(method) for method in plan.methods),
        "model": plan.settings.model,
        "questions": len(plan.examples),
        "concurrency": plan.concurrency,
    }


def _ended_facts(result: EvalResult) -> dict[str, str | int | float | None]:
    """What the eval's span says it ended with: its status and the first method's scores."""
    figures = result.summary.figures
    scores = {metric: figures.score(metric) for metric in figures.kind.metrics}
    return {"status": result.status.value, "answered": figures.n, **scores}


def _id(value: str | int | None) -> str | None:
    return None if value is None else str(value)


def _report(result: EvalResult, folder: Path, max_tokens: int, as_json: bool) -> None:
    """The summary (its path, or itself with --json), then the error the eval ended with."""
    from react_cli.cli.notices import max_tokens_warning
    from react_cli.display.terminal import plain
    from react_cli.eval.files import SUMMARY

    if as_json:
        print_json(result.summary.to_json())
    else:
        print(plain(str(folder / SUMMARY)))
    if result.max_tokens_reached:
        print_warning(max_tokens_warning(max_tokens, result.max_tokens_reached))
    error = ending_error(result, folder)
    if error is not None:
        raise error


def ending_error(result: EvalResult, folder: Path) -> ReactCliError | None:
    """The error an eval that did not answer every question exits with, or None."""
    from react_cli.core.wording import plural
    from react_cli.eval.store import resume_command
    from react_cli.eval.summary import EvalStatus

    if result.config_error is not None:
        return result.config_error  # the key or the model: exit 2, nothing more to run
    again = resume_command(folder)
    figures = result.summary.figures
    kept = plural(figures.n, "result")
    if result.status is EvalStatus.INTERRUPTED:
        return InterruptError(f"interrupted; {kept} kept in {folder}; continue with: {again}")
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
