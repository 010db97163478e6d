"""Which recorded runs become exemplars: the rules a trajectory must pass, the shortest run of
each question, and a varied few of those.

A run is kept when it is right (EM 1), found every gold page (page recall 1.0, and at least
``min_sentence_recall`` of the gold sentences), ended by Finish, and every step before it was
clean: no parse error, no invalid action, no action repeated, no tool error or refusal, no
forced answer. Of the runs of one question (several eval folders, or a question asked twice)
the one of fewest steps is kept (then fewest tokens, then the first given). Every candidate
gets a ``Verdict`` saying why it was kept or left, which ``distill --explain`` prints.

The exemplars are then chosen for variety (:func:`choose`): one at a time, the kept run that
brings most that the chosen ones lack (another first action, a comparison question beside
bridge questions, a yes/no answer beside the others), the shorter first; candidate sets
after the first draw their ties by a seeded shuffle, so each is another varied set.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from react_cli.core.errors import TraceError, UsageError
from react_cli.core.method import Method
from react_cli.core.records import StopReason
from react_cli.core.trajectory import ErrorKind
from react_cli.eval.files import RESULTS, SUMMARY, read_rows, read_summary
from react_cli.eval.rows import MethodResult, Row
from react_cli.eval.summary import Summary
from react_cli.infra.untrusted import BadInput, read_bytes
from react_cli.loop.prompts import question_key
from react_cli.traces.trace import MAX_TRACE_BYTES, Trace, load_trace

LOOP_METHODS = (Method.REACT, Method.ACT)
"""The methods whose runs are trajectories (the hybrids' are ReAct runs cut to fewer steps)."""
YES_NO = ("yes", "no")
_COMPARISON = re.compile(
    r"\b(?:or|both|same|first|older|younger|earlier|later|more|less|longer|shorter|"
    r"larger|smaller|taller|higher|lower|which one)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Rules:
    """What a run must have to be an exemplar (``--min-sentence-recall``)."""

    min_sentence_recall: float = 0.0

    def text(self) -> str:
        """The rules as the front matter records them."""
        return (
            f"EM 1, page recall 1.0, sentence recall >= {self.min_sentence_recall:g}, "
            "finished by Finish, no parse error, invalid or repeated action, tool error or "
            "forced answer; the shortest run of each question"
        )


@dataclass(frozen=True)
class Candidate:
    """A recorded run that passed the rules: where it came from and what it is."""

    folder: Path
    row: Row
    trace: Trace
    trace_name: str  # relative to the folder, as the row names it
    trace_sha256: str
    summary: Summary
    method: Method
    row_type: str | None = field(default=None, compare=False)  # the dataset's, if known

    @property
    def question(self) -> str:
        return self.row.question

    @property
    def keys(self) -> tuple[str, ...]:
        """How a dataset names this question: its id, if the row has one, and its text's hash
        (what the leakage check matches)."""
        ident = () if self.row.id is None else (str(self.row.id),)
        return (*ident, question_key(self.row.question))

    @property
    def steps(self) -> int:
        return len(self.trace.run.steps)

    @property
    def tokens(self) -> int:
        return self.trace.run.usage.total_tokens

    @property
    def first_action(self) -> str:
        """The tool the run called first (``search``), in any case."""
        first = self.trace.run.steps[0].actions[0].call
        return "" if first is None else first.name.casefold()

    @property
    def yes_no(self) -> bool:
        return (self.trace.run.answer or "").strip().casefold() in YES_NO

    @property
    def kind(self) -> str:
        """``comparison`` or ``bridge``: the dataset's type where it says (HotpotQA's), else
        read from the question (a yes/no answer, or words that compare two things)."""
        recorded = self.row_type
        if recorded in ("comparison", "bridge"):
            return recorded
        return "comparison" if self.yes_no or _COMPARISON.search(self.question) else "bridge"

    def where(self) -> str:
        return f"{self.folder} row {self.row.index}"


@dataclass(frozen=True)
class Verdict:
    """Why a row of an eval folder was kept or left (``kept``: it is a candidate)."""

    folder: Path
    index: int
    question: str
    reason: str
    candidate: Candidate | None = None

    @property
    def kept(self) -> bool:
        return self.candidate is not None


@dataclass(frozen=True)
class Pool:
    """Every row judged, and the candidates kept (one per question), in the order given."""

    verdicts: list[Verdict]

    @property
    def kept(self) -> list[Candidate]:
        return [v.candidate for v in self.verdicts if v.candidate is not None]


def judge(folders: Sequence[Path], rules: Rules, types: dict[Path, list[str | None]]) -> Pool:
    """Every row of every eval folder in ``folders`` judged by ``rules``; ``types`` gives
    each folder's dataset row types where known (HotpotQA's ``type``). UsageError when a
    folder is not an eval folder."""
    verdicts: list[Verdict] = []
    for folder in folders:
        summary = read_summary(folder / SUMMARY)
        if summary is None:
            raise UsageError(f"{folder}: not an eval folder (no {SUMMARY})")
        latest = {row.key: row for row in read_rows(folder / RESULTS, skip_bad=True).rows}
        kinds = types.get(folder, [])
        for row in latest.values():
            row_type = kinds[row.index] if row.index < len(kinds) else None
            verdicts.append(_judged(folder, row, summary, rules, row_type))
    return Pool(_shortest(verdicts))


def _judged(
    folder: Path, row: Row, summary: Summary, rules: Rules, row_type: str | None
) -> Verdict:
    def left(reason: str) -> Verdict:
        return Verdict(folder, row.index, row.question, reason)

    found = _loop_result(row)
    if found is None:
        return left("not a ReAct or Act run")
    method, result = found
    if result.em < 1.0:
        return left(f"wrong answer (EM {result.em:g})")
    if result.evidence is not None:
        if result.evidence.page_recall < 1.0:
            return left(f"page recall {result.evidence.page_recall:g} < 1")
        sentences = result.evidence.sentence_recall
        if rules.min_sentence_recall > 0 and (
            sentences is None or sentences < rules.min_sentence_recall
        ):
            shown = "unknown" if sentences is None else f"{sentences:g}"
            return left(f"sentence recall {shown} < {rules.min_sentence_recall:g}")
    if result.stop_reason is not StopReason.FINISH:
        return left(f"stopped by {result.stop_reason}, not Finish")
    if result.trace is None:
        return left("no trace recorded")
    path = _inside(folder, result.trace)
    if path is None:
        return left("its trace is outside the eval folder")
    try:
        data = read_bytes(path, MAX_TRACE_BYTES)
        trace = Trace.from_json(load_trace(path), path)
    except (OSError, BadInput, TraceError) as exc:
        return left(f"trace unreadable ({str(exc)[:120]})")
    flaw = trace_flaw(trace)
    if flaw is not None:
        return left(flaw)
    digest = hashlib.sha256(data).hexdigest()
    candidate = Candidate(folder, row, trace, result.trace, digest, summary, method, row_type)
    note = "" if result.evidence is not None else " (no gold evidence: recall not checked)"
    return Verdict(folder, row.index, row.question, f"kept{note}", candidate)


def _loop_result(row: Row) -> tuple[Method, MethodResult] | None:
    """The row's ReAct result (else Act's), with its method."""
    results = row.results()
    for method in LOOP_METHODS:
        if str(method) in results:
            return method, results[str(method)]
    return None


def trace_flaw(trace: Trace) -> str | None:
    """What makes a recorded run no exemplar, or None: it must end by Finish, every step with
    valid, new, working actions and no forced answer."""
    steps = trace.run.steps
    if trace.run.stop_reason is not StopReason.FINISH or not steps:
        return "not finished by Finish"
    seen: set[tuple[str, str]] = set()
    for step in steps:
        k = step.index
        if step.failed(ErrorKind.PARSE):
            return f"a parse error at step {k}"
        if step.error is not None:
            return f"an error at step {k}"
        if step.forced:
            return f"a forced answer at step {k}"
        if not step.actions:
            return f"no action at step {k}"
        for action in step.actions:
            if action.call is None:
                return f"an invalid action at step {k}"
            if action.error or action.refused is not None:
                return f"a tool error at step {k}"
            if action.call.key in seen:
                return f"a repeated action at step {k} ({str(action.call)[:60]})"
            seen.add(action.call.key)
    last = steps[-1].actions[-1].call
    if last is None or last.name.casefold() != "finish":
        return "the last action is not Finish"
    if len(steps[-1].actions) > 1 or any(
        a.call is not None and a.call.name.casefold() == "finish"
        for step in steps[:-1]
        for a in step.actions
    ):
        return "Finish among other calls"
    return None


def _shortest(verdicts: list[Verdict]) -> list[Verdict]:
    """The verdicts with only the shortest kept run of each question left kept."""
    best: dict[str, Candidate] = {}
    for verdict in verdicts:
        c = verdict.candidate
        if c is None:
            continue
        key = question_key(c.question)
        held = best.get(key)
        if held is None or (c.steps, c.tokens) < (held.steps, held.tokens):
            best[key] = c
    out = []
    for verdict in verdicts:
        c = verdict.candidate
        if c is not None and best[question_key(c.question)] is not c:
            chosen = best[question_key(c.question)]
            reason = f"a shorter run of the same question is kept ({chosen.where()})"
            verdict = Verdict(verdict.folder, verdict.index, verdict.question, reason)
        out.append(verdict)
    return out


def features(candidate: Candidate) -> set[str]:
    """What a chosen set gains by holding ``candidate``."""
    return {
        f"first:{candidate.first_action}",
        f"kind:{candidate.kind}",
        f"answer:{'yes/no' if candidate.yes_no else 'other'}",
        f"method:{candidate.method}",
    }


def choose(kept: Iterable[Candidate], count: int, seed: int = 0) -> list[Candidate]:
    """``count`` of the kept candidates, chosen for variety (see the module's docstring);
    ``seed`` 0 breaks ties by length and order, another by a shuffle of that seed."""
    pool = list(kept)
    if seed:
        random.Random(seed).shuffle(pool)
    else:
        pool.sort(key=lambda c: (c.steps, c.tokens))
    chosen: list[Candidate] = []
    covered: set[str] = set()
    while pool and len(chosen) < count:
        best = max(pool, key=lambda c: (len(features(c) - covered), -pool.index(c)))
        pool.remove(best)
        chosen.append(best)
        covered |= features(best)
    return chosen


def _inside(folder: Path, name: str) -> Path | None:
    """``folder/name`` if it stays inside the folder (no absolute path, ``..`` or link out)."""
    try:
        target = (folder / name).resolve()
        target.relative_to(folder.resolve())
    except (OSError, ValueError, RuntimeError):
        return None
    return target
