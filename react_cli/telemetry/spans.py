"""A run's events as OpenTelemetry spans with OpenInference's conventions (Phoenix, Langfuse).

Each run is an ``AGENT`` span (``ask``'s is the trace's root; an eval's questions are children
of the eval's ``CHAIN`` span) holding an ``LLM`` span per model call and a ``TOOL`` span per
tool call (Finish runs no tool; a call refused for want of consent is an error span saying who
refused it, in ``react_cli.tool.refused``). A model span carries the model, token counts and
the call's time (its start is its end less the call's latency); the prompt and the reply only
when content capture is on, as a tool span's arguments (named as the tool's schema names them)
and result. Every span that did not fail ends ``OK``. An eval's root holds what it ran as its
input and each method's figures as its output; each question's span, the question, the gold
answers (``react_cli.gold``), the prediction and its scores (``Scored``). A sampling request
gives one span, however many completions it returned (``SamplingFinished``: the first request
gave ``len(samples) - calls + 1`` of them, each later one a single completion). Parents are
always passed explicitly, never through the current context, so spans made on an eval's worker
threads land under their question.

The provider is this module's own, never the process's global one (the MCP SDK makes spans of
its own with the global tracer): only react-cli's spans are sent. They leave in batches from
the SDK's worker thread, so no model or tool request ever waits for the collector; the first
export that fails (refused, timed out, refused by the collector) is the last one tried, the
rest are dropped and counted, and the command ends with one warning saying so and why
(``telemetry.export``). Every text is made valid UTF-8 and passed through a redactor that knows
the run's secrets (the API key, URL credentials, the exporter's headers) before it becomes an
attribute. Nothing here may end a run: an observer that fails stops making spans and says so in
the same warning.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import Span, Status, StatusCode

from react_cli import __version__
from react_cli.core.records import StopReason, Usage
from react_cli.core.trajectory import refusal_text
from react_cli.infra.credentials import redact_url
from react_cli.infra.redaction import Redactor
from react_cli.infra.untrusted import clean_text
from react_cli.llm.base import CallKind, ModelRequest
from react_cli.loop.events import Event, ModelCalled, Observer, ToolCalled, ToolsDeclared
from react_cli.methods.events import MethodFinished, SamplingFinished, SamplingStarted
from react_cli.methods.results import SampleSet
from react_cli.settings.settings import Settings
from react_cli.telemetry.base import EvalSpans, Facts, OtlpProtocol, Scored, Warn
from react_cli.telemetry.export import Exporter, exporter, forget_grpc_status, quiet
from react_cli.tools.base import ToolSpec
from react_cli.tools.calls import call_arguments

MAX_ATTRIBUTE_CHARS = 64_000
"""A longer text attribute is cut (a prompt grows by each observation: a run's last is ~20 K)."""
MAX_MESSAGES = 50
"""Completions listed on one sampling span at most (an attribute per field each)."""
KIND = "openinference.span.kind"
_FAILED = frozenset({StopReason.LLM_ERROR, StopReason.ERROR})
Attributes = dict[str, str | int | float | bool | list[str]]


class OtelSpans:
    """The spans of one command, on a provider of their own (see the module docstring)."""

    def __init__(
        self,
        settings: Settings,
        endpoint: str,
        *,
        protocol: OtlpProtocol,
        capture: bool,
        secrets: Iterable[str | None],
        warn: Warn,
    ) -> None:
        quiet()
        self.settings, self.capture, self._warn = settings, capture, warn
        self.endpoint = redact_url(endpoint)
        self.redactor = Redactor(secrets)
        self.failure: str | None = None  # an observer's own failure: it made no more spans
        self._exporter = Exporter(*exporter(protocol, endpoint, settings.otel_timeout_s))
        self._provider = TracerProvider(
            resource=Resource.create({"service.name": "react-cli", "service.version": __version__}),
            span_limits=SpanLimits(max_attribute_length=MAX_ATTRIBUTE_CHARS),
            shutdown_on_exit=False,  # close() does, bounded; an exit never waits for it
        )
        self._provider.add_span_processor(BatchSpanProcessor(self._exporter))
        self.tracer = self._provider.get_tracer("react_cli", __version__)

    def text(self, value: str) -> str:
        """``value`` fit for an attribute: valid UTF-8, no secret."""
        return self.redactor(clean_text(value))

    def run(self, question: str, facts: Facts) -> AbstractContextManager[Observer]:
        return self.agent("react-cli ask", question, facts, None)

    def eval(self, facts: Facts) -> EvalSpans:
        attributes: Attributes = {
            KIND: "CHAIN",
            "input.value": self.json(facts),
            "input.mime_type": "application/json",
            **self.facts(facts),
        }
        return _EvalSpans(self, self.tracer.start_span("react-cli eval", attributes=attributes))

    def json(self, value: object) -> str:
        """``value`` as a JSON attribute's text (OpenInference's ``application/json``)."""
        return self.text(json.dumps(value, ensure_ascii=False, default=str))

    @contextmanager
    def agent(
        self, name: str, question: str, facts: Facts, parent: Span | None
    ) -> Iterator[Observer]:
        """An ``AGENT`` span for the block, and the observer whose events fill it."""
        attributes: Attributes = {
            KIND: "AGENT",
            "input.value": self.text(question),
            "input.mime_type": "text/plain",
            **self.facts(facts),
        }
        context = None if parent is None else trace.set_span_in_context(parent)
        span = self.tracer.start_span(name, context=context, attributes=attributes)
        observer = _RunSpans(self, span)
        try:
            yield observer
        except BaseException as exc:
            span.set_status(Status(StatusCode.ERROR, type(exc).__name__))
            raise
        finally:
            observer.finish()

    def facts(self, facts: Facts) -> Attributes:
        """A command's facts as ``react_cli.*`` attributes (None: left out)."""
        return {
            f"react_cli.{key}": self.text(value) if isinstance(value, str) else value
            for key, value in facts.items()
            if value is not None
        }

    def broken(self, exc: Exception) -> None:
        self.failure = self.failure or f"{type(exc).__name__}: {exc}"

    def close(self) -> None:
        self._provider.shutdown()
        forget_grpc_status()
        if self.failure is not None:
            self._warn(f"spans stopped after an internal error ({self.text(self.failure)})")
        if self._exporter.failed:
            spans = f"{self._exporter.dropped} span{'s' * (self._exporter.dropped != 1)}"
            why = self.text(self._exporter.reason or "the exporter gave no reason")
            self._warn(f"cannot send spans to {self.endpoint} ({why}): {spans} dropped")


class _EvalSpans:
    def __init__(self, spans: OtelSpans, span: Span) -> None:
        self.spans, self.span = spans, span

    def question(self, question: str, facts: Facts) -> AbstractContextManager[Observer]:
        return self.spans.agent("react-cli question", question, facts, self.span)

    def finish(self, facts: Facts, figures: Mapping[str, Any]) -> None:
        self.span.set_attributes(
            {
                "output.value": self.spans.json(figures),
                "output.mime_type": "application/json",
                **self.spans.facts(facts),
            }
        )
        finished = facts.get("status") == "finished"
        self.span.set_status(
            Status(StatusCode.OK) if finished else Status(StatusCode.ERROR, str(facts["status"]))
        )
        self.span.end()


class _RunSpans:
    """One run's (or eval question's) observer: its model and tool calls as child spans of
    ``span``, which ends with what each method answered."""

    def __init__(self, spans: OtelSpans, span: Span) -> None:
        self.spans, self.span = spans, span
        self.started_ns = time.time_ns()  # (just after the span's own start)
        self.context = trace.set_span_in_context(span)
        self.tools: dict[str, ToolSpec] = {}
        self.sampling: SamplingStarted | None = None
        self.answered: list[MethodFinished] = []
        self.scored: list[Scored] = []  # an eval's question: each method's scores
        self.lock = threading.Lock()  # events come on the run's thread; the end may not

    def notify(self, event: Event) -> None:
        if self.spans.failure is not None:
            return
        try:
            with self.lock:
                self._notify(event)
        except Exception as exc:  # never end a run: stop making spans, say so once
            self.spans.broken(exc)

    def _notify(self, event: Event) -> None:
        match event:
            case ToolsDeclared(specs):
                self.tools.update((spec.name.casefold(), spec) for spec in specs)
            case ModelCalled():
                self._model_called(event)
            case ToolCalled():
                self._tool_called(event)
            case SamplingStarted():
                self.sampling = event
            case SamplingFinished(result):
                self._sampled(result)
            case MethodFinished():
                self.answered.append(event)
            case Scored():
                self.scored.append(event)

    def _child(self, name: str, attributes: Attributes, seconds: float, error: str | None) -> None:
        end = time.time_ns()  # a call's span never starts before its run's (a clock's step)
        start = max(self.started_ns, end - int(max(0.0, seconds) * 1e9))
        span = self.spans.tracer.start_span(
            name, context=self.context, attributes=attributes, start_time=start
        )
        span.set_status(
            Status(StatusCode.OK)
            if error is None
            else Status(StatusCode.ERROR, self.spans.text(error))
        )
        span.end(end_time=end)

    def _model_called(self, event: ModelCalled) -> None:
        request = event.request
        texts = [] if event.completion is None else [event.completion.text]
        attributes = self._llm(request, event.usage, texts, self.spans.settings.temperature, 1)
        if event.completion is not None:
            attributes["react_cli.retries"] = event.completion.retries
            if event.completion.finish_reason is not None:
                attributes["react_cli.finish_reason"] = self.spans.text(
                    event.completion.finish_reason
                )
        name = f"llm {request.kind}" + (f" {request.step}" if request.step else "")
        self._child(name, attributes, event.latency_s, event.error)

    def _sampled(self, result: SampleSet) -> None:
        started, self.sampling = self.sampling, None
        if started is None or started.request is None or not result.calls:
            return  # recorded completions (a re-run): no call was made
        samples = list(result.samples)
        if not samples:  # the request failed (or was cut short): one span says so
            attributes = self._llm(started.request, Usage(), [], started.temperature, started.n)
            self._child("llm sample", attributes, result.duration_s, result.error)
            return
        first = max(1, len(samples) - result.calls + 1)
        groups = [samples[:first], *([sample] for sample in samples[first:])]
        for group in groups:
            usage = sum((sample.usage for sample in group), Usage())
            texts = [sample.raw for sample in group]
            attributes = self._llm(started.request, usage, texts, started.temperature, len(group))
            seconds = max(sample.latency_s for sample in group)
            self._child("llm sample", attributes, seconds, None)

    def _llm(
        self, request: ModelRequest, usage: Usage, texts: list[str], temperature: float, n: int
    ) -> Attributes:
        settings, text = self.spans.settings, self.spans.text
        parameters: dict[str, Any] = {
            "temperature": temperature,
            "max_tokens": settings.max_tokens,
            "stop": list(request.stop),
            "stream": settings.stream,
        }
        if request.kind is CallKind.SAMPLE:
            parameters["n"] = n
        attributes: Attributes = {
            KIND: "LLM",
            "llm.model_name": text(settings.model or ""),
            "llm.system": "openai",  # an OpenAI-compatible endpoint
            "llm.invocation_parameters": text(json.dumps(parameters)),
            "llm.token_count.prompt": usage.prompt_tokens,
            "llm.token_count.completion": usage.completion_tokens,
            "llm.token_count.total": usage.total_tokens,
            "react_cli.api": settings.api,
            "react_cli.call.kind": str(request.kind),
            "react_cli.call.step": request.step,
            "react_cli.usage.estimated": usage.estimated,
        }
        if self.spans.capture:
            prompt = text(request.prompt)
            attributes.update(
                {
                    "input.value": prompt,
                    "input.mime_type": "text/plain",
                    "llm.input_messages.0.message.role": "user",
                    "llm.input_messages.0.message.content": prompt,
                }
            )
            if texts:
                attributes["output.value"] = text(texts[0])
                attributes["output.mime_type"] = "text/plain"
            for number, reply in enumerate(texts[:MAX_MESSAGES]):
                attributes[f"llm.output_messages.{number}.message.role"] = "assistant"
                attributes[f"llm.output_messages.{number}.message.content"] = text(reply)
        return attributes

    def _tool_called(self, event: ToolCalled) -> None:
        call, result, text = event.call, event.result, self.spans.text
        spec = self.tools.get(call.name.casefold())
        attributes: Attributes = {
            KIND: "TOOL",
            "tool.name": text(call.name),
            "react_cli.retries": result.retries,
        }
        if self.spans.capture:  # what went to the tool and came back, as the prompts
            attributes.update(
                {
                    "input.value": self.spans.json(call_arguments(call, spec)),
                    "input.mime_type": "application/json",
                    "output.value": text(result.observation),
                    "output.mime_type": "text/plain",
                }
            )
        if spec is not None:
            attributes["tool.description"] = text(spec.description)
            attributes["tool.parameters"] = self.spans.json(spec.schema)
            attributes["react_cli.tool.needs_consent"] = spec.needs_consent
        if call.id is not None:
            attributes["tool.id"] = text(call.id)
        error = result.error
        if result.refused is not None:  # it needed consent: nothing ran
            attributes["react_cli.tool.refused"] = text(str(result.refused))
            error = refusal_text(result.refused)
        self._child(text(call.name), attributes, event.latency_s, error)

    def finish(self) -> None:
        """End the run's span with what each method answered (the first's as its output)."""
        try:
            with self.lock:
                self._finish()
        except Exception as exc:
            self.spans.broken(exc)
        finally:
            self.span.end()

    def _finish(self) -> None:
        if not self.answered:
            return
        text, first = self.spans.text, self.answered[0]
        results: dict[str, dict[str, Any]] = {
            str(done.outcome.method): {
                "answer": done.run.answer,
                "stop_reason": str(done.run.stop_reason),
                "branch": None if done.outcome.branch is None else str(done.outcome.branch),
                "steps": len(done.run.steps),
                "calls": done.outcome.calls,
                "error": done.run.error,
            }
            for done in self.answered
        }
        for done in self.scored:
            if done.method in results:
                results[done.method].update(done.scores)
        attributes: Attributes = {
            "output.value": text(first.run.answer or ""),
            "output.mime_type": "text/plain",
            "metadata": self.spans.json(results),
            "react_cli.stop_reason": text(str(first.run.stop_reason)),
            "react_cli.steps": len(first.run.steps),
            "react_cli.calls": first.outcome.calls,
        }
        if first.outcome.branch is not None:
            attributes["react_cli.branch"] = str(first.outcome.branch)
        if self.scored:  # an eval's question: its gold answers, the first method's scores
            attributes["react_cli.gold"] = [text(gold) for gold in self.scored[0].golds]
            attributes.update({f"react_cli.{k}": v for k, v in self.scored[0].scores.items()})
        self.span.set_attributes(attributes)
        failed = [done for done in self.answered if done.run.stop_reason in _FAILED]
        if failed:
            reason = failed[0].run.error or str(failed[0].run.stop_reason)
            self.span.set_status(Status(StatusCode.ERROR, text(reason)))
        else:
            self.span.set_status(Status(StatusCode.OK))
