"""Versioned JSON traces: one file per run, written atomically, never holding a secret.

A ``Trace`` is a run with what its file records around it (id, time, configuration, prompt
template, and its method's samples, votes and branch); ``to_json``/``from_json`` are the one
writer and reader of its document. ``load_trace`` accepts every version listed in
``READABLE_VERSIONS`` and upgrades older ones (``traces.upgrade``) so that old traces keep
loading when the format moves on: version 2 added the method, version 3 steps that hold what
their protocol produced.
"""

from __future__ import annotations

import os
import re
import tempfile
import unicodedata
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from react_cli.core.conversation import ConversationRecord
from react_cli.core.errors import TraceError, UsageError
from react_cli.core.fields import optional_text
from react_cli.core.method import Method
from react_cli.core.records import ProtocolName
from react_cli.core.trajectory import Run
from react_cli.core.wording import quoted
from react_cli.infra.files import write_json_atomic, write_json_in
from react_cli.infra.untrusted import BadInput, not_regular, parse_json, read_text
from react_cli.loop.prompts import PromptTemplate
from react_cli.methods.record import MethodRecord
from react_cli.methods.sources import RunSource, run_sources
from react_cli.tools.base import ToolSpec
from react_cli.tools.paper import PAPER_TOOLS
from react_cli.traces.runconfig import RunConfig
from react_cli.traces.upgrade import UPGRADES

TRACE_VERSION = 3
READABLE_VERSIONS = frozenset({TRACE_VERSION, *UPGRADES})
_REQUIRED = ("question", "stop_reason", "steps")
MAX_TRACE_BYTES = 64 << 20
"""A larger file is not read as a trace (ours stay far below: steps hold bounded text)."""


def new_run_id() -> str:
    return uuid.uuid4().hex[:12]


def now_utc() -> datetime:
    return datetime.now(timezone.utc)


def slug(text: str, limit: int = 40) -> str:
    """A filename-safe short form of a question (ASCII where possible)."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    words = re.sub(r"[^A-Za-z0-9]+", "-", folded.lower()).strip("-")
    return words[:limit].rstrip("-") or "run"


def default_trace_path(home: Path, created: datetime, question: str) -> Path:
    stamp = created.strftime("%Y%m%dT%H%M%S%fZ")
    return home / "traces" / f"{stamp}-{slug(question)}.json"


_RUN_HEAD = ("question", "answer", "stop_reason", "error")  # the run's keys before config
_RUN_KEYS = frozenset({*_RUN_HEAD, "usage", "duration_s", "steps"})
_METHOD_KEYS = frozenset({"method", "branch", "calls", "samples", "votes"})
_FALLBACK_TEMPLATE = "Question: {question}\n"


@dataclass
class Trace:
    """A run and what its trace records around it.

    ``record`` is the method's part (samples, votes, branch, calls); ``extra`` holds the
    document's other top-level fields, in order: ``forced`` and ``cost`` in every trace,
    ``sources`` in a trace of a method that reads Wikipedia (as :attr:`sources` derives them),
    ``forked_from`` in a fork's, ``conversation`` in a question's of ``ask`` or ``chat`` (see
    :attr:`conversation`), and whatever a newer writer added, kept so that nothing read is
    lost. ``path`` is the file it was read from or is written to, if any.
    """

    run: Run
    config: RunConfig
    record: MethodRecord
    id: str | None = None
    created: str | None = None  # ISO 8601, as recorded
    prompt_template: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None

    def to_json(self) -> dict[str, Any]:
        """The trace document: every run field in today's full shape (defaults filled in)."""
        run = self.run.to_json()
        return {
            "version": TRACE_VERSION,
            "id": self.id,
            "created": self.created,
            **{key: run.pop(key) for key in _RUN_HEAD},
            "config": self.config.to_json(),
            "prompt_template": self.prompt_template,
            **run,
            **self.record.to_json(),
            **self.extra,
        }

    @classmethod
    def from_json(cls, document: dict[str, Any], path: Path | None = None) -> Trace:
        """A loaded document (see :func:`load_trace`) as a trace; TraceError naming ``path``
        and the first malformed part."""
        try:
            run = Run.from_json(document)
            config = RunConfig.from_json(document.get("config"))
            record = MethodRecord.from_json(document, run)
            keys = ("id", "created", "prompt_template")
            fields = {key: optional_text(document, key) for key in keys}
            if document.get("conversation") is not None:  # read when asked for; checked now
                ConversationRecord.from_json(document["conversation"])
        except (TypeError, ValueError, KeyError, AttributeError) as exc:
            raise TraceError(f"{path}: malformed trace ({exc})") from None
        known = {"version", "config", *fields, *_RUN_KEYS, *_METHOD_KEYS}
        extra = {key: value for key, value in document.items() if key not in known}
        return cls(run, config, record, **fields, extra=extra, path=path)

    def write(self, path: Path) -> None:
        """Write the trace to ``path`` (a path the user named: a link there is followed to
        the file it names, see :func:`trace_target`) in one step; TraceError names the file
        when that is impossible. This and :meth:`write_in` are the one writer of traces."""
        try:
            target = trace_target(path)
            target.parent.mkdir(parents=True, exist_ok=True)
            write_json_atomic(target, self.to_json())
        except OSError as exc:
            raise TraceError(f"cannot write trace {path}: {exc.strerror or exc}") from None
        self.path = path

    def write_in(self, folder: Path, name: str) -> None:
        """Write the trace as ``folder/name`` by the folder's policy (an eval folder's: a
        link planted there is replaced, never written through)."""
        try:
            write_json_in(folder, name, self.to_json())
        except OSError as exc:
            raise TraceError(f"cannot write trace {folder / name}: {exc.strerror or exc}") from None
        self.path = folder / name

    @classmethod
    def read(cls, path: Path) -> Trace:
        """The trace in the file at ``path``; TraceError naming the file when it is not one."""
        return cls.from_json(load_trace(path), path)

    @property
    def sources(self) -> tuple[RunSource, ...] | None:
        """The pages the run was shown (``methods.sources``), from its steps; None for a
        method that reads no Wikipedia (Standard, CoT, CoT-SC)."""
        method = self.record.method
        if isinstance(method, Method) and not method.uses_tools:
            return None
        return run_sources(self.run.steps, self.run.answer)

    @property
    def conversation(self) -> ConversationRecord | None:
        """The conversation the run is a turn of, and the earlier turns it was given (None:
        a trace from before conversations, or an eval's)."""
        data = self.extra.get("conversation")
        return None if data is None else ConversationRecord.from_json(data)

    @property
    def tool_specs(self) -> tuple[ToolSpec, ...]:
        """What the run's loop could call (the paper's three unless it recorded others)."""
        return self.config.tools or PAPER_TOOLS

    def template(self) -> PromptTemplate:
        """The prompt template of the run's loop (or of its one call), recorded in full."""
        method = self.record.method
        kinds = method.prompts if isinstance(method, Method) else (Method.REACT,)
        protocol = self.config.protocol
        return PromptTemplate(
            name=self.config.prompt_name or "recorded",
            text=_FALLBACK_TEMPLATE if self.prompt_template is None else self.prompt_template,
            method=Method.REACT if Method.REACT in kinds else kinds[0],
            protocol=protocol if isinstance(protocol, ProtocolName) else ProtocolName.TEXT,
        )

    @property
    def protocol(self) -> ProtocolName:
        """The protocol the run's loop spoke (traces before protocols: the paper's text);
        TraceError for one this react-cli does not know."""
        protocol = self.config.protocol
        if protocol is None:
            return ProtocolName.TEXT
        if not isinstance(protocol, ProtocolName):
            raise TraceError(f"{self.path}: this react-cli does not know the protocol {protocol!r}")
        return protocol


