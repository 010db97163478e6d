"""``react-cli eval``: score a model on a dataset."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from react_cli.cli.app import (
    HELP_OPTIONS,
    DefaultCommandGroup,
    debug_enabled,
    help_when_bare,
    print_error,
    print_json,
    print_warning,
)
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
    run_flags,
)
from react_cli.errors import EXIT_INTERRUPTED, EXIT_NO_ANSWER, UsageError

MAX_CONCURRENCY = 256
"""More workers than this only add threads waiting on the GIL (and on the endpoint's limits)."""

if TYPE_CHECKING:
    from react_cli.config import Settings

DEFAULT_CONCURRENCY = 4
DEFAULT_WIKI_CONCURRENCY = 2


eval_app = typer.Typer(
    cls=DefaultCommandGroup,
    short_help="Score a model on a dataset; show, report and compare evals.",
    rich_markup_mode=None,
    context_settings=HELP_OPTIONS,
)
eval_app.callback(invoke_without_command=True)(help_when_bare)


@eval_app.command("run", short_help="Score a model on a dataset (the default 'eval' command).")
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
        int | None, typer.Option(metavar="N", help="Questions run at once [4].")
    ] = None,
    wiki_concurrency: Annotated[
        int | None, typer.Option(metavar="N", help="Wikipedia requests in flight at most [2].")
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
    """Score a model on DATASET: summary.json path on stdout, progress on stderr.

    'eval --resume DIR' continues a run with the dataset, selection and settings it was
    started with (options given now win). Exit codes: 0 the run completed (whatever the
    score); 1 questions failed hard (endpoint errors; --resume retries them); 2 usage or
    configuration error (the endpoint refused the key or the model: the run stops at once);
    130 interrupted (results kept).
    """
    options = dict(locals())
    from react_cli.config import home_dir, resolve
    from react_cli.datasets import load_dataset, select
    from react_cli.eval_view import ProgressView
    from react_cli.evaluate import (
        Evaluation,
        earlier_run,
        prepare_out_dir,
        resume_command,
        run_evaluation,
    )
    from react_cli.prompts import load_prompt
    from react_cli.render import make_console
    from react_cli.trace import now_utc, slug
    from react_cli.untrusted import clean_text
    from react_cli.wiring import (
        build_backend,
        build_model,
        max_tokens_warning,
        show_contact_hint,
        stderr_debug_log,
    )
    from react_cli.wording import plural

    if out is not None and resume is not None and out != resume:
        raise UsageError("--out and --resume name different folders; --resume DIR is enough")
    earlier = earlier_run(resume) if resume is not None else {}
    # Without DATASET, --resume continues the earlier run's own dataset and selection.
    recorded = earlier["dataset"] if dataset is None and earlier else {}
    if dataset is None:
        if resume is None:
            raise UsageError("give DATASET, or --resume DIR to continue an earlier run")
        dataset = Path(str(recorded.get("path")))
    config = earlier.get("config", {})
    if concurrency is None:
        concurrency = _int(config.get("concurrency")) or DEFAULT_CONCURRENCY
    if wiki_concurrency is None:
        wiki_concurrency = _int(config.get("wiki_concurrency")) or DEFAULT_WIKI_CONCURRENCY
    if concurrency < 1 or wiki_concurrency < 1:
        raise UsageError("--concurrency and --wiki-concurrency must be at least 1")
    if max(concurrency, wiki_concurrency) > MAX_CONCURRENCY:
        raise UsageError(f"--concurrency and --wiki-concurrency must be at most {MAX_CONCURRENCY}")
    form = data_format or recorded.get("format")
    data = load_dataset(dataset, form if isinstance(form, str) else None)
    paper_subset = paper_subset or recorded.get("paper_subset") is True
    given = {"offset": offset, "limit": limit, "shuffle_seed": shuffle_seed}
    selection: dict[str, Any] = {
        key: value if value is not None else _int(recorded.get(key)) for key, value in given.items()
    }
    selection.update(offset=selection["offset"] or 0, paper_subset=paper_subset)
    examples = select(data.examples, **selection)
    flags = run_flags(options)
    if "prompt" not in flags and data.format == "fever" and not earlier:
        flags["prompt"] = "fever"
    settings = _resumed_settings(flags, earlier) if earlier else resolve(flags)
    template = load_prompt(settings.prompt)
    debug_log = stderr_debug_log if debug or debug_enabled() else None
    view = ProgressView(make_console())
    clients = [build_model(settings, debug_log, view.retry_waiting)]  # fails before any output
    backend = build_backend(settings, debug_log, view.retry_waiting)
    directory = resume or out
    if directory is None:  # unique even for two runs started in the same second
        import secrets

        stamp = now_utc().strftime("%Y%m%dT%H%M%SZ")
        directory = home_dir() / "evals" / f"{stamp}-{secrets.token_hex(3)}-{slug(dataset.stem)}"
    prepare_out_dir(directory, resume is not None)
    evaluation = Evaluation(
        dataset=data,
        examples=examples,
        selection=selection,
        settings=settings,
        template=template,
        out_dir=directory,
        concurrency=concurrency,
        wiki_concurrency=wiki_concurrency,
    )
    show_contact_hint(settings)
    outcome = run_evaluation(
        evaluation,
        model_factory=lambda: (
            clients.pop() if clients else build_model(settings, debug_log, view.retry_waiting)
        ),
        backend=backend,
        observer=view,
        warn=print_warning,
    )
    summary = outcome.summary
    if as_json:
        print_json(summary)
    else:
        print(clean_text(str(directory / "summary.json")))
    if outcome.max_tokens_reached:
        print_warning(max_tokens_warning(settings.max_tokens, outcome.max_tokens_reached))
    if outcome.config_error is not None:
        raise outcome.config_error  # the key or the model: exit 2, nothing more to run
    again = resume_command(directory)
    kept = plural(summary["n"], "result")
    if outcome.status == "interrupted":
        print_error(f"interrupted; {kept} kept in {directory}; continue with: {again}")
        raise typer.Exit(EXIT_INTERRUPTED)
    if outcome.status == "failed":
        print_error(
            f"{outcome.last_error}; the run stopped with {kept} kept in {directory}; "
            f"continue with: {again}"
        )
        raise typer.Exit(EXIT_NO_ANSWER)
    if outcome.status == "stopped":
        print_error(
            f"stopped: questions kept failing ({outcome.last_error}); continue with: {again}"
        )
        raise typer.Exit(EXIT_NO_ANSWER)
    if summary["failed"]:
        failed = plural(summary["failed"], "question")
        print_error(f"{failed} failed ({outcome.last_error}); retry them with: {again}")
        raise typer.Exit(EXIT_NO_ANSWER)


def _int(value: object) -> int | None:
    """A number recorded in an earlier run's summary (anything else: None)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _resumed_settings(flags: dict[str, Any], earlier: dict[str, Any]) -> Settings:
    """Settings for a resumed run: the ones the run was made with fill in every setting that
    no option, environment variable or config file gives now (instead of the defaults)."""
    from react_cli.config import Source, resolve, resolve_with_origins
    from react_cli.evaluate import recorded_settings

    origins = resolve_with_origins(flags)[1]
    recorded = recorded_settings(earlier)
    unset = {n: v for n, v in recorded.items() if origins[n].source == Source.DEFAULT}
    return resolve({**unset, **flags})
