"""A matrix eval planned and run: every cell (model × method × protocol) over the same
questions, side by side, each an eval of its own (``eval.matrix.record`` lays out the folder).

Each cell is planned as ``eval`` plans one (``plan.plan_eval``: its model's settings, from
``[models.NAME]`` where the config file has an entry, its method, its protocol, its folder
under ``DIR/cells``), opens its own session and runs on workers of its own, all at once: cells
on one endpoint share its limiter (what it serves well at once is the endpoint's, whatever the
model or method asking), every cell shares the Wikipedia host's, and ``--max-total-cost`` is
the cells' together (one ``runner.Budget``). Ctrl-C stops every cell (each
keeps its rows and writes its summary); ``--resume DIR`` plans the cells again, continuing the
folders that exist and starting the missing ones, so only missing cells and rows run.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path

from react_cli.core.errors import UsageError
from react_cli.core.method import Method, parse_methods
from react_cli.core.records import ProtocolName
from react_cli.core.wording import quoted
from react_cli.eval.datasets import Selection
from react_cli.eval.events import Concurrency, EvalObserver, EvalResult
from react_cli.eval.files import SUMMARY
from react_cli.eval.matrix.record import (
    Axes,
    Cell,
    MatrixObserver,
    MatrixRecord,
    is_matrix,
    read_matrix,
)
from react_cli.eval.plan import EvalPlan, EvalRequest, new_folder, plan_eval
from react_cli.eval.question import describe
from react_cli.eval.runner import Budget, EvalRun, claimed, shared_limits
from react_cli.eval.store import claim_folder, resume_command
from react_cli.eval.summary import EvalStatus
from react_cli.infra import interrupts
from react_cli.session import Shared, Told, open_session
from react_cli.settings.resolve import absolute_path, resolve
from react_cli.traces.trace import now_utc


@dataclass(frozen=True)
class MatrixPlan:
    """Everything a matrix eval needs: its folder, axes and each cell's eval plan."""

    folder: Path
    axes: Axes
    cells: tuple[Cell, ...]
    plans: tuple[EvalPlan, ...]  # one per cell, in the same order
    resuming: bool
    created: str

    @property
    def resume_hint(self) -> str:
        """The command that continues the matrix (with what its cells must be given again)."""
        first = self.plans[0]
        return first.resume_hint.replace(
            resume_command(first.folder), resume_command(self.folder), 1
        )

    def record(
        self, status: EvalStatus, wall_s: float, statuses: dict[str, EvalStatus]
    ) -> MatrixRecord:
        return MatrixRecord(
            axes=self.axes,
            cells=self.cells,
            dataset=self.plans[0].dataset_ref().to_json(),
            status=status,
            created=self.created,
            updated=now_utc().isoformat(),
            wall_s=round(wall_s, 3),
            statuses=tuple((name, status.value) for name, status in statuses.items()),
        )


def wants_matrix(
    request: EvalRequest, models: tuple[str, ...], protocols: tuple[str, ...], forced: bool
) -> bool:
    """Whether ``eval`` runs a matrix: several models or protocols, ``--matrix``, or a
    ``--resume`` of a matrix's folder."""
    resumed = request.resume is not None and is_matrix(absolute_path(request.resume))
    return forced or resumed or len(models) > 1 or len(protocols) > 1


def protocols_given(text: str | None) -> tuple[str, ...]:
    """``--protocol text,tools``: each protocol once, in the order given."""
    if text is None:
        return ()
    names = [name.strip().lower() for name in text.split(",") if name.strip()]
    known = ", ".join(ProtocolName)
    for name in names:
        if name not in set(ProtocolName):
            raise UsageError(f"--protocol must be {known} (or several), not {quoted(name)}")
    if not names:
        raise UsageError(f"--protocol needs a protocol: {known}")
    return tuple(dict.fromkeys(names))


