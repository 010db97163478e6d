"""The cache's file: entries by key in SQLite (the standard library's ``sqlite3``), in WAL mode.

WAL keeps the file whole whatever happens: each entry is written in a transaction of its own,
so a process killed mid-write leaves the entries before it (the next opener rolls the log
forward or drops the unfinished transaction); readers never wait for a writer, and two
processes (two evals on one home) share the file under SQLite's own locks. An eval's threads
share one connection behind a lock.

The cache is a convenience, never a reason to fail: a file that is not a database, or
corrupt, or locked longer than ``BUSY_TIMEOUT_S``, or a disk that refuses a write, is one
warning line and the run goes on without the cache (``react-cli cache clear`` starts afresh).
Entries beyond ``max_bytes`` go least recently used first.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from react_cli.infra.untrusted import not_regular

FILE_NAME = "react-cli.sqlite3"
SCHEMA_VERSION = 1
BUSY_TIMEOUT_S = 2.0
"""How long a write waits for another process's (WAL writes take milliseconds)."""
MAX_VALUE_BYTES = 16 << 20
"""An entry larger than this is not one react-cli wrote: never read."""
CHECK_EVERY = 64
"""Writes between two checks of the cache's size."""
KEEP_AFTER_EVICTION = 0.9
"""Of ``max_bytes``, what is kept when the least recently used entries go."""

Warn = Callable[[str], None]


@dataclass(frozen=True)
class CacheStats:
    """What the cache holds: entries and their bytes, by kind, and the file's size."""

    path: Path
    entries: dict[str, int]
    bytes: dict[str, int]
    file_bytes: int
    max_bytes: int


class CacheUnusable(Exception):
    """The cache file cannot be used (the message says why, in a few words)."""


