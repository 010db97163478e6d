"""Waves: every unfinished question's next model call, sent together as one batch.

Each question runs on a thread of its own, as live, through the same loop, methods, tools,
traces and rows; its model is a :class:`BatchModel` whose calls wait for a wave. The
:class:`Broker` (on the eval's main thread) starts a wave once every question still running
waits for a call: one line a request (each CoT-SC sample a line), uploaded, made a batch
(recorded in the folder at once: ``ledger``), polled with backoff up to ``poll_cap_s``, its
output and error files read; each question gets its answers and runs its tools until its next
call. A line without an answer (a failed or expired batch, an error line) is sent again in the
next wave, ``retries`` times, then its question's run ends with the reason. No wave starts that
``budget`` cannot pay for at the batch price: its questions stop, kept for ``--resume``.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from react_cli.core.errors import LLMConnectionError, LLMError
from react_cli.core.records import CHARS_PER_TOKEN, Api, Prices, Usage
from react_cli.core.wording import plural
from react_cli.eval.batch.api import Batch, BatchApi, BatchStatus, line_outcome
from react_cli.eval.batch.ledger import Ledger, Sent, request_key
from react_cli.eval.stop import CallRefused, Stop
from react_cli.infra.deadline import NO_DEADLINE, Deadline, Watchdog
from react_cli.infra.redaction import Redactor
from react_cli.infra.untrusted import lines, loads
from react_cli.llm.base import Completion, ModelRequest, Sampled, TextSink, discard
from react_cli.llm.parameters import Parameters
from react_cli.llm.stream import AnswerReader, Malformed
from react_cli.llm.toolcalls import assistant_message

FIRST_POLL_S = 1.0  # a batch is first looked at after this, then twice as long each time
WAIT_S = 0.2  # how often the broker looks whether every question waits
BODY_LIMIT = 64 << 20


class BudgetSpent(CallRefused):
    """The next wave would cost more than ``--max-total-cost`` leaves: its questions stop."""


@dataclass(frozen=True)
class BatchOptions:
    """``--batch-poll`` (the longest wait between two looks at a batch), ``--batch-retries``
    (waves a request without an answer is sent again in), ``--keep-batch-files``."""

    poll_cap_s: float = 60.0
    retries: int = 2
    keep_files: bool = False


@dataclass
class Call:
    """One model call of a question waiting for its answers: one line, or a sample's n."""

    question: int
    request: ModelRequest
    bodies: list[dict[str, Any]]
    keys: list[str]
    started: float = field(default_factory=time.monotonic)
    waves: int = 0  # waves it was sent in without getting all its answers
    reason: str = ""  # why a line got none, the last time
    completions: list[Completion] | None = None
    error: LLMError | None = None
    done: threading.Event = field(default_factory=threading.Event)


