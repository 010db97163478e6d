"""Where a re-run acted otherwise than its recording: step by step, the method's branch and
votes, and the pages shown at another revision (the usual reason on live tools)."""

from __future__ import annotations

from dataclasses import dataclass

from react_cli.core.sources import Revision
from react_cli.core.trajectory import Run, Step, actions_of
from react_cli.methods.record import MethodRecord


@dataclass(frozen=True)
class Difference:
    """One place where the re-run acted differently from the recording."""

    where: str
    recorded: str
    now: str

    def to_json(self) -> dict[str, str]:
        return {"where": self.where, "recorded": self.recorded, "now": self.now}


def _shown(value: str | None) -> str:
    return "(none)" if value is None else value


def compare_records(recorded: MethodRecord, now: MethodRecord) -> list[Difference]:
    """Differences in the method's branch and votes (the run is :func:`compare`'s)."""
    differences = []
    if recorded.branch != now.branch:
        branches = (recorded.branch, now.branch)
        differences.append(Difference("branch", *(_shown(b and str(b)) for b in branches)))
    if (recorded.votes or {}) != (now.votes or {}):
        votes = (recorded.votes or {}, now.votes or {})
        said = (", ".join(f"{a}: {n}" for a, n in v.items()) or "(none)" for v in votes)
        differences.append(Difference("votes", *said))
    return differences


def compare(recorded: Run, now: Run) -> list[Difference]:
    """Step-by-step differences in actions, tool observations, answer and stop reason."""
    differences: list[Difference] = []
    for k in range(max(len(recorded.steps), len(now.steps))):
        old = recorded.steps[k] if k < len(recorded.steps) else None
        new = now.steps[k] if k < len(now.steps) else None
        where = f"step {k + 1}"
        if old is None or new is None:
            differences.append(Difference(where, _describe(old), _describe(new)))
        elif (_written(old), old.error_text) != (_written(new), new.error_text):
            differences.append(Difference(f"{where} action", _describe(old), _describe(new)))
        elif old.error_text is None and _observations(old) != _observations(new):
            said = (" | ".join(_observations(step)) for step in (old, new))
            differences.append(Difference(f"{where} observation", *said))
    if recorded.answer != now.answer:
        differences.append(Difference("answer", _shown(recorded.answer), _shown(now.answer)))
    if recorded.stop_reason != now.stop_reason:
        differences.append(Difference("stop reason", _stop(recorded), _stop(now)))
    return differences


@dataclass(frozen=True)
class RevisionChange:
    """A page the re-run was shown at another revision than the recording: the usual reason a
    re-run on live tools differs."""

    wiki: str
    title: str
    recorded: Revision | None
    now: Revision | None

    def to_json(self) -> dict[str, object]:
        return {"wiki": self.wiki, "title": self.title, "recorded": self.recorded, "now": self.now}


def revision_changes(recorded: Run, now: Run) -> list[RevisionChange]:
    """The pages both runs were shown, each at the first revision its run saw, whose revisions
    differ; in the order the re-run saw them."""

    def first_seen(run: Run) -> dict[tuple[str, str], Revision | None]:
        seen: dict[tuple[str, str], Revision | None] = {}
        for source in (action.source for action in actions_of(run.steps)):
            if source is not None:
                seen.setdefault((source.wiki.name, source.title), source.revision)
        return seen

    before = first_seen(recorded)
    return [
        RevisionChange(wiki, title, before[(wiki, title)], revision)
        for (wiki, title), revision in first_seen(now).items()
        if (wiki, title) in before and before[(wiki, title)] != revision
    ]


def _written(step: Step) -> tuple[str | None, ...]:
    return tuple(action.written for action in step.actions)


def _observations(step: Step) -> tuple[str, ...]:
    return tuple(action.observation for action in step.actions)


def _describe(step: Step | None) -> str:
    if step is None:
        return "(no such step)"
    written = [action.written for action in step.actions if action.written is not None]
    action = "; ".join(written) or _shown(None)
    return f"{action}  [{step.error_text}]" if step.error_text else action


def _stop(run: Run) -> str:
    return f"{run.stop_reason} ({run.error})" if run.error else str(run.stop_reason)