class CacheStore:
    """Entries by key in one SQLite file; every failure disables the store with one warning
    (``warn``), and it then answers every lookup as a miss."""

    def __init__(
        self,
        path: Path,
        max_bytes: int,
        warn: Warn,
        *,
        busy_timeout_s: float = BUSY_TIMEOUT_S,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """``clock`` stamps each entry's last use (the order eviction follows)."""
        self.path = path
        self._clock = clock
        self.max_bytes = max_bytes
        self._warn = warn
        self._lock = threading.Lock()
        self._writes = 0
        self._broken: str | None = None  # why it cannot be used, once it cannot
        self._conn: sqlite3.Connection | None = None
        try:
            self._conn = _connect(path, busy_timeout_s)
        except (sqlite3.Error, OSError, CacheUnusable) as exc:
            self._give_up(exc)

    @property
    def usable(self) -> bool:
        return self._conn is not None

    def get(self, key: str) -> bytes | None:
        """The value stored under ``key`` (marked as used now), or None."""
        with self._using() as conn:
            if conn is None:
                return None
            row = conn.execute(
                "SELECT value FROM entries WHERE key = ? AND size <= ?", (key, MAX_VALUE_BYTES)
            ).fetchone()
            if row is None or not isinstance(row[0], bytes):
                return None
            conn.execute("UPDATE entries SET used = ? WHERE key = ?", (self._clock(), key))
            return row[0]
        return None

    def put(self, key: str, kind: str, value: bytes) -> None:
        """Store ``value`` under ``key``, in a transaction of its own."""
        if len(value) > MAX_VALUE_BYTES:
            return
        with self._using() as conn:
            if conn is None:
                return
            conn.execute(  # one statement: one transaction
                "INSERT OR REPLACE INTO entries (key, kind, value, size, used) "
                "VALUES (?, ?, ?, ?, ?)",
                (key, kind, value, len(value), self._clock()),
            )
            self._writes += 1
            if self._writes % CHECK_EVERY == 0 or len(value) > self.max_bytes // 16:
                _evict(conn, self.max_bytes)

    def forget(self, key: str) -> None:
        """Drop an entry that turned out not to be a valid one."""
        with self._using() as conn:
            if conn is not None:
                conn.execute("DELETE FROM entries WHERE key = ?", (key,))

    def stats(self) -> CacheStats:
        """What the cache holds; CacheUnusable when the file cannot be read."""
        entries: dict[str, int] = {}
        sizes: dict[str, int] = {}
        with self._using() as conn:
            if conn is not None:
                query = "SELECT kind, COUNT(*), COALESCE(SUM(size), 0) FROM entries GROUP BY kind"
                for kind, count, size in conn.execute(query):
                    entries[str(kind)], sizes[str(kind)] = int(count), int(size)
        if self._conn is None:
            raise CacheUnusable(self._broken or "closed")
        files = [self.path, *(self.path.with_name(self.path.name + s) for s in ("-wal", "-shm"))]
        file_bytes = sum(p.stat().st_size for p in files if p.is_file())
        return CacheStats(self.path, entries, sizes, file_bytes, self.max_bytes)

    def evict(self) -> None:
        """Drop least recently used entries until the cache fits ``max_bytes``."""
        with self._using() as conn:
            if conn is not None:
                _evict(conn, self.max_bytes)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    @contextmanager
    def _using(self) -> Iterator[sqlite3.Connection | None]:
        """The connection, under the lock (None once unusable); a failure inside disables
        the store with one warning."""
        with self._lock:
            try:
                yield self._conn
            except (sqlite3.Error, OSError) as exc:
                self._give_up(exc)

    def _give_up(self, exc: BaseException) -> None:
        """Warn once, close, and answer nothing from now on."""
        reason = _reason(exc)
        if self._broken is None:
            self._broken = reason
            self._warn(
                f"the cache {self.path} cannot be used ({reason}); running without it "
                "('react-cli cache clear' starts it afresh)"
            )
        if self._conn is not None:
            with suppress(sqlite3.Error):
                self._conn.close()
            self._conn = None


@contextmanager
def _transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """Statements that land together or not at all (the connection autocommits otherwise)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _connect(path: Path, busy_timeout_s: float) -> sqlite3.Connection:
    """The cache's connection, its tables made (a new file: incremental vacuum, WAL)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    kind = not_regular(path, follow_symlinks=False)
    if kind is not None:  # a FIFO would block, a link would write elsewhere
        raise CacheUnusable(f"it is {kind}, not a file")
    conn = sqlite3.connect(
        str(path), timeout=busy_timeout_s, isolation_level=None, check_same_thread=False
    )
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
        conn.execute("PRAGMA auto_vacuum = INCREMENTAL")  # takes effect on a new file only
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()
        if not mode or str(mode[0]).lower() != "wal":
            raise sqlite3.OperationalError(f"journal mode {mode[0] if mode else None}, not WAL")
        conn.execute("PRAGMA synchronous = NORMAL")  # WAL: a crash loses no committed entry
        with _transaction(conn):
            conn.execute(
                "CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY, kind TEXT NOT NULL, "
                "value BLOB NOT NULL, size INTEGER NOT NULL, used REAL NOT NULL)"
            )
            conn.execute("CREATE INDEX IF NOT EXISTS entries_used ON entries (used)")
            conn.execute("CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT)")
            conn.execute(
                "INSERT OR IGNORE INTO meta (name, value) VALUES ('schema', ?)",
                (str(SCHEMA_VERSION),),
            )
        version = conn.execute("SELECT value FROM meta WHERE name = 'schema'").fetchone()
        if version is None or version[0] != str(SCHEMA_VERSION):
            raise sqlite3.DatabaseError(f"schema {version[0] if version else None}, not ours")
    except BaseException:
        conn.close()
        raise
    return conn


def _evict(conn: sqlite3.Connection, max_bytes: int) -> None:
    """Drop least recently used entries until at most ``KEEP_AFTER_EVICTION`` of
    ``max_bytes`` is held (when more than ``max_bytes`` is)."""
    total = conn.execute("SELECT COALESCE(SUM(size), 0) FROM entries").fetchone()[0]
    if total <= max_bytes:
        return
    excess = total - int(max_bytes * KEEP_AFTER_EVICTION)
    doomed, freed = [], 0
    for key, size in conn.execute("SELECT key, size FROM entries ORDER BY used"):
        if freed >= excess:
            break
        doomed.append((key,))
        freed += int(size)
    with _transaction(conn):
        conn.executemany("DELETE FROM entries WHERE key = ?", doomed)
    conn.execute("PRAGMA incremental_vacuum")


def _reason(exc: BaseException) -> str:
    """Why the file cannot be used, in a few words."""
    if isinstance(exc, CacheUnusable):
        return str(exc)
    if isinstance(exc, OSError):
        return exc.strerror or type(exc).__name__
    text = " ".join(str(exc).split())[:120]
    return text or type(exc).__name__


def clear(path: Path) -> int:
    """Delete the cache's files (whatever they hold, a corrupt file too); the bytes freed."""
    freed = 0
    for name in (path.name, path.name + "-wal", path.name + "-shm"):
        file = path.with_name(name)
        try:
            size = file.lstat().st_size
            file.unlink()
        except FileNotFoundError:
            continue
        freed += size
    return freed