class Broker:
    """The waves of one batch eval (see the module docstring)."""

    def __init__(
        self,
        *,
        api: BatchApi,
        ledger: Ledger,
        parameters: Parameters,
        options: BatchOptions,
        redact: Redactor,
        max_chars: int,
        prices: Prices | None,
        budget: float | None,
        say: Callable[[str], None],
        questions: int,
    ) -> None:
        self.api, self.ledger, self.parameters, self.options = api, ledger, parameters, options
        self._redact, self._max_chars = redact, max_chars
        self._prices, self._budget, self._say = prices, budget, say
        self.questions = questions
        self.spent = 0.0  # what this run's waves cost, from the usage they reported
        self.budget_reached = False
        self.requests = 0  # lines sent, over every wave
        self.waves = 0  # waves this run sent
        self._cond = threading.Condition()
        self._running = 0
        self._finished = 0
        self._pending: list[Call] = []

    def model(self, question: int) -> BatchModel:
        return BatchModel(self, question)

    def joined(self) -> None:
        """A question is about to run (counted before its thread starts: no early wave)."""
        with self._cond:
            self._running += 1

    def left(self) -> None:
        with self._cond:
            self._running -= 1
            self._finished += 1
            self._cond.notify_all()

    def ask(self, call: Call) -> Call:
        """``call`` answered from the folder's answers, or after the waves it waits for."""
        if self._from_ledger(call):
            return call
        with self._cond:
            self._pending.append(call)
            self._cond.notify_all()
        call.done.wait()
        return call

    def run(self, stop: Stop) -> None:
        """Waves until no question runs, or the eval stops; a failure of the Batch API
        itself ends it (raised). The calls still waiting are refused either way."""
        try:
            while not stop.is_set():
                with self._cond:
                    while self._running and len(self._pending) < self._running:
                        self._cond.wait(WAIT_S)
                        if stop.is_set():
                            return
                    if not self._running:
                        return
                    calls, self._pending = self._pending, []
                try:
                    self._wave(calls)
                except BaseException:  # Ctrl-C, the Batch API failed: no call waits on
                    _refuse(calls, CallRefused("the eval stopped"))
                    raise
        finally:
            self.refuse_all(CallRefused("the eval stopped"))

    def refuse_all(self, error: LLMError) -> None:
        with self._cond:
            calls, self._pending = self._pending, []
        _refuse(calls, error)

    def _from_ledger(self, call: Call) -> bool:
        answers = [self.ledger.answers.get(key) for key in call.keys]
        if any(answer is None for answer in answers):
            return False
        self._answer(call, [a for a in answers if a is not None])
        return True

    def _wave(self, calls: list[Call]) -> None:
        """One wave: the batches recorded and not read that hold some of the calls (a resumed
        eval's), and a new batch of the rest; each call answered, sent again, or failed."""
        polled: dict[str, Sent] = {}
        fresh: list[tuple[Call, int]] = []
        for call in calls:
            for number, key in enumerate(call.keys):
                if key in self.ledger.answers:
                    continue
                sent = self.ledger.waiting_in(key)
                if sent is not None:
                    polled[sent.batch] = sent
                else:
                    fresh.append((call, number))
        wave = self.ledger.waves + 1
        if fresh and not self._affordable(fresh):
            self.budget_reached = True
            for call in calls:
                call.error = BudgetSpent("the eval spent its --max-total-cost")
                call.done.set()
            return
        if fresh:
            sent = self._send(wave, fresh)
            polled[sent.batch] = sent
        reasons: dict[str, str] = {}
        for sent in polled.values():
            reasons.update(self._collect(sent))
        self.waves += 1
        for call in calls:
            self._settle(call, reasons)

    def _affordable(self, lines_: list[tuple[Call, int]]) -> bool:
        """Whether the budget left pays for these lines at most (every prompt, and every
        reply as long as ``max_tokens`` allows)."""
        if self._budget is None or self._prices is None:
            return True
        prompt = sum(len(call.request.sent_text()) for call, _ in lines_) // CHARS_PER_TOKEN
        most = self.parameters.max_tokens or 0
        estimate = self._prices.cost(Usage(prompt, most * len(lines_))).amount
        return self.spent + estimate <= self._budget

    def _send(self, wave: int, fresh: list[tuple[Call, int]]) -> Sent:
        lines_, keys = [], {}
        url = "/v1/chat/completions" if self.parameters.api is Api.CHAT else "/v1/completions"
        for call, number in fresh:
            custom_id = _custom_id(call, number)
            keys[custom_id] = call.keys[number]
            body = call.bodies[number]
            lines_.append({"custom_id": custom_id, "method": "POST", "url": url, "body": body})
        file_id = self.api.upload(lines_, f"react-cli-wave-{wave}.jsonl")
        batch = self.api.create(file_id, self.parameters.api)
        sent = Sent(wave, batch.id, file_id, keys)
        self.ledger.created(sent)
        self.requests += len(lines_)
        self._progress(sent, batch)
        return sent

    def _collect(self, sent: Sent) -> dict[str, str]:
        """Poll a batch until it ends, keep its answers; why each line without one got none."""
        wait = min(FIRST_POLL_S, self.options.poll_cap_s)
        shown: tuple[str, int, int] | None = None
        while True:
            batch = self.api.get(sent.batch)
            if (batch.status, batch.completed, batch.failed) != shown:
                shown = (batch.status, batch.completed, batch.failed)
                self._progress(sent, batch)
            if batch.ended:
                break
            time.sleep(wait)
            wait = min(wait * 2, self.options.poll_cap_s)
        reasons = self._read(sent, batch)
        self.ledger.read(sent.batch)
        if not self.options.keep_files:
            for file_id in (sent.input_file, batch.output_file, batch.error_file):
                if file_id is not None:
                    self._delete(file_id)
        return reasons

    def _read(self, sent: Sent, batch: Batch) -> dict[str, str]:
        reasons = {key: f"batch {batch.status}" for key in sent.keys.values()}
        if batch.status == BatchStatus.FAILED and batch.errors:
            reasons = {key: f"batch failed: {batch.errors}" for key in sent.keys.values()}
        for file_id in (batch.output_file, batch.error_file):
            if file_id is None:
                continue
            for line in lines(self.api.content(file_id)):
                try:
                    record = loads(line)
                except ValueError:
                    continue
                key = (
                    sent.keys.get(str(record.get("custom_id")))
                    if isinstance(record, dict)
                    else None
                )
                if key is None:
                    continue
                assert isinstance(record, dict)
                body, reason = line_outcome(record)
                if body is not None:
                    self.ledger.answered(key, body)
                    self.spent += self._cost(body)
                    reasons.pop(key, None)
                else:
                    reasons[key] = reason
        return reasons

    def _cost(self, body: dict[str, Any]) -> float:
        usage = Usage.reported(body.get("usage"))
        return 0.0 if usage is None or self._prices is None else self._prices.cost(usage).amount

    def _settle(self, call: Call, reasons: dict[str, str]) -> None:
        if self._from_ledger(call):
            return
        call.waves += 1
        call.reason = next((reasons[k] for k in call.keys if k in reasons), "no answer")
        if call.waves > self.options.retries:
            waves = plural(call.waves, "wave")
            call.error = LLMConnectionError(
                f"the Batch API gave no answer in {waves}: {self._redact(call.reason)}"
            )
            call.done.set()
            return
        with self._cond:  # sent again in the next wave
            self._pending.append(call)

    def _answer(self, call: Call, bodies: list[dict[str, Any]]) -> None:
        elapsed = time.monotonic() - call.started
        try:
            call.completions = [self._completion(call.request, body, elapsed) for body in bodies]
        except Malformed as exc:
            call.error = LLMConnectionError(f"the Batch API answered {exc}")
        call.done.set()

    def _completion(
        self, request: ModelRequest, body: dict[str, Any], elapsed: float
    ) -> Completion:
        """A line's answer as a live call's: cut by the request's cutter, masked, bounded."""
        reader = AnswerReader(
            self.parameters.api,
            self._max_chars,
            BODY_LIMIT,
            Watchdog(math.inf, NO_DEADLINE),
            None,
            discard,  # the reader's notes on a batch answer: the eval's folder keeps the answer
            self._redact,
            request.cutter,
        )
        answer = reader.answer_of(body)
        calls = answer.tool_calls
        message = assistant_message(answer.text, calls) if request.tools else None
        return Completion(
            answer.text, answer.usage, elapsed, 0, answer.finish_reason, calls, message
        )

    def _progress(self, sent: Sent, batch: Batch) -> None:
        with self._cond:
            finished = self._finished
        counts = f"{batch.completed}/{batch.total or len(sent.keys)} done"
        failed = f", {batch.failed} failed" if batch.failed else ""
        self._say(
            f"batch wave {sent.wave}: {batch.status or 'created'} · {counts}{failed} · "
            f"{finished}/{self.questions} questions finished"
        )

    def _delete(self, file_id: str) -> None:
        """A file deleted, or said that it could not be (the answers are kept)."""
        try:
            self.api.delete(file_id)
        except LLMError as exc:
            self._say(f"could not delete a batch file: {exc}")


