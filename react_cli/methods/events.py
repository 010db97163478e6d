"""What a method reports beyond its loop's steps: its calls for completions, and its end.

A method starts and finishes the whole run (``RunStarted``, then :class:`MethodFinished`); its
loop's steps are forwarded to the same observer (``loop.events``).
"""

from __future__ import annotations

from dataclasses import dataclass

from react_cli.core.method import Method
from react_cli.core.trajectory import Run
from react_cli.llm.base import ModelRequest
from react_cli.loop.events import Event
from react_cli.methods.results import Outcome, SampleSet


@dataclass(frozen=True)
class SamplingStarted(Event):
    """A Standard or CoT call (``n`` 1, temperature 0), or CoT-SC's ``n`` samples."""

    kind: Method
    n: int
    temperature: float
    request: ModelRequest | None = None  # None: recorded completions, no call is made


@dataclass(frozen=True)
class SamplingFinished(Event):
    result: SampleSet


@dataclass(frozen=True)
class MethodFinished(Event):
    """The method's answer and the whole run it makes (every block it used)."""

    outcome: Outcome
    run: Run
