"""``eval --batch``: an eval's questions answered in waves of Batch API requests.

Every question not yet in ``results.jsonl`` runs on a thread of its own with the command's
session over a :class:`~react_cli.eval.batch.broker.BatchModel`; the main thread drives the
waves (``Broker.run``). Rows, traces and the summary are a live eval's, scored the same way,
each cost at the batch price (``price_batch_factor``). Ctrl-C, a Batch API failure or the
budget stop the eval: the questions waiting keep no row, and the batches already created stay
recorded, so ``eval --resume DIR`` polls them instead of paying again.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import replace
from typing import IO

from react_cli.core.errors import LLMConfigError, LLMError
from react_cli.core.method import Method
from react_cli.core.records import Api
from react_cli.eval.batch.api import BatchApi
from react_cli.eval.batch.broker import BatchOptions, Broker
from react_cli.eval.batch.ledger import Ledger
from react_cli.eval.datasets import Example
from react_cli.eval.events import EvalObserver, EvalResult
from react_cli.eval.plan import EvalPlan, ran_files
from react_cli.eval.question import answer_question, describe
from react_cli.eval.stop import CallRefused, Stop
from react_cli.eval.store import ResultsStore
from react_cli.eval.summary import EvalStatus
from react_cli.infra import interrupts
from react_cli.infra.redaction import Redactor
from react_cli.llm.base import discard
from react_cli.llm.client import LENGTH_SLACK
from react_cli.llm.endpoint import EndpointFacts
from react_cli.llm.parameters import Parameters
from react_cli.session import OpenSession
from react_cli.session.builders import retry_policy
from react_cli.settings.secrets import known_secrets


def run_batch(
    plan: EvalPlan,
    lock: IO[bytes],
    opened: OpenSession,
    options: BatchOptions,
    *,
    observer: EvalObserver | None = None,
    say: Callable[[str], None] = print,
) -> EvalResult:
    """Run the eval in waves (see the module docstring); ``say`` hears each wave's progress."""
    plan = replace(plan, batch=True, settings=replace(plan.settings, service_tier=None))
    observer = observer or EvalObserver()
    settings = plan.settings
    redact = Redactor(known_secrets(settings, os.environ))
    api = BatchApi(
        base_url=settings.base_url,
        api_key=settings.api_key,
        policy=retry_policy(settings),
        timeout_s=settings.timeout_s,
        redact=redact,
    )
    keys = {(example.index, example.question) for example in plan.dataset.examples}
    config = plan.config(ran_files(opened.tool_specs()))
    store = ResultsStore(plan.folder, lock, plan.dataset_ref(), config, keys)
    pending = [e for e in plan.examples if store.missing((e.index, e.question))]
    broker = Broker(
        api=api,
        ledger=Ledger.open(plan.folder),
        parameters=_parameters(plan),
        options=options,
        redact=redact,
        max_chars=settings.max_tokens * 4 * LENGTH_SLACK,
        prices=settings.prices(batch=True),
        budget=plan.max_total_cost,
        say=say,
        questions=len(pending),
    )
    stop = Stop()
    outcome = _Outcome()
    total = len(plan.examples)
    observer.started(total, total - len(pending), store.summary(EvalStatus.RUNNING))
    status = EvalStatus.FAILED
    threads: list[threading.Thread] = []
    with interrupts.guard():
        try:
            for example in pending:
                broker.joined()
                thread = threading.Thread(
                    target=_question,
                    args=(plan, opened, broker, store, stop, example, observer, outcome),
                    name="eval-question",
                    daemon=True,
                )
                threads.append(thread)
                thread.start()
            broker.run(stop)
            status = _status(outcome, broker)
        except KeyboardInterrupt:
            status = EvalStatus.INTERRUPTED
        except LLMError as exc:  # the Batch API itself failed: what was read is kept
            outcome.failed(exc)
            status = EvalStatus.STOPPED
        finally:
            interrupts.hold()
            stop.set()
            broker.refuse_all(_stopped())
            for thread in threads:
                thread.join(5.0)
            api.close()
            summary = store.final(status)
    observer.finished(summary)
    error = outcome.config_error
    return EvalResult(summary, status, outcome.last_error, outcome.max_tokens, error)


class _Outcome:
    """What the questions tell the whole eval (as ``runner``'s workers keep it)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.last_error: str | None = None
        self.config_error: LLMConfigError | None = None
        self.max_tokens = 0
        self.store_failure: str | None = None

    def failed(self, exc: LLMError) -> None:
        with self.lock:
            self.last_error = str(exc)
            if isinstance(exc, LLMConfigError):
                self.config_error = self.config_error or exc


def _question(
    plan: EvalPlan,
    opened: OpenSession,
    broker: Broker,
    store: ResultsStore,
    stop: Stop,
    example: Example,
    observer: EvalObserver,
    outcome: _Outcome,
) -> None:
    """One question's thread: answered through the waves, its row stored."""
    try:
        key = (example.index, example.question)
        methods = tuple(Method(name) for name in store.missing(key))
        base = opened.session  # --max-cost counts at the batch price too
        limits = replace(base.limits, prices=plan.settings.prices(batch=True))
        session = replace(base, limits=limits).over(broker.model(example.index))
        answered = answer_question(
            plan, example, session, methods, store.rows.get(key), None, stop.cancel
        )
        if answered is None or stop.is_set():
            return
        with outcome.lock:
            outcome.max_tokens += answered.max_tokens_reached
            row = answered.row
            if row.failed:
                errors = [r.error for r in row.results().values() if r.failed and r.error]
                outcome.last_error = next(iter(errors), outcome.last_error)
            summary = store.add(row)
        if summary is not None:
            observer.result(row, summary)
    except Exception as exc:  # the store refused the row (disk full), or a bug
        with outcome.lock:
            outcome.store_failure = outcome.store_failure or describe(exc)
        stop.set()
    finally:
        broker.left()


def _parameters(plan: EvalPlan) -> Parameters:
    """The bodies of the batch lines: a live call's, without what only streams need."""
    settings = plan.settings
    return Parameters(
        Api(settings.api),
        settings.model or "",
        temperature=settings.temperature,
        max_tokens=settings.max_tokens,
        stream=False,
        facts=EndpointFacts(),
        log=discard,  # no request is sent through these parameters: nothing to note
        warn=discard,
    )


def _status(outcome: _Outcome, broker: Broker) -> EvalStatus:
    if outcome.store_failure:
        outcome.last_error = outcome.store_failure
        return EvalStatus.FAILED
    return EvalStatus.BUDGET if broker.budget_reached else EvalStatus.FINISHED


def _stopped() -> LLMError:
    return CallRefused("the eval stopped")
