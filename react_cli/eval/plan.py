"""What an eval will do: its questions, methods, settings and folder, given now or recorded
earlier.

Options given to ``react-cli eval`` win; ``--resume`` fills in the rest from the summary of the
eval it continues, and adds the methods given now to the ones it ran.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from react_cli.core.errors import UsageError
from react_cli.core.method import Method, Task, parse_methods
from react_cli.core.records import ProtocolName
from react_cli.core.wording import quoted
from react_cli.display.terminal import shell_word
from react_cli.eval.catalog import dataset_path
from react_cli.eval.config import AUTO, EvalConfig, ToolFile
from react_cli.eval.datasets import Dataset, Example, Format, Selection, load_dataset, select
from react_cli.eval.files import SUMMARY, read_summary
from react_cli.eval.leakage import checked_overlap
from react_cli.eval.shard import Shard
from react_cli.eval.store import check_same_eval, resume_command
from react_cli.eval.summary import DatasetRef, Summary
from react_cli.infra.credentials import redact_url
from react_cli.loop.prompts import PromptSet, prompt_set, wants_general
from react_cli.settings.resolve import (
    Source,
    absolute_path,
    home_dir,
    resolve,
    resolve_with_origins,
)
from react_cli.settings.settings import Settings
from react_cli.settings.validation import check_budget, check_endpoint
from react_cli.tools.functions import file_digest
from react_cli.tools.origin import OriginKind
from react_cli.traces.runconfig import run_config
from react_cli.traces.trace import now_utc, slug

if TYPE_CHECKING:
    from react_cli.tools.base import ToolSpec

DEFAULT_MAX_CONCURRENCY = 64
MAX_CONCURRENCY = 256
"""More workers than this only add threads waiting on the GIL (and on the endpoint's limits)."""


@dataclass(frozen=True)
class EvalPlan:
    """Everything one eval needs."""

    dataset: Dataset
    examples: list[Example]  # the selection, in the order the questions run
    selection: Selection
    settings: Settings
    methods: tuple[Method, ...]  # the first is the rows' own fields
    prompts: PromptSet
    folder: Path
    resuming: bool = False
    concurrency: int | None = None  # model requests at once; None: auto (adaptive)
    wiki_concurrency: int | None = None  # Wikipedia requests at once; None: auto
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY  # auto's cap
    max_total_cost: float | None = None  # no question starts once this eval spent it
    resume_hint: str = ""  # the command that continues it, with what it must be given again
    batch: bool = False  # eval --batch: its calls cost the Batch API's price
    overlap: tuple[str, ...] = ()  # exemplars of the prompt among the questions (allowed)

    @property
    def workers(self) -> int:
        """Questions that may run at once: the fixed level, or auto's cap (a gate then lets
        in as many as the level keeps busy); as many for each replica of the model."""
        replicas = 1 + len(self.settings.replicas)
        return min(MAX_CONCURRENCY, (self.concurrency or self.max_concurrency) * replicas)

    def dataset_ref(self) -> DatasetRef:
        dataset = self.dataset
        path = str(dataset.path.resolve())
        return DatasetRef(path, dataset.format, len(dataset.examples), self.selection)

    @property
    def task(self) -> Task:
        """What the questions are, by the dataset's format (FEVER claims, else questions)."""
        return Task.FEVER if self.dataset.format is Format.FEVER else Task.HOTPOTQA

    def config(self, tool_files: tuple[ToolFile, ...] = ()) -> EvalConfig:
        """What the summary records of the eval; ``tool_files``: the ``--tools-from`` files
        as they ran (by ``ran_files``; the ones given, before they load)."""
        prompts = self.prompts
        kinds = prompts.templates.values()
        run = run_config(self.settings, prompts.named, self.methods, self.task, kinds)
        names = tuple(str(method) for method in self.methods)
        overlap = {"prompt_overlap": list(self.overlap)} if self.overlap else {}
        return EvalConfig(
            {**run.to_json(), **overlap},
            self.concurrency or AUTO,
            self.wiki_concurrency or AUTO,
            names,
            None if self.concurrency else self.max_concurrency,
            self.settings.tools_from,
            self.settings.wiki_tools,
            tuple(server.describe() for server in self.settings.mcp),
            tool_files,
            self.settings.tool_allow,
            self.settings.tool_deny,
        )


@dataclass(frozen=True)
class EvalRequest:
    """What ``react-cli eval`` was given; None (or off) where an option was not."""

    dataset: Path | None = None
    format: str | None = None
    offset: int | None = None
    limit: int | None = None
    shuffle_seed: int | None = None
    paper_subset: bool = False
    concurrency: str | None = None  # "auto" or a number
    wiki_concurrency: str | None = None
    max_concurrency: int | None = None
    max_total_cost: float | None = None
    out: Path | None = None
    resume: Path | None = None
    methods: str | None = None  # --methods: names separated by commas, or "all"
    shard: str | None = None  # --shard I/N
    flags: dict[str, Any] = field(default_factory=dict)  # run options, as ``settings.resolve``'s
    allow_overlap: bool = False  # --allow-overlap: score a prompt on its own exemplars


def plan_eval(request: EvalRequest) -> EvalPlan:
    """The eval ``request`` asks for; UsageError for anything impossible, before any output.

    ``--resume DIR`` without DATASET continues the earlier eval's own dataset and selection;
    its settings fill in every setting no option, variable or config file gives now.
    """
    request = replace(  # absolute: a tool that changes folder moves nothing of the eval's
        request,
        out=_absolute(request.out),
        resume=_absolute(request.resume),
    )
    if request.out is not None and request.resume is not None and request.out != request.resume:
        raise UsageError("--out and --resume name different folders; --resume DIR is enough")
    earlier = earlier_summary(request.resume) if request.resume is not None else None
    recorded = earlier.dataset if earlier is not None and request.dataset is None else None
    if request.dataset is not None:
        path = request.dataset
    elif recorded is not None:
        path = Path(recorded.path)
    else:
        raise UsageError("give DATASET, or --resume DIR to continue an earlier run")
    config = earlier.config if earlier is not None else None
    levels = (config.concurrency, config.wiki_concurrency) if config else (None, None)
    concurrency = _level(request.concurrency, "--concurrency", levels[0])
    wiki = _level(request.wiki_concurrency, "--wiki-concurrency", levels[1])
    recorded_max = config.max_concurrency if config is not None else None
    max_concurrency = _first(request.max_concurrency, recorded_max, DEFAULT_MAX_CONCURRENCY)
    _check_level(max_concurrency, "--max-concurrency")
    form = request.format or (recorded.format if recorded is not None else None)
    if request.dataset is not None:
        path = dataset_path(path)  # a file, or a dataset's name
    data = load_dataset(path, form)
    selection = _selection(request, recorded.selection if recorded is not None else Selection())
    examples = select(data.examples, selection)
    flags = dict(request.flags)
    if "prompt" not in flags and data.format is Format.FEVER and earlier is None:
        flags["prompt"] = "fever"
    folder = request.resume or request.out or new_folder(path)
    general = False  # a resumed eval's prompt is the one it recorded
    if config is None:
        settings, origins = resolve_with_origins(flags)
        general = wants_general(settings.wiki_tools, origins["prompt"].source != Source.DEFAULT)
    else:
        settings = _resumed_settings(flags, config, folder)
    methods = _methods(request, settings, config)
    prompts = prompt_set(settings.prompt, methods, ProtocolName(settings.protocol), general=general)
    allowed = request.allow_overlap or bool(config and config.run.get("prompt_overlap"))
    plan = EvalPlan(
        dataset=data,
        examples=examples,
        selection=selection,
        settings=settings,
        methods=methods,
        prompts=prompts,
        folder=folder,
        resuming=request.resume is not None,
        concurrency=concurrency,
        wiki_concurrency=wiki,
        max_concurrency=max_concurrency,
        max_total_cost=_total_cost(request.max_total_cost, settings),
        resume_hint=resume_hint_for(folder, flags, settings),
        overlap=checked_overlap(prompts, examples, allowed),
    )
    if earlier is not None:  # refused before any file loads or server starts
        given = tuple(ToolFile(path, file_digest(path)) for path in settings.tools_from)
        check_same_eval(plan.folder, earlier, plan.config(given), plan.dataset_ref())
    check_endpoint(settings)  # before its folder is made
    return plan


def ran_files(specs: Iterable[ToolSpec]) -> tuple[ToolFile, ...]:
    """The ``--tools-from`` files the tools ``specs`` declare came from, with the hash of the
    text that ran, each once in order."""
    found: dict[tuple[str, str], ToolFile] = {}
    for spec in specs:
        origin = spec.origin
        if origin is not None and origin.kind is OriginKind.FILE and origin.path and origin.sha256:
            found.setdefault((origin.path, origin.sha256), ToolFile(origin.path, origin.sha256))
    return tuple(found.values())


def _absolute(path: Path | None) -> Path | None:
    return None if path is None else absolute_path(path)


def earlier_summary(folder: Path) -> Summary:
    """The summary of the eval ``--resume DIR`` continues; UsageError if DIR holds none."""
    if not folder.is_dir():
        raise UsageError(f"--resume {folder}: no such folder")
    summary = read_summary(folder / SUMMARY)
    if summary is None:
        raise UsageError(f"--resume {folder}: no {SUMMARY} there, not an eval folder")
    return summary


def _level(given: str | None, option: str, recorded: int | str | None) -> int | None:
    """A number of requests at once (``--concurrency``): given now, else recorded by the
    earlier eval; None for ``auto`` (the default)."""
    if given is None:
        return recorded if isinstance(recorded, int) else None
    text = given.strip().lower()
    if text == AUTO:
        return None
    try:
        level = int(text)
    except ValueError:
        raise UsageError(f"{option} must be auto or a number, not {quoted(given)}") from None
    _check_level(level, option)
    return level


def _check_level(level: int, option: str) -> None:
    if level < 1:
        raise UsageError(f"{option} must be at least 1")
    if level > MAX_CONCURRENCY:
        raise UsageError(f"{option} must be at most {MAX_CONCURRENCY}")


def _total_cost(amount: float | None, settings: Settings) -> float | None:
    """``--max-total-cost``: a positive amount, from prices configured for the model."""
    if amount is None:
        return None
    check_budget(amount, "--max-total-cost", settings)
    return amount


def _first(given: int | None, recorded: int | None, default: int) -> int:
    """An option's value: given now, else recorded by the earlier eval, else the default."""
    if given is not None:
        return given
    return recorded if recorded is not None else default


def _selection(request: EvalRequest, recorded: Selection) -> Selection:
    """The options given, else what the earlier eval recorded (without DATASET)."""
    offset, limit, seed = request.offset, request.limit, request.shuffle_seed
    return Selection(
        offset=recorded.offset if offset is None else offset,
        limit=recorded.limit if limit is None else limit,
        shuffle_seed=recorded.shuffle_seed if seed is None else seed,
        paper_subset=request.paper_subset or recorded.paper_subset,
        shard=recorded.shard if request.shard is None else Shard.parse(request.shard),
    )


def _methods(
    request: EvalRequest, settings: Settings, recorded: EvalConfig | None
) -> tuple[Method, ...]:
    """``--methods``, else the method setting; a resumed eval's methods come first."""
    if request.methods is not None and "method" in request.flags:
        raise UsageError("--method and --methods both name methods: give one")
    asked = (
        parse_methods(request.methods)
        if request.methods is not None
        else (Method(settings.method),)
    )
    if recorded is None:
        return asked
    earlier = tuple(Method(name) for name in recorded.methods if name in set(Method))
    return tuple(dict.fromkeys(earlier + asked))


def _resumed_settings(flags: dict[str, Any], recorded: EvalConfig, folder: Path) -> Settings:
    """Settings for a resumed eval: the ones it was made with fill in every setting that no
    option, environment variable or config file gives now (instead of the defaults), but the
    model endpoint: a folder you were handed does not choose where your API key and your
    questions go (UsageError when it names another endpoint than yours: ``--base-url``
    given again takes it)."""
    mine, origins = resolve_with_origins(flags)
    unset = {
        name: value
        for name, value in recorded.settings().items()
        if origins[name].source == Source.DEFAULT
    }
    theirs = unset.pop("base_url", None)
    if isinstance(theirs, str) and theirs.rstrip("/") != mine.base_url.rstrip("/"):
        url = redact_url(theirs)
        raise UsageError(
            f"{folder} was run against {url}, not the endpoint you configured "
            f"({redact_url(mine.base_url)}): an eval folder does not choose where your key and "
            f"questions go; if you trust it: {resume_command(folder)} --base-url "
            f"{shell_word(url)}"
        )
    return resolve({**unset, **flags})


def resume_hint_for(folder: Path, flags: dict[str, Any], settings: Settings) -> str:
    """The command that continues the eval in ``folder``, as the user can paste it: with the
    endpoint if a flag gave it (a resume takes no endpoint from a folder), and the
    ``--tools-from`` files (a resume runs no code a folder names)."""
    hint = resume_command(folder)
    if "base_url" in flags:
        for url in (settings.base_url, *settings.replicas):
            hint += f" --base-url {shell_word(redact_url(url))}"
    return hint + "".join(f" --tools-from {shell_word(str(p))}" for p in settings.tools_from)


def new_folder(dataset: Path) -> Path:
    """``<home>/evals/<time>-<random>-<dataset>``: unique even for two evals started in the
    same second."""
    stamp = now_utc().strftime("%Y%m%dT%H%M%SZ")
    return home_dir() / "evals" / f"{stamp}-{secrets.token_hex(3)}-{slug(dataset.stem)}"
