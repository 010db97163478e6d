"""The cache's file under an eval's threads, two processes at once, and processes killed while
they write: every entry read back is whole, the file passes SQLite's integrity check."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from react_cli.cache.store import CacheStore

WRITER = """
import sys
from pathlib import Path
from react_cli.cache.store import CacheStore
# What is tested is a kill mid-write, not a wait for the lock: however starved the machine
# keeps the two writers, neither gives up waiting for the other (a warning would go to stderr).
warn = lambda said: print(said, file=sys.stderr)
store = CacheStore(Path(sys.argv[1]), 1 << 30, warn, busy_timeout_s=60)
name, number = sys.argv[2], 0
while True:  # as fast as it can, until it is killed in the middle of a write
    value = ('{"key": "%s%d", "pad": "%s"}' % (name, number, "x" * 20000)).encode()
    store.put(f"{name}{number}", "model", value)
    number += 1
    print(number, flush=True)
"""


def entries(path: Path) -> dict[str, bytes]:
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        return dict(conn.execute("SELECT key, value FROM entries"))


def test_threads_and_a_second_connection_share_the_file(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite3"
    warnings: list[str] = []
    stores = [CacheStore(path, 1 << 30, warnings.append) for _ in range(2)]  # two "processes"
    missing: list[str] = []

    def work(worker: int) -> None:
        store = stores[worker % 2]
        for number in range(25):
            key = f"w{worker}-{number}"
            store.put(key, "wiki", json.dumps({"key": key}).encode())
            other = f"w{(worker + 1) % 8}-{number // 2}"
            seen = stores[(worker + 1) % 2].get(key)
            if seen is None:
                missing.append(key)
            stores[0].get(other)  # another thread's, written or not yet: never an error

    threads = [threading.Thread(target=work, args=(worker,)) for worker in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert warnings == [] and missing == []
    found = entries(path)
    assert len(found) == 200
    assert all(json.loads(value)["key"] == key for key, value in found.items())


@pytest.mark.timeout(60)
def test_processes_killed_mid_write_leave_a_whole_cache(tmp_path: Path) -> None:
    """Two processes write at once as fast as they can; both are killed (SIGKILL: no
    clean-up) in the middle; what the file holds is whole, and the cache goes on."""
    path = tmp_path / "cache.sqlite3"
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), name],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("a", "b")
    ]
    try:
        for writer in writers:  # until each has written 40 entries (one at a time)
            assert writer.stdout is not None
            while int(writer.stdout.readline() or 0) < 40:
                assert writer.poll() is None, writer.stderr.read() if writer.stderr else ""
        for writer in writers:
            writer.send_signal(signal.SIGKILL)
    finally:
        for writer in writers:
            writer.kill()
            writer.wait(10)
    found = entries(path)  # the log of the killed writers rolled forward or dropped
    assert sum(key.startswith("a") for key in found) >= 40
    assert sum(key.startswith("b") for key in found) >= 40
    assert all(json.loads(value)["key"] == key for key, value in found.items())
    warnings: list[str] = []
    store = CacheStore(path, 1 << 30, warnings.append)
    store.put("after", "model", b"{}")
    assert store.get("after") == b"{}" and store.get("a0") is not None and warnings == []
