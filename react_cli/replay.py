"""Replay saved traces: render them, re-run them with the current code, fork them.

A trace is turned back into the loop's inputs. ``RecordedModel`` answers each model call with
the raw text the trace holds for that call, ``RecordedTools`` answers each Search/Lookup with the
recorded observation; both hand over to live ones when the recording runs out (a fork) or are
swapped for live ones (``--live-tools``). The loop itself is the unchanged ``Agent``, so a
re-run shows exactly what today's parser and stop rules make of yesterday's model output.
"""

from __future__ import annotations

import re
import time
from collections import deque
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, NoReturn

from rich.console import Console

from react_cli.agent import Agent, Limits, RunObserver, RunResult, Step
from react_cli.errors import LLMError, ReactCliError, TraceError, UsageError
from react_cli.parser import parse_action
from react_cli.prompts import PromptTemplate
from react_cli.records import Completion, Model, TextSink, ToolResult, Tools, Usage
from react_cli.render import Renderer
from react_cli.trace import load_trace, seconds, step_from_dict, step_to_dict
from react_cli.wording import plural

# The cue a prompt ends with names the call: "Thought k:", "Action k:", or the forced
# "Action k: Finish[" of --force-answer.
_CALL = re.compile(r"(Thought|Action) (\d+):\s*(Finish\[)?$")
_FALLBACK_TEMPLATE = "Question: {question}\n"


@dataclass
class Recorded:
    """A loaded trace: the (upgraded) document and the run it describes."""

    path: Path
    document: dict[str, Any]
    result: RunResult

    @property
    def config(self) -> dict[str, Any]:
        config = self.document.get("config")
        return config if isinstance(config, dict) else {}

    def template(self) -> PromptTemplate:
        """The prompt template the run was made with (recorded in full in the trace)."""
        text = self.document.get("prompt_template")
        prompt = self.config.get("prompt")
        name = prompt.get("name") if isinstance(prompt, dict) else None
        return PromptTemplate(
            name=str(name or "recorded"), text=text if isinstance(text, str) else _FALLBACK_TEMPLATE
        )

    def limits(self) -> Limits:
        """The stop rules of the recorded run, so a re-run stops where it stopped."""
        config, default = self.config, Limits()
        try:
            return Limits(
                max_steps=int(config.get("max_steps") or default.max_steps),
                max_parse_errors=int(config.get("max_parse_errors") or default.max_parse_errors),
                max_repeats=int(config.get("max_repeats") or default.max_repeats),
                max_total_tokens=_optional_int(config.get("max_total_tokens")),
                max_tool_errors=int(config.get("max_tool_errors") or default.max_tool_errors),
                force_answer=bool(config.get("force_answer")),
            )
        except (TypeError, ValueError):
            raise TraceError(f"{self.path}: malformed config limits") from None

    def normalised(self) -> dict[str, Any]:
        """The document with every step in today's full shape (defaults filled in)."""
        return {
            **self.document,
            "usage": self.result.usage.to_dict(),
            "steps": [step_to_dict(step) for step in self.result.steps],
        }


def _optional_int(value: Any) -> int | None:
    return None if value is None else int(value)


def load_run(path: Path) -> Recorded:
    """Load a trace and rebuild its run; any malformed part is a TraceError naming the file."""
    document = load_trace(path)
    try:
        steps = [step_from_dict(item) for item in document["steps"]]
        usage = (
            Usage.from_dict(document["usage"])
            if isinstance(document.get("usage"), dict)
            else sum((s.usage for s in steps), Usage())
        )
        result = RunResult(
            question=str(document["question"]),
            answer=None if document.get("answer") is None else str(document["answer"]),
            stop_reason=str(document["stop_reason"]),
            steps=steps,
            usage=usage,
            duration_s=seconds(document.get("duration_s"), "duration_s"),
            error=None if document.get("error") is None else str(document["error"]),
        )
    except (TypeError, ValueError, AttributeError) as exc:
        raise TraceError(f"{path}: malformed trace ({exc})") from None
    return Recorded(path, document, result)


# --- choosing a trace -------------------------------------------------------------------


def trace_files(home: Path) -> list[Path]:
    """Trace files under ``<home>/traces``, newest first (by modification time, then name)."""
    folder = home / "traces"
    if not folder.is_dir():
        return []
    stamped = []
    for path in folder.glob("*.json"):
        try:
            if path.is_file():
                stamped.append((path.stat().st_mtime_ns, path.name, path))
        except OSError:  # vanished or unreadable meanwhile: not worth failing the listing
            continue
    return [path for *_, path in sorted(stamped, reverse=True)]