def trace_target(path: Path) -> Path:
    """The file a trace for ``path`` replaces: ``path`` if new or a regular file, the file a
    symbolic link points to; OSError for anything else, which must never be replaced (as root,
    replacing ``/dev/full`` with a file breaks the system)."""
    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    kind = not_regular(target, follow_symlinks=False)
    if kind is not None:
        verb = "is" if target == path else "links to"
        raise OSError(f"{verb} {kind}, not a regular file")
    return target


def check_writable(
    path: Path, remedy: str = "give --trace PATH, --no-trace, or another REACT_CLI_HOME"
) -> None:
    """Fail now, with the reason (and the ``remedy``), if a trace could not be written to
    ``path`` later."""
    try:
        target = trace_target(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise UsageError(
            f"cannot write the trace to {path}: {exc.strerror or exc} ({remedy})"
        ) from None


def load_trace(path: Path) -> dict[str, Any]:
    """Read and validate a trace, upgrading older versions; TraceError names file and problem."""
    try:
        text = read_text(path, MAX_TRACE_BYTES)
    except FileNotFoundError:
        raise TraceError(f"{path}: no such trace file") from None
    except IsADirectoryError:
        raise TraceError(f"{path}: is a directory, not a trace file") from None
    except (OSError, BadInput) as exc:
        raise TraceError(f"{path}: cannot read trace: {exc}") from None
    if not text.strip():
        raise TraceError(f"{path}: empty file, not a trace")
    try:
        parsed = parse_json(text)
    except BadInput as exc:
        raise TraceError(f"{path}: {exc}") from None
    if not isinstance(parsed, dict):
        raise TraceError(f"{path}: not a react-cli trace (top level is not an object)")
    document: dict[str, Any] = parsed
    version = document.get("version")
    if (
        isinstance(version, bool)
        or not isinstance(version, int)
        or version not in READABLE_VERSIONS
    ):
        raise TraceError(
            f"{path}: unsupported trace version {quoted(version)} "
            f"(this react-cli reads {', '.join(map(str, sorted(READABLE_VERSIONS)))})"
        )
    try:
        while document["version"] != TRACE_VERSION:
            document = UPGRADES[document["version"]](document)
    except (TypeError, ValueError, KeyError, AttributeError) as exc:  # a hand-made old one
        raise TraceError(f"{path}: malformed trace ({exc})") from None
    missing = [key for key in _REQUIRED if key not in document]
    if missing or not isinstance(document["steps"], list):
        raise TraceError(f"{path}: not a react-cli trace (missing {', '.join(missing) or 'steps'})")
    return document
