"""An eval's questions run on a thread pool, scored, and handed one row at a time to the store.

Questions run on workers (a ``ThreadPoolExecutor``) of one command's session
(``session.opened``), each with its own model client; the clients share the endpoint's limiter
(``Concurrency.model``), which lets through as many requests at once as ``--concurrency``
fixes or, with ``auto``, as the endpoint serves well; they share one Wikipedia backend (one
connection pool, the host's own limiter) and the users' tools (one server per entry). With a
fixed level, that many questions run at once; with ``auto``, a gate lets in twice the model's
level (a question also waits for Wikipedia and samples several at once), so no question waits
long for its turn. Each run of a loop gets its own tool set (Lookup's page is per run). A
question runs the eval's methods its row does not hold yet.

An eval stops (Ctrl-C, failures in a row, a configuration error, a full disk) through one
:class:`Stop`: no question starts after it, the workers stop waiting for the questions in
flight (whose rows are not kept), those questions' calls are cancelled and their next model
call refused, and the eval returns once they ended (``Stop.join``, bounded). Once the eval
spent ``--max-total-cost`` (a matrix: its cells together, one :class:`Budget`), no question
starts either, but those in flight finish and are kept (status ``budget``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import AbstractContextManager, contextmanager
from typing import IO

from react_cli.core.errors import LLMConfigError
from react_cli.core.method import Method
from react_cli.eval.datasets import Example
from react_cli.eval.events import Concurrency, EvalObserver, EvalResult
from react_cli.eval.files import RESULTS
from react_cli.eval.plan import EvalPlan, ran_files
from react_cli.eval.question import Answered, answer_question, describe
from react_cli.eval.rows import Row
from react_cli.eval.spanned import method_figures, scored
from react_cli.eval.stop import Stop, StopAwareModel
from react_cli.eval.store import ResultsStore, claim_folder
from react_cli.eval.summary import EvalStatus, Summary
from react_cli.infra import interrupts
from react_cli.llm import replicas
from react_cli.llm.base import LanguageModel
from react_cli.loop.events import Observer
from react_cli.session import OpenSession, Session, Shared

MAX_CONSECUTIVE_FAILURES = 5
Watch = Callable[[Example], AbstractContextManager[Observer]]
"""An observer of one question's run for as long as it lasts (its spans), on its thread."""


QUESTIONS_PER_REQUEST = 2
"""With ``auto``, questions let in per request the model's limiter lets through."""
GATE_POLL_S = 0.25
"""How often a question waiting at the gate looks again, besides being woken."""


class _Gate:
    """Lets a question in while fewer than ``wanted()`` run (None: no gate)."""

    def __init__(self, wanted: Callable[[], int] | None, stop: Stop) -> None:
        self._wanted, self._stop = wanted, stop
        self._cond = threading.Condition()
        self._running = 0

    def enter(self) -> bool:
        """Wait for a place; False when the eval stopped meanwhile."""
        with self._cond:
            while self._wanted is not None and self._running >= self._wanted():
                if self._stop.is_set():
                    return False
                self._cond.wait(GATE_POLL_S)
            self._running += 1
            return not self._stop.is_set()

    def leave(self) -> None:
        with self._cond:
            self._running -= 1
            self._cond.notify_all()

    def wake(self) -> None:
        with self._cond:
            self._cond.notify_all()


class Budget:
    """``--max-total-cost`` of one invocation (None: no budget), counted over the evals it
    bounds: an eval alone, or every cell of a matrix, which spend it together (a budget per
    cell would let a matrix of 8 cells spend 8 times what was asked). Only what they spend
    from now counts, not what their rows held before: ``--resume`` goes on."""

    def __init__(self, amount: float | None) -> None:
        self.amount = amount
        self._counted: list[tuple[ResultsStore, float]] = []  # each store, its cost before
        self._lock = threading.Lock()

    def count(self, store: ResultsStore) -> None:
        """Count what ``store``'s eval spends from now on."""
        with self._lock:
            self._counted.append((store, store.tally.cost))

    def spent(self) -> bool:
        """Whether the evals counted spent the amount, together."""
        if self.amount is None:
            return False
        with self._lock:
            spent = sum(store.tally.cost - before for store, before in self._counted)
        return spent >= self.amount