def plan_matrix(
    request: EvalRequest, models: tuple[str, ...], protocols: tuple[str, ...]
) -> MatrixPlan:
    """The matrix ``request`` asks for (its ``flags`` without the model and protocol, given as
    ``models`` and ``protocols``), each cell planned as an eval; a ``--resume`` of a matrix adds
    the axes given now to its own. UsageError for anything impossible, before any output."""
    resume = None if request.resume is None else absolute_path(request.resume)
    out = None if request.out is None else absolute_path(request.out)
    if out is not None and resume is not None and out != resume:
        raise UsageError("--out and --resume name different folders; --resume DIR is enough")
    earlier = read_matrix(resume) if resume is not None else None
    flags = {k: v for k, v in request.flags.items() if k not in ("model", "protocol", "method")}
    if request.methods is not None and "method" in request.flags:
        raise UsageError("--method and --methods both name methods: give one")
    given = _axes(request, models, protocols, earlier is None)
    axes = given if earlier is None else earlier.axes | given
    if not axes.models:
        raise UsageError("no model: give -m NAME (once per model of the matrix)")
    dataset = request.dataset
    if dataset is None and earlier is None:
        raise UsageError("give DATASET, or --resume DIR to continue an earlier run")
    folder = resume or out or new_folder(dataset or Path("matrix"))
    if earlier is None and is_matrix(folder):
        raise UsageError(
            f"{folder} holds an earlier matrix: continue it with: {resume_command(folder)}"
        )
    cells = axes.cells(earlier.cells if earlier is not None else ())
    recorded = _recorded_selection(earlier.dataset) if earlier is not None else None
    plans = []
    for cell in cells:
        cell_flags = {
            **flags,
            "model": cell.model,
            "protocol": str(cell.protocol),
            "method": str(cell.method),
        }
        where = cell.folder(folder)
        started = (where / SUMMARY).is_file()
        cell_request = replace(
            request,
            dataset=dataset if dataset is not None or started else _dataset_path(earlier),
            out=None if started else where,
            resume=where if started else None,
            methods=None,
            flags=cell_flags,
        )
        if recorded is not None and not started:
            cell_request = _with_selection(cell_request, recorded)
        plans.append(plan_eval(cell_request))
    created = earlier.created if earlier is not None else now_utc().isoformat()
    return MatrixPlan(folder, axes, cells, tuple(plans), resume is not None, created)


def _axes(
    request: EvalRequest, models: tuple[str, ...], protocols: tuple[str, ...], new: bool
) -> Axes:
    """The axes given now; for a new matrix, what is not given comes from the settings (the
    configured model, method and protocol)."""
    methods = parse_methods(request.methods) if request.methods is not None else ()
    if "method" in request.flags:
        methods = (Method(str(request.flags["method"]).strip().lower()),)
    if new and not (models and methods and protocols):
        base = {k: v for k, v in request.flags.items() if k not in ("protocol", "method")}
        if models:
            base["model"] = models[0]
        settings = resolve(base)
        models = models or ((settings.model,) if settings.model else ())
        methods = methods or (Method(settings.method),)
        protocols = protocols or (settings.protocol,)
    return Axes(models, methods, tuple(ProtocolName(name) for name in protocols))


def _dataset_path(earlier: MatrixRecord | None) -> Path | None:
    path = earlier.dataset.get("path") if earlier is not None else None
    return Path(path) if isinstance(path, str) else None


def _recorded_selection(dataset: dict[str, object]) -> Selection:
    from react_cli.eval.summary import DatasetRef

    return DatasetRef.from_json(dataset).selection


def _with_selection(request: EvalRequest, recorded: Selection) -> EvalRequest:
    """A new cell of a resumed matrix: the matrix's selection where none is given now."""
    return replace(
        request,
        offset=recorded.offset if request.offset is None else request.offset,
        limit=recorded.limit if request.limit is None else request.limit,
        shuffle_seed=recorded.shuffle_seed
        if request.shuffle_seed is None
        else request.shuffle_seed,
        paper_subset=request.paper_subset or recorded.paper_subset,
    )


@dataclass(frozen=True)
class MatrixResult:
    """What a matrix eval ended with: each cell's result, in the plan's order."""

    results: tuple[EvalResult, ...]
    status: EvalStatus