def select_trace(home: Path, path: Path | None, nth: int | None) -> Path:
    """TRACE if given, else the ``nth`` most recent trace in the home directory (1 = newest)."""
    if path is not None:
        if nth is not None:
            raise UsageError("give either TRACE or -n, not both")
        return path
    nth = 1 if nth is None else nth
    if nth < 1:
        raise UsageError("-n must be at least 1")
    files = trace_files(home)
    if not files:
        raise TraceError(f"no traces in {home / 'traces'} yet: run 'react-cli ask' or pass TRACE")
    if nth > len(files):
        raise TraceError(
            f"only {plural(len(files), 'trace')} in {home / 'traces'}, no number {nth}"
        )
    return files[nth - 1]


def summarize(path: Path) -> dict[str, Any]:
    """One listing row; an unreadable file becomes a row with ``error`` instead of crashing."""
    try:
        recorded = load_run(path)
    except TraceError as exc:
        return {"path": str(path), "error": str(exc).removeprefix(f"{path}: ")}
    result = recorded.result
    return {
        "path": str(path),
        "created": recorded.document.get("created"),
        "question": result.question,
        "answer": result.answer,
        "stop_reason": result.stop_reason,
        "steps": len(result.steps),
        "model": recorded.config.get("model"),
    }


def local_time(created: Any) -> str:
    """An ISO timestamp shown in local time to the minute; anything else as is."""
    try:
        return datetime.fromisoformat(str(created)).astimezone().strftime("%Y-%m-%d %H:%M")
    except (ValueError, OverflowError):  # not a timestamp, or one at the end of time
        return str(created or "?")


# --- recorded model and tools -----------------------------------------------------------


class ReplayExhausted(LLMError):
    """The current code asked the model for an output the trace does not hold."""


class ReplayMismatch(ReactCliError):
    """The current code called a tool the recorded run did not call at this point."""


class RecordedModel:
    """Plays the trace's raw outputs: step k's ``raw`` for the ``Thought k:`` call and its
    ``followup_raw`` for the ``Action k:`` call; asks ``live`` for anything not recorded.

    Without ``live``, the call at which the recorded run failed (endpoint error or Ctrl-C)
    fails the same way again; any other call the trace cannot answer raises ``ReplayExhausted``.
    """

    def __init__(self, result: RunResult, live: Model | None = None) -> None:
        self.live = live
        self._steps = {step.index: step for step in result.steps}
        self._result = result
        self._failed_call: tuple[str, int] | None = None
        last = result.steps[-1] if result.steps else None
        if last is not None and result.stop_reason in ("llm_error", "interrupted"):
            if last.raw:  # the step's text arrived, so its extra "Action k:" call failed
                self._failed_call = ("Action", last.index)
            else:  # the call that failed produced no text
                self._failed_call = ("Thought", last.index)
                del self._steps[last.index]

    def complete(self, prompt: str, stop: list[str], on_text: TextSink | None = None) -> Completion:
        match = _CALL.search(prompt)
        label, index = (match.group(1), int(match.group(2))) if match else ("", 0)
        first_call = label == "Thought" or bool(match and match.group(3))
        step = self._steps.get(index)
        text = None if step is None else step.raw if first_call else step.followup_raw
        if step is None or text is None:
            if self.live is not None:
                return self.live.complete(prompt, stop, on_text)
            self._end_like_the_recording(label, index)
        if first_call:  # the step's cost is booked on its first call
            return Completion(text, step.usage, step.latency_s, step.retries)
        return Completion(text, Usage())

    def _end_like_the_recording(self, label: str, index: int) -> NoReturn:
        if (label, index) == self._failed_call:
            if self._result.stop_reason == "interrupted":
                raise KeyboardInterrupt
            raise LLMError(self._result.error or "the model endpoint failed")
        raise ReplayExhausted(f"the trace holds no model output for '{label} {index}:'")


class RecordedTools:
    """Answers Search/Lookup with the recorded observations, in order; once the current code
    asks for a call the recording does not hold, hands over to ``live`` (if any)."""

    def __init__(self, steps: list[Step], live: Tools | None = None) -> None:
        self.live = live
        self._queue: deque[tuple[str, str, ToolResult]] = deque()
        for step in steps:
            action = parse_action(step.action or "") if step.error is None else None
            if action is not None and action.kind in ("search", "lookup"):
                result = ToolResult(step.observation, dict(step.details))
                self._queue.append((action.kind, action.argument, result))
        self._played: list[tuple[str, str]] = []
        self._went_live = False

    def search(self, entity: str) -> ToolResult:
        return self._call("search", entity)

    def lookup(self, keyword: str) -> ToolResult:
        return self._call("lookup", keyword)

    def _call(self, kind: str, argument: str) -> ToolResult:
        if not self._went_live and self._queue and self._queue[0][:2] == (kind, argument):
            self._played.append((kind, argument))
            return self._queue.popleft()[2]
        if self.live is None:
            label = "Search" if kind == "search" else "Lookup"
            raise ReplayMismatch(f"the recorded run made no {label}[{argument}] call here")
        if not self._went_live:
            self._went_live = True
            self._restore_live_state(kind)
        return self.live.search(argument) if kind == "search" else self.live.lookup(argument)

    def _restore_live_state(self, kind: str) -> None:
        """A live Lookup reads the page of the last Search: replay those calls on ``live``."""
        assert self.live is not None
        if kind != "lookup":
            return
        starts = [i for i, (k, _) in enumerate(self._played) if k == "search"]
        for k, argument in self._played[starts[-1] :] if starts else []:
            self.live.search(argument) if k == "search" else self.live.lookup(argument)