class BatchModel:
    """A question's model in a batch eval: each call waits for its wave."""

    def __init__(self, broker: Broker, question: int) -> None:
        self._broker, self._question = broker, question

    def complete(
        self, request: ModelRequest, *, deadline: Deadline, on_text: TextSink | None = None
    ) -> Completion:
        body = self._body(request, None)
        call = self._broker.ask(Call(self._question, request, [body], [_key(body, 0)]))
        if call.error is not None or not call.completions:
            raise call.error or LLMConnectionError("the Batch API gave no answer")
        return call.completions[0]

    def sample(
        self, request: ModelRequest, *, n: int, temperature: float, deadline: Deadline
    ) -> Sampled:
        body = self._body(request, temperature)
        keys = [_key(body, number) for number in range(n)]
        call = self._broker.ask(Call(self._question, request, [body] * n, keys))
        if call.error is not None or call.completions is None:
            raise call.error or LLMConnectionError("the Batch API gave no answer")
        return Sampled(call.completions, n)

    def _body(self, request: ModelRequest, temperature: float | None) -> dict[str, Any]:
        """The body a live call would send, never streamed."""
        body = self._broker.parameters.body(request, temperature=temperature)
        body.pop("stream_options", None)
        body["stream"] = False
        return body


def _refuse(calls: list[Call], error: LLMError) -> None:
    """End every call not answered yet with ``error`` (its question keeps no row)."""
    for call in calls:
        if not call.done.is_set():
            call.error = error
            call.done.set()


def _key(body: dict[str, Any], sample: int) -> str:
    """A line's key: its body's, and which sample it is (a CoT-SC request's lines share one
    body)."""
    return request_key({"body": body, "sample": sample})


def _custom_id(call: Call, number: int) -> str:
    """``q00003-step-2-s0``: the question's index, the kind of call (a loop's step, the
    follow-up for an action, a forced answer, a sample), its step and its sample."""
    request = call.request
    return f"q{call.question:05d}-{request.kind}-{request.step}-s{number}"
