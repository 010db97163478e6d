"""``eval``'s Batch API options (``--batch`` and how its waves go), declared once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

import typer

from react_cli.cli.help import Panel
from react_cli.core.errors import UsageError

if TYPE_CHECKING:
    from react_cli.eval.batch.broker import BatchOptions

MAX_POLL_S = 3600.0

BatchOpt = Annotated[
    bool,
    typer.Option(
        "--batch",
        help="Run the eval in waves over the OpenAI Batch API (/v1/files, /v1/batches): each "
        "wave sends every question's next model call as one batch, at the batch price "
        "(price_batch_factor, 0.5); --resume of its folder goes on in batches.",
        rich_help_panel=Panel.SPEED,
    ),
]
BatchPollOpt = Annotated[
    float | None,
    typer.Option(
        metavar="SECONDS",
        help="With --batch: the longest wait between two looks at a batch (from 1 s, doubling) "
        "[60].",
        rich_help_panel=Panel.SPEED,
    ),
]
BatchRetriesOpt = Annotated[
    int | None,
    typer.Option(
        metavar="N",
        help="With --batch: waves a request without an answer (failed, expired) is sent again "
        "in before its question fails [2].",
        rich_help_panel=Panel.SPEED,
    ),
]
KeepBatchFilesOpt = Annotated[
    bool,
    typer.Option(
        "--keep-batch-files",
        help="With --batch: keep the uploaded and result files on the endpoint (deleted once "
        "read by default).",
        rich_help_panel=Panel.SPEED,
    ),
]


@dataclass(frozen=True)
class BatchRunOptions:
    """``eval``'s Batch API options, as given (None or off: not given)."""

    batch: BatchOpt = False
    batch_poll: BatchPollOpt = None
    batch_retries: BatchRetriesOpt = None
    keep_batch_files: KeepBatchFilesOpt = False

    def options(self) -> BatchOptions:
        """The waves' options, checked."""
        from react_cli.eval.batch.broker import BatchOptions

        default = BatchOptions()
        poll = default.poll_cap_s if self.batch_poll is None else self.batch_poll
        retries = default.retries if self.batch_retries is None else self.batch_retries
        if not 0 < poll <= MAX_POLL_S:
            raise UsageError(f"--batch-poll must be more than 0 and at most {MAX_POLL_S:g}")
        if not 0 <= retries <= 100:
            raise UsageError("--batch-retries must be from 0 to 100")
        return BatchOptions(poll, retries, self.keep_batch_files)


NO_BATCH_OPTIONS = BatchRunOptions()