# --- re-run and its comparison ----------------------------------------------------------


@dataclass(frozen=True)
class Difference:
    """One place where the re-run acted differently from the recording."""

    where: str
    recorded: str
    now: str

    def to_dict(self) -> dict[str, str]:
        return {"where": self.where, "recorded": self.recorded, "now": self.now}


def rerun(
    recorded: Recorded, *, tools: Tools | None = None, observer: RunObserver | None = None
) -> RunResult:
    """Run the recorded question again with today's loop, on the recorded model outputs and
    (unless ``tools`` is given) the recorded observations. Never touches the network itself."""
    result = recorded.result
    if not result.steps and result.stop_reason == "interrupted":
        return result  # Ctrl-C before the first step: there is nothing to re-run
    agent = Agent(
        RecordedModel(result),
        tools or RecordedTools(result.steps),
        limits=recorded.limits(),
        observer=observer,
    )
    return agent.run(recorded.template().prefix(result.question), result.question)


def _shown(value: str | None) -> str:
    return "(none)" if value is None else value


def compare(recorded: RunResult, now: RunResult) -> list[Difference]:
    """Step-by-step differences in actions, tool observations, answer and stop reason."""
    differences: list[Difference] = []
    for k in range(max(len(recorded.steps), len(now.steps))):
        old = recorded.steps[k] if k < len(recorded.steps) else None
        new = now.steps[k] if k < len(now.steps) else None
        where = f"step {k + 1}"
        if old is None or new is None:
            differences.append(Difference(where, _describe(old), _describe(new)))
        elif (old.action, old.error) != (new.action, new.error):
            differences.append(Difference(f"{where} action", _describe(old), _describe(new)))
        elif old.error is None and old.observation != new.observation:
            differences.append(Difference(f"{where} observation", old.observation, new.observation))
    if recorded.answer != now.answer:
        differences.append(Difference("answer", _shown(recorded.answer), _shown(now.answer)))
    if recorded.stop_reason != now.stop_reason:
        differences.append(Difference("stop reason", _stop(recorded), _stop(now)))
    return differences


def _describe(step: Step | None) -> str:
    if step is None:
        return "(no such step)"
    action = _shown(step.action)
    return f"{action}  [{step.error}]" if step.error else action


def _stop(result: RunResult) -> str:
    return f"{result.stop_reason} ({result.error})" if result.error else result.stop_reason


# --- forks ------------------------------------------------------------------------------


@dataclass
class Fork:
    """``ask --from-trace T --from-step K``: steps 1..K-1 from T, then the live endpoint."""

    recorded: Recorded
    step: int

    @classmethod
    def open(cls, path: Path | None, step: int | None) -> Fork:
        if path is None or step is None:
            raise UsageError("a fork needs both --from-trace TRACE and --from-step K")
        recorded = load_run(path)
        last = len(recorded.result.steps) + 1
        if not 1 <= step <= last:
            raise UsageError(f"--from-step must be between 1 and {last} for {path}")
        return cls(recorded, step)

    def _replayed(self) -> RunResult:
        result = self.recorded.result
        return RunResult(
            question=result.question,
            answer=None,
            stop_reason="forked",
            steps=result.steps[: self.step - 1],
            usage=Usage(),
            duration_s=0.0,
        )

    def model(self, live: Model) -> Model:
        return RecordedModel(self._replayed(), live)

    def tools(self, live: Tools) -> Tools:
        return RecordedTools(self._replayed().steps, live)

    def trace_extra(self) -> dict[str, Any]:
        """What the new trace records about its origin."""
        return {
            "forked_from": {
                "trace": str(self.recorded.path),
                "id": self.recorded.document.get("id"),
                "step": self.step,
            }
        }


# --- playback ---------------------------------------------------------------------------


class PacedRenderer(Renderer):
    """The live renderer with a pause after each step, for watching a replay."""

    def __init__(self, console: Console, delay_s: float) -> None:
        super().__init__(console)
        self.delay_s = delay_s

    def step_finished(self, step: Step) -> None:
        super().step_finished(step)
        if self.delay_s > 0:
            self.console.file.flush()
            time.sleep(self.delay_s)