def run_matrix(
    plan: MatrixPlan,
    *,
    observer: MatrixObserver | None = None,
    told: Told | None = None,
    warn: Callable[[str], None] | None = None,
) -> MatrixResult:
    """Run every cell at once (see the module docstring); ``observer`` hears of each cell
    from its thread, ``told`` of what the sessions tell, ``warn`` of torn rows."""
    observer = observer or MatrixObserver()
    shared = _limits()
    started = time.monotonic()
    statuses = {cell.name: EvalStatus.RUNNING for cell in plan.cells}
    outcomes: list[tuple[EvalStatus, str | None] | None] = [None] * len(plan.cells)
    runs: list[EvalRun] = []
    budget = Budget(plan.plans[0].max_total_cost if plan.plans else None)  # the cells' together
    ended = threading.Semaphore(0)  # released by each cell's thread as it ends (``_drive``)
    interrupted = False
    with ExitStack() as stack, interrupts.guard():
        lock = claim_folder(plan.folder, plan.resuming)
        stack.callback(lock.close)
        plan.record(EvalStatus.RUNNING, 0.0, statuses).write(plan.folder)
        threads: list[threading.Thread] = []
        try:
            for cell_plan in plan.plans:
                limits, concurrency = shared(cell_plan)
                folder = stack.enter_context(claimed(cell_plan))
                session = open_session(
                    cell_plan.settings,
                    cell_plan.prompts,
                    methods=cell_plan.methods,
                    told=told,
                    shared=limits,
                )
                opened = stack.enter_context(session)
                runs.append(EvalRun(cell_plan, opened, folder, warn, concurrency, budget))
            for index, run in enumerate(runs):
                thread = threading.Thread(
                    target=_drive,
                    args=(run, observer.cell(index), outcomes, index, ended),
                    name=f"eval-cell-{index}",
                    daemon=True,
                )
                threads.append(thread)
                thread.start()
            for _ in threads:
                ended.acquire()  # Ctrl-C raises here; a join it interrupted would lie (_drive)
        except KeyboardInterrupt:
            interrupted = True
        finally:
            interrupts.hold()  # every cell's summary gets written whatever the user presses
            if interrupted:
                for run in runs:
                    run.stop()
            for thread in threads:
                thread.join()  # after hold(): no signal raises in it
            results = []
            for cell, run, outcome in zip(plan.cells, runs, outcomes, strict=False):
                status, error = outcome or _undriven(run)
                result = run.end(status, error)
                statuses[cell.name] = result.status
                results.append(result)
            status = _matrix_status(interrupted, statuses)
            plan.record(status, time.monotonic() - started, statuses).write(plan.folder)
    observer.finished()
    return MatrixResult(tuple(results), status)


def _limits() -> Callable[[EvalPlan], tuple[Shared, Concurrency]]:
    """Each cell's limiters: its endpoint's, the same for every cell on that endpoint (by its
    URLs: a model's replicas are one endpoint), and the Wikipedia host's, the same for every
    cell."""
    endpoints: dict[tuple[str, ...], Shared] = {}
    wiki: list[Shared] = []

    def limits(plan: EvalPlan) -> tuple[Shared, Concurrency]:
        settings = plan.settings
        urls = tuple(url.rstrip("/") for url in (settings.base_url, *settings.replicas))
        if urls not in endpoints:
            made, _ = shared_limits(plan)
            wiki_host = wiki[0].wiki if wiki else made.wiki
            wiki.append(made)
            endpoints[urls] = Shared(made.endpoint, wiki_host, made.replicas)
        limits = endpoints[urls]
        zim = settings.wiki.lower().startswith("zim:")
        concurrency = Concurrency(
            limits.endpoint, None if zim else limits.wiki, settings.stream, limits.replicas
        )
        return limits, concurrency

    return limits


def _drive(
    run: EvalRun,
    observer: EvalObserver,
    outcomes: list[tuple[EvalStatus, str | None] | None],
    index: int,
    ended: threading.Semaphore,
) -> None:
    """A cell's thread: its eval driven to its end, its outcome given, then ``ended`` released.

    The main thread waits for the cells on ``ended``, not in ``Thread.join``: a Ctrl-C raising
    in a join marks the joined thread as ended while it still runs (CPython 3.11's
    ``_wait_for_tstate_lock``, the clean-up of bpo-45274), so the join after it returned at
    once and the cell, its outcome not given yet, was ended as never driven (interrupted)."""
    try:
        outcomes[index] = run.drive(observer)
    except Exception as exc:  # a bug, or the store refused: the cell failed, the others go on
        outcomes[index] = (EvalStatus.FAILED, describe(exc))
    finally:
        ended.release()


def _undriven(run: EvalRun) -> tuple[EvalStatus, str | None]:
    """How a cell ends that never ran (the matrix stopped before it began): finished if it had
    nothing left to run, else interrupted (``--resume`` goes on)."""
    return (EvalStatus.INTERRUPTED if run.pending else EvalStatus.FINISHED), None


def _matrix_status(interrupted: bool, statuses: dict[str, EvalStatus]) -> EvalStatus:
    """The matrix's status: interrupted, else its worst cell's."""
    if interrupted:
        return EvalStatus.INTERRUPTED
    for worst in (EvalStatus.FAILED, EvalStatus.STOPPED, EvalStatus.BUDGET):
        if worst in statuses.values():
            return worst
    return EvalStatus.FINISHED
