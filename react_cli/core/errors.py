"""The one exception tree of react-cli.

Every failure a user can meet is a ``ReactCliError``; the command line (``cli/app.py``) prints
it as one ``Error: ...`` line on stderr and exits with the exception's ``exit_code``:

- ``UsageError`` (2): bad option value, missing model or endpoint, empty question.
- ``LLMError`` (1): the model endpoint failed after retries or refused the request;
  ``LLMConfigError`` (2) when it refused the configuration (401/403 key, 404 model or URL).
- ``WikiError`` (1): a Wikipedia backend failed. Inside a run the tools turn it into an
  observation instead, so this only escapes from direct tool commands.
- ``TraceError`` (1): a trace file is missing, truncated, not JSON or of an unknown version.
- ``ConversationError`` (1): a kept conversation cannot be read or saved.
- ``StoreError`` (1): an eval folder's ``results.jsonl`` or ``summary.json`` cannot be written.
- ``DownloadError`` (1): a dataset or archive could not be downloaded, or is not the file pinned.
- ``NoAnswerError`` (1): a run ended without an answer; ``EvalIncompleteError`` (1): an eval
  ended with questions that failed or never ran; ``RerunDiffersError`` (1): a re-run did not
  reproduce its recording; ``InterruptError`` (130): Ctrl-C, with what was kept.

A command stopped by a signal exits 128 + its number, as shells report it: 130 for Ctrl-C
(``SIGINT``), 143 for ``SIGTERM`` (``kill``, ``timeout``), 129 for ``SIGHUP`` (a closed
terminal); ``infra.interrupts`` knows which came, ``cli/app.py`` exits with it.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_NO_ANSWER = 1
EXIT_USAGE = 2
SIGNAL_EXIT_BASE = 128
EXIT_INTERRUPTED = SIGNAL_EXIT_BASE + 2  # SIGINT; 143 for SIGTERM, 129 for SIGHUP


def signal_exit_code(signum: int) -> int:
    """The exit code of a command the signal ``signum`` stopped."""
    return SIGNAL_EXIT_BASE + signum


class ReactCliError(Exception):
    """Base of every error react-cli reports to the user."""

    exit_code = EXIT_NO_ANSWER


class UsageError(ReactCliError):
    """The user asked for something impossible: bad flag value, missing setting."""

    exit_code = EXIT_USAGE


class LLMError(ReactCliError):
    """The model endpoint failed (after retries) or refused the request.

    ``retries`` counts the requests made again before it gave up (a step records them)."""

    def __init__(self, message: str, retries: int = 0) -> None:
        super().__init__(message)
        self.retries = retries


class LLMConfigError(LLMError):
    """The endpoint refused the run's configuration: no retry or other question can help."""

    exit_code = EXIT_USAGE


class LLMAuthError(LLMConfigError):
    """401/403: the API key is missing, wrong or not allowed."""


class LLMNotFoundError(LLMConfigError):
    """404: the model name or the base URL is wrong."""


class LLMRequestError(LLMError):
    """Another 4xx: the endpoint rejected the request as malformed."""


class LLMConnectionError(LLMError):
    """The endpoint could not be reached, timed out, or kept failing with 429/5xx."""


class LLMResponseError(LLMError):
    """The endpoint answered 200 with something that is not a usable completion."""


class WikiError(ReactCliError):
    """A Wikipedia backend failed: host unreachable, error answers, malformed data.

    ``retries`` counts the requests made again before it gave up (a step records them);
    ``reason`` is the failure alone, without the ``hint`` the message ends with (what to do
    about it, for the user: the model's observation says only the reason)."""

    def __init__(self, message: str, retries: int = 0, hint: str = "") -> None:
        super().__init__(f"{message}; {hint}" if hint else message)
        self.retries = retries
        self.reason = message


class TraceError(ReactCliError):
    """A trace file cannot be read or written."""


class ConversationError(ReactCliError):
    """A conversation in the home directory cannot be read (corrupt, too large, a FIFO) or
    saved."""


class StoreError(ReactCliError):
    """An eval folder's results or summary cannot be written (disk full, file-size limit)."""


class DownloadError(ReactCliError):
    """A download failed (unreachable, refused, broken off) or brought another file than the
    one pinned; ``unreachable`` when the host could not be reached at all (offline, a
    firewall), so the caller can say how to fetch it by hand."""

    def __init__(self, message: str, *, unreachable: bool = False) -> None:
        super().__init__(message)
        self.unreachable = unreachable


class NoAnswerError(ReactCliError):
    """A run ended without an answer (step limit, endpoint failure, ...)."""


class EvalIncompleteError(ReactCliError):
    """An eval ended with questions that failed or never ran; ``--resume`` continues it."""


class RerunDiffersError(ReactCliError):
    """A re-run of a recorded run did not reproduce it."""


class InterruptError(ReactCliError):
    """Ctrl-C (or SIGTERM, SIGHUP) stopped the command; the message says what was kept. Its
    exit code is the signal's (``cli/app.py`` asks ``infra.interrupts`` which came)."""

    exit_code = EXIT_INTERRUPTED