class _Workers:
    """One eval's pool of workers and the state they share."""

    def __init__(
        self,
        plan: EvalPlan,
        store: ResultsStore,
        watch: Watch,
        concurrency: Concurrency | None,
        budget: Budget,
    ) -> None:
        self.plan = plan
        self.budget = budget
        self.watch = watch
        self.store = store
        self.stop = Stop()
        limiters = concurrency.limiters if concurrency is not None else ()
        adaptive = [limiter for limiter in limiters if limiter.adaptive]

        def wanted() -> int:
            return QUESTIONS_PER_REQUEST * sum(limiter.level for limiter in adaptive)

        self.gate = _Gate(wanted if adaptive else None, self.stop)
        for limiter in adaptive:
            limiter.watch(self.gate.wake)
        self.budget_reached = False
        self.gave_up = False
        self.failure: str | None = None  # why the eval could not go on (the store failed)
        self.failures_in_a_row = 0
        self.stored = 0  # rows this eval stored, failed ones too (``--resume`` runs those again)
        self.last_error: str | None = None
        self.max_tokens_reached = 0
        self.config_error: LLMConfigError | None = None
        self._lock = threading.Lock()
        self._idle: list[Session] = []
        self._local = threading.local()
        self._pool: ThreadPoolExecutor | None = None

    def drive(
        self,
        session: Session,
        pending: list[Example],
        models: list[LanguageModel],
        observer: EvalObserver,
    ) -> tuple[EvalStatus, str | None]:
        """Run the questions, one worker per model, reporting each stored row; returns the
        status and the last failure. After a stop, the questions not started end at once."""
        self._idle = [session.over(StopAwareModel(model, self.stop)) for model in models]
        self._pool = ThreadPoolExecutor(len(models), "eval", initializer=self._take_session)
        futures = [self._pool.submit(self._question, example) for example in pending]
        for future in as_completed(futures):
            stored = future.result()
            if stored is not None:
                observer.result(*stored)
        if self.failure:
            return EvalStatus.FAILED, self.failure
        if self.gave_up:
            return EvalStatus.STOPPED, self.last_error
        unanswered = self.stored < len(pending)  # the stop or the budget left some without
        if self.stop.is_set() and unanswered:  # stopped from outside (``EvalRun.stop``)
            return EvalStatus.INTERRUPTED, self.last_error
        if self.budget_reached and unanswered:
            return EvalStatus.BUDGET, self.last_error
        return EvalStatus.FINISHED, self.last_error

    def close(self) -> None:
        """Stop: no question starts any more, no worker waits for one in flight, and those in
        flight are cancelled and waited for (``Stop.join``), then the workers."""
        self.stop.set()
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self.stop.join()
            self._pool.shutdown(wait=True)

    def _take_session(self) -> None:
        """Each worker thread's own session (its own model client), taken as it starts."""
        self._local.session = self._idle.pop()

    def _question(self, example: Example) -> tuple[Row, Summary] | None:
        """A worker's task: run, score and store one question (None: not stored)."""
        if self._over_budget() or not self.gate.enter():
            return None
        try:
            return self._answer(example)
        finally:
            self.gate.leave()

    def _over_budget(self) -> bool:
        """Whether ``--max-total-cost`` is spent (no question starts any more)."""
        if self.budget.spent():
            self.budget_reached = True
        return self.budget_reached

    def _answer(self, example: Example) -> tuple[Row, Summary] | None:
        session: Session = self._local.session
        key = (example.index, example.question)
        methods = tuple(Method(name) for name in self.store.missing(key))
        earlier = self.store.rows.get(key)

        def run() -> Answered | None:  # on a thread of its own: the question's replica too
            with replicas.question(), self.watch(example) as observer:
                cancel = self.stop.cancel
                answered = answer_question(
                    self.plan, example, session, methods, earlier, observer, cancel
                )
                if answered is not None:  # the question's span: its gold, answers, scores
                    for event in scored(example, answered.row, self.plan.dataset.format):
                        observer.notify(event)
                return answered

        try:
            answered = self.stop.wait_for(run)
            return None if answered is None else self._store(answered)
        except Exception as exc:  # the store refused the row (disk full), or a bug: stop here
            with self._lock:
                self.failure = self.failure or describe(exc)
            self.stop.set()
            return None

    def _store(self, answered: Answered) -> tuple[Row, Summary] | None:
        """Store a question's row (unless the eval stopped meanwhile); stop the eval after too
        many hard failures in a row (endpoint down) or at a configuration error."""
        row = answered.row
        with self._lock:
            summary = None if self.stop.is_set() else self.store.add(row)
            if summary is None:
                return None
            self.stored += 1
            self.max_tokens_reached += answered.max_tokens_reached
            self.config_error = self.config_error or answered.config_error
            if row.failed:
                self.failures_in_a_row += 1
                errors = [r.error for r in row.results().values() if r.failed and r.error]
                self.last_error = next(iter(errors), None)
            else:
                self.failures_in_a_row = 0
            if self.failures_in_a_row >= MAX_CONSECUTIVE_FAILURES or self.config_error:
                self.gave_up = True
                self.stop.set()
        return row, summary


@contextmanager
def claimed(plan: EvalPlan) -> Iterator[IO[bytes]]:
    """The eval's folder, held for it alone (``store.claim_folder``: UsageError when another
    eval holds it), before anything else of the eval opens; let go when the block ends."""
    lock = claim_folder(plan.folder, plan.resuming)
    try:
        yield lock
    finally:
        lock.close()  # the store lets it go when it closes; this is for a failed start


