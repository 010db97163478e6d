"""The one place react-cli downloads: datasets, Kiwix archives and what describes them.

A file (:meth:`Fetcher.download`) arrives as ``<dest>.part`` beside its destination and is

- bounded: never more bytes than its pin's size (or ``limit``), the server's claims checked
  against the pin before a byte is kept;
- resumable: a partial file is continued with ``Range: bytes=N-``; a server that ignores Range
  (200 instead of 206) or answers another range restarts the file from its first byte, and a
  connection that breaks off mid-file is continued at once from where it stopped (only
  attempts that bring nothing count as retries of the one ``retry.RetryPolicy``);
- checksummed: SHA-256 of every byte (the partial's too) checked against the pin
  (``pins.Pin``) before the file is used; a mismatch removes the partial file, a match is
  remembered (``pins.record_verified``);
- atomic: flushed, then moved into place in one ``os.replace``: the destination is either the
  old file or the whole new one, never half of one;
- shown: each chunk is told to a ``Progress`` callback (bytes so far, the total if known).

A small document (a catalog answer, a checksum file) is read whole by :meth:`Fetcher.fetch`,
under a size limit. ``mirrored`` points every URL at a mirror (``data_url``): the mirror holds
each file under its host and path, as ``wget -x URL`` lays them out.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO
from urllib.parse import urlsplit

import requests
from urllib3.exceptions import HTTPError as TransferError

from react_cli.core.errors import DownloadError
from react_cli.core.records import RetryObserver
from react_cli.infra.credentials import redact_url
from react_cli.infra.deadline import NO_DEADLINE, Watchdog
from react_cli.infra.files import hold_lock, open_appending
from react_cli.infra.http import failure_reason, is_unreachable, make_session, watched_request
from react_cli.infra.pins import HASH_CHUNK_BYTES, Pin, record_verified
from react_cli.infra.retry import RETRY_STATUSES, Retryable, RetryPolicy
from react_cli.infra.sizelimit import TooLarge, read_capped
from react_cli.infra.untrusted import open_regular

CHUNK_BYTES = 1 << 16
MAX_REDIRECTS = 5
_CONTENT_RANGE = re.compile(r"bytes (\d{1,20})-(\d{1,20})/(\d{1,20}|\*)")
PART_SUFFIX = ".part"

Progress = Callable[[int, int | None], None]
"""Told of a download's bytes so far and its total (None: unknown), as they arrive."""


def mirrored(url: str, base: str | None) -> str:
    """``url`` as the mirror at ``base`` serves it (``base/host/path?query``), or itself."""
    if not base:
        return url
    parts = urlsplit(url)
    query = f"?{parts.query}" if parts.query else ""
    return f"{base.rstrip('/')}/{parts.hostname}{parts.path}{query}"


def part_path(dest: Path) -> Path:
    """Where the download of ``dest`` gathers until it is whole."""
    return dest.with_name(dest.name + PART_SUFFIX)


class _Again(Exception):
    """The attempt brought bytes, then broke off: continue at once from where it stopped."""


@dataclass
class Fetcher:
    """Downloads over one HTTP session: each read within ``timeout_s``, attempts that bring
    nothing retried by ``policy`` (each wait told to ``on_retry``)."""

    session: requests.Session
    policy: RetryPolicy
    timeout_s: float
    on_retry: RetryObserver | None = None

    @classmethod
    def open(
        cls,
        agent: str,
        policy: RetryPolicy,
        timeout_s: float,
        on_retry: RetryObserver | None = None,
        debug_log: Callable[[str], None] | None = None,
    ) -> Fetcher:
        session = make_session(agent, debug_log)
        session.max_redirects = MAX_REDIRECTS
        return cls(session, policy, timeout_s, on_retry)

    def close(self) -> None:
        self.session.close()

    def fetch(self, url: str, limit: int) -> bytes:
        """The body of ``url`` (at most ``limit`` bytes, decompressed); DownloadError else."""
        shown = redact_url(url)

        def attempt() -> bytes:
            with Watchdog(math.inf, NO_DEADLINE) as dog:
                response = self.request(url, dog, {})
                with response:
                    self.check_status(response, shown)
                    try:
                        return read_capped(response.iter_content(CHUNK_BYTES), limit)
                    except TooLarge as exc:
                        raise DownloadError(f"{shown} answered with a document {exc}") from None
                    except requests.RequestException as exc:
                        raise self.broke(exc, shown) from None

        return self.policy.call(attempt, NO_DEADLINE, self.on_retry)[0]

    def download(
        self,
        url: str,
        dest: Path,
        pin: Pin,
        progress: Progress | None = None,
        limit: int | None = None,
    ) -> str:
        """``url`` saved as ``dest`` once it matches ``pin`` (see the module docstring); its
        SHA-256. A partial file left by an earlier attempt is continued. DownloadError when
        it cannot be had or is not the file pinned (the partial file then removed);
        BlockingIOError when another process is downloading it now."""
        dest.parent.mkdir(parents=True, exist_ok=True)
        part = part_path(dest)
        with hold_lock(part):  # the partial file itself: one download of it at a time
            try:
                digest = _Transfer(self, url, part, pin, progress, limit).run()
            except BaseException:
                with contextlib.suppress(OSError):
                    if part.stat().st_size == 0:  # nothing kept: no partial file left behind
                        part.unlink()
                raise
            _finish(part, dest, pin, digest, redact_url(url))
        record_verified(dest, digest)
        return digest

    def request(self, url: str, dog: Watchdog, headers: dict[str, str]) -> requests.Response:
        """A GET under ``dog``; a failure to connect said in a few words (DownloadError, with
        ``unreachable`` for a host that cannot be reached at all; else retryable)."""
        try:
            return watched_request(self.session, "GET", url, dog, self.timeout_s, headers=headers)
        except requests.TooManyRedirects:
            raise DownloadError(
                f"{redact_url(url)} redirected more than {MAX_REDIRECTS} times"
            ) from None
        except requests.RequestException as exc:
            reason = failure_reason(exc) or type(exc).__name__
            unreachable = is_unreachable(exc)  # the host's fault: named without the path
            where = urlsplit(redact_url(url)).netloc if unreachable else redact_url(url)
            error = DownloadError(f"cannot reach {where}: {reason}", unreachable=unreachable)
            if error.unreachable or isinstance(exc, requests.exceptions.InvalidURL):
                raise error from None
            raise Retryable(reason, lambda retries, late: error) from None

    @staticmethod
    def check_status(response: requests.Response, shown: str) -> None:
        status = response.status_code
        if status < 400:
            return
        error = DownloadError(f"HTTP {status} from {shown}")
        if status in RETRY_STATUSES:
            raise Retryable.for_status(status, response.headers, lambda retries, late: error)
        raise error

    @staticmethod
    def broke(exc: BaseException, shown: str) -> Retryable:
        reason = failure_reason(exc) or type(exc).__name__
        error = DownloadError(f"the download from {shown} broke off: {reason}")
        return Retryable(reason, lambda retries, late: error)