def evaluate(
    plan: EvalPlan,
    lock: IO[bytes],
    opened: OpenSession,
    *,
    observer: EvalObserver | None = None,
    warn: Callable[[str], None] | None = None,
    concurrency: Concurrency | None = None,
) -> EvalResult:
    """Run every selected question not already in ``results.jsonl`` of the folder ``lock``
    holds (:func:`claimed`) with ``opened``'s session, a model client of its own for each
    worker; see the module docstring. ``concurrency`` holds the limiters its clients and
    backend share (:func:`shared_limits`; the summary records them); the eval and each
    question get a span of ``opened``'s.

    Ctrl-C (KeyboardInterrupt in the calling thread) stops the eval: rows written so far stay,
    questions in flight are dropped, and the status is ``interrupted``; a second Ctrl-C waits
    for the final summary. When ``results.jsonl`` or ``summary.json`` cannot be written, the
    eval stops with status ``failed`` and the store's error as ``last_error``. ``warn`` hears
    about a torn last row dropped from an earlier eval.
    """
    observer = observer or EvalObserver()
    with interrupts.guard():
        run = EvalRun(plan, opened, lock, warn, concurrency)
        status, last_error = EvalStatus.FAILED, None
        try:
            status, last_error = run.drive(observer)
        except KeyboardInterrupt:
            status = EvalStatus.INTERRUPTED
        finally:
            interrupts.hold()  # the final summary gets written whatever the user presses
            result = run.end(status, last_error)
    observer.finished(result.summary)
    return result


class EvalRun:
    """One eval's run in its three parts, for :func:`evaluate` and for a matrix's cells,
    which run side by side (``eval.matrix.run``): made (its store open, its rows read back),
    driven (on any thread: its questions run on its own workers), ended (its workers stopped,
    the final summary written). :meth:`stop` stops it from another thread: it ends
    ``interrupted``."""

    def __init__(
        self,
        plan: EvalPlan,
        opened: OpenSession,
        lock: IO[bytes],
        warn: Callable[[str], None] | None,
        concurrency: Concurrency | None,
        budget: Budget | None = None,
    ) -> None:
        """``budget``: the one it spends with others (a matrix's cells), else its own."""
        self.plan, self._opened = plan, opened
        self._spans = opened.spans.eval(_eval_facts(plan))
        keys = {(example.index, example.question) for example in plan.dataset.examples}

        def watch(example: Example) -> AbstractContextManager[Observer]:
            shown = None if example.id is None else str(example.id)
            return self._spans.question(example.question, {"index": example.index, "id": shown})

        levels = concurrency.to_json if concurrency is not None else None
        config = plan.config(ran_files(opened.tool_specs()))
        self.store = ResultsStore(plan.folder, lock, plan.dataset_ref(), config, keys, levels)
        budget = budget if budget is not None else Budget(plan.max_total_cost)
        budget.count(self.store)
        self.workers = _Workers(plan, self.store, watch, concurrency, budget)
        if self.store.torn and warn is not None:
            cut = "its last row was cut short (crash or full disk); that question runs again"
            warn(f"{plan.folder / RESULTS}: {cut}")
        self.pending = [e for e in plan.examples if self.store.missing((e.index, e.question))]

    def drive(self, observer: EvalObserver) -> tuple[EvalStatus, str | None]:
        """Run the questions not done yet; the status and the last failure."""
        plan, opened = self.plan, self._opened
        count = max(1, min(plan.workers, len(self.pending)))
        models = [opened.model() for _ in range(count)]
        total = len(plan.examples)
        observer.started(total, total - len(self.pending), self.store.summary(EvalStatus.RUNNING))
        return self.workers.drive(opened.session, self.pending, models, observer)

    def stop(self) -> None:
        """No question starts any more, those in flight are dropped: :meth:`drive` returns
        ``interrupted`` at once, or ``finished`` when every question had its row already (a
        failed one too: the stop cut nothing short; ``--resume`` runs it again)."""
        self.workers.stop.set()

    def end(self, status: EvalStatus, last_error: str | None) -> EvalResult:
        """Stop the workers, write the final summary, end the eval's span."""
        workers = self.workers
        workers.close()
        summary = self.store.final(status)
        figures = summary.figures
        scores = {metric: figures.score(metric) for metric in figures.kind.metrics}
        facts = {"status": status.value, "answered": figures.n, **scores}
        self._spans.finish(facts, method_figures(summary))
        return EvalResult(
            summary, status, last_error, workers.max_tokens_reached, workers.config_error
        )


def shared_limits(plan: EvalPlan) -> tuple[Shared, Concurrency]:
    """The limiters an eval's requests share, at its levels, and as its progress bar and
    summary show them (no Wikipedia host for a ZIM archive)."""
    settings = plan.settings
    urls = (settings.base_url, *settings.replicas)
    shared = Shared.at(plan.concurrency, plan.max_concurrency, plan.wiki_concurrency, urls)
    zim = settings.wiki.lower().startswith("zim:")
    wiki = None if zim else shared.wiki
    return shared, Concurrency(shared.endpoint, wiki, settings.stream, shared.replicas)


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