@dataclass
class _Transfer:
    """One file's download into its partial file, attempt after attempt."""

    fetcher: Fetcher
    url: str
    part: Path
    pin: Pin
    progress: Progress | None
    limit: int | None

    def __post_init__(self) -> None:
        self.shown = redact_url(self.url)
        self.total = self.pin.size
        self.have = 0
        self.digest = hashlib.sha256()

    def run(self) -> str:
        """The whole file in the partial file (or a failure no retry fixes); its SHA-256."""
        self._resume()
        while True:
            try:
                self.fetcher.policy.call(self._attempt, NO_DEADLINE, self.fetcher.on_retry)
                return self.digest.hexdigest()
            except _Again:
                continue

    def _resume(self) -> None:
        """Continue what an earlier attempt left (a partial larger than the pin: from 0)."""
        try:
            size = self.part.stat().st_size
        except FileNotFoundError:
            return
        if self.pin.size is not None and size > self.pin.size:
            self._restart()
            return
        self.have = size
        with open_regular(self.part, follow_symlinks=False) as handle:
            while chunk := handle.read(HASH_CHUNK_BYTES):
                self.digest.update(chunk)
        self._tell()

    def _restart(self) -> None:
        """From the first byte again: the partial file emptied, the hash begun anew."""
        fd = open_appending(self.part)
        try:
            os.ftruncate(fd, 0)
        finally:
            os.close(fd)
        self.have, self.digest = 0, hashlib.sha256()

    def _attempt(self) -> None:
        if self.total is not None and self.have == self.total:
            return
        headers = {"Accept-Encoding": "identity"}
        if self.have:
            headers["Range"] = f"bytes={self.have}-"
        with Watchdog(math.inf, NO_DEADLINE) as dog:
            response = self.fetcher.request(self.url, dog, headers)
            with response:
                if response.status_code == 416 and self.have:  # nothing after what we have
                    self._unsatisfiable(response)
                    return
                self.fetcher.check_status(response, self.shown)
                self._start(response)
                self._receive(response)

    def _unsatisfiable(self, response: requests.Response) -> None:
        """416 to our Range: the partial is whole if the server's total says so; else the
        file changed: start again."""
        found = _CONTENT_RANGE_TOTAL.fullmatch(response.headers.get("Content-Range", ""))
        if found and int(found.group(1)) == self.have:
            self.total = self.have
            return
        self._restart()
        raise _Again

    def _start(self, response: requests.Response) -> None:
        """Where the answer's bytes go: after the partial (206 at our offset), else from the
        first byte (a 200: Range ignored; a 206 of another range: asked again without it)."""
        if response.status_code not in (200, 206):
            raise DownloadError(f"HTTP {response.status_code} from {self.shown}, not the file")
        if response.status_code == 206:
            found = _CONTENT_RANGE.fullmatch(response.headers.get("Content-Range", ""))
            if found is None or int(found.group(1)) != self.have:
                self._restart()
                raise _Again
            if found.group(3) != "*":
                self._expect(int(found.group(3)))
            return
        if self.have:
            self._restart()
        length = response.headers.get("Content-Length", "")
        if length.isascii() and length.isdigit() and len(length) <= 20:
            self._expect(int(length))

    def _expect(self, total: int) -> None:
        """The size the server says the file has: the pinned one, within the limit."""
        if self.pin.size is not None and total != self.pin.size:
            self._fail(f"{self.shown} serves {total:,} bytes, not the {self.pin.size:,} pinned")
        if self.limit is not None and total > self.limit:
            self._fail(f"{self.shown} serves {total:,} bytes, more than {self.limit:,}")
        self.total = total
        self._tell()

    def _receive(self, response: requests.Response) -> None:
        """The body appended to the partial file, hashed and counted as it comes."""
        at_start = self.have
        with os.fdopen(open_appending(self.part), "ab") as out:
            try:
                for chunk in response.raw.stream(CHUNK_BYTES, decode_content=False):
                    self._check_room(len(chunk))
                    self._write(out, chunk)
            except (requests.RequestException, TransferError, ConnectionError) as exc:
                if self.have > at_start:
                    raise _Again from None
                raise Fetcher.broke(exc, self.shown) from None
        if self.total is not None and self.have < self.total:  # a close before the end
            if self.have > at_start:
                raise _Again
            raise Fetcher.broke(ConnectionResetError(), self.shown)
        self.total = self.have

    def _write(self, out: BinaryIO, chunk: bytes) -> None:
        try:
            out.write(chunk)
        except OSError as exc:
            raise DownloadError(f"cannot write {self.part}: {exc.strerror or exc}") from None
        self.digest.update(chunk)
        self.have += len(chunk)
        self._tell()

    def _check_room(self, more: int) -> None:
        bound = self.pin.size if self.pin.size is not None else self.limit
        if bound is not None and self.have + more > bound:
            what = "pinned" if self.pin.size is not None else "allowed"
            self._fail(f"{self.shown} sent more than the {bound:,} bytes {what}")

    def _tell(self) -> None:
        if self.progress is not None:
            self.progress(self.have, self.total)

    def _fail(self, message: str) -> None:
        """A file that is not the one pinned: its partial removed, DownloadError."""
        self.part.unlink(missing_ok=True)
        raise DownloadError(f"{message}; the partial download was removed")


_CONTENT_RANGE_TOTAL = re.compile(r"bytes \*/(\d{1,20})")


def _finish(part: Path, dest: Path, pin: Pin, digest: str, shown: str) -> None:
    """The whole partial file (its SHA-256 ``digest``) checked against ``pin`` and moved to
    ``dest`` in one step; a mismatch removes it (DownloadError)."""
    size = part.stat().st_size
    wrong = None
    if pin.size is not None and size != pin.size:
        wrong = f"{size:,} bytes, not the {pin.size:,} pinned"
    elif pin.sha256 and digest != pin.sha256:
        wrong = f"SHA-256 {digest}, not the {pin.sha256} pinned"
    if wrong is not None:
        part.unlink(missing_ok=True)
        raise DownloadError(
            f"the file from {shown} is not the one pinned ({wrong}); the partial download "
            "was removed"
        )
    with part.open("rb") as handle:
        os.fsync(handle.fileno())
    os.replace(part, dest)
