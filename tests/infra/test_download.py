"""The downloader (``infra.download``) against a local file server with every fault a real one
has: a file cut short, other bytes, slow, 404, a redirect, a connection dropped mid-file, Range
ignored or answered with another range, a host that does not resolve, a closed port."""

from __future__ import annotations

import hashlib
import os
import socket
from pathlib import Path

import pytest
from file_server import Fault, FileServer
from lookups import Lookups

from react_cli.core.errors import DownloadError
from react_cli.infra.download import Fetcher, mirrored, part_path
from react_cli.infra.files import hold_lock
from react_cli.infra.pins import Pin, check_file, stamp_path, verified, verify
from react_cli.infra.retry import RetryPolicy

DATA = bytes(range(256)) * 1024  # 256 KiB: several chunks
PIN = Pin(len(DATA), hashlib.sha256(DATA).hexdigest())
QUICK = RetryPolicy(retries=2, backoff_factor=0.0, backoff_jitter_s=0.0)
PATH = "/datasets/file.json"


def fetcher(**kwargs: object) -> Fetcher:
    return Fetcher.open("react-cli-test", QUICK, 2.0, **kwargs)  # type: ignore[arg-type]


@pytest.fixture
def server() -> FileServer:
    with FileServer({PATH: DATA, "/small.txt": b"hello"}) as running:
        yield running  # type: ignore[misc]


def get(server: FileServer, dest: Path, pin: Pin = PIN, **kwargs: object) -> str:
    return fetcher().download(server.url + PATH, dest, pin, **kwargs)  # type: ignore[arg-type]


def test_a_whole_file_arrives_checked_and_moved_into_place(
    server: FileServer, tmp_path: Path
) -> None:
    seen: list[tuple[int, int | None]] = []
    dest = tmp_path / "data" / "file.json"
    digest = get(server, dest, progress=lambda done, total: seen.append((done, total)))
    assert digest == PIN.sha256 and dest.read_bytes() == DATA
    assert sorted(os.listdir(dest.parent)) == [".file.json.verified", "file.json"]
    assert verified(dest, PIN) and verify(dest, PIN) is None
    assert seen[-1] == (len(DATA), len(DATA)) and len(seen) > 2
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)
    assert server.requests[0].headers["accept-encoding"] == "identity"
    assert "range" not in server.requests[0].headers


def test_a_connection_dropped_mid_file_is_resumed_with_range(
    server: FileServer, tmp_path: Path
) -> None:
    server.faults[PATH] = Fault(drop_after=100_000, times=2)  # twice: it resumes twice
    waits: list[object] = []
    dest = tmp_path / "file.json"
    Fetcher.open("t", QUICK, 2.0, on_retry=waits.append).download(server.url + PATH, dest, PIN)
    assert dest.read_bytes() == DATA
    ranges = [request.headers.get("range") for request in server.requests]
    assert ranges == [None, "bytes=100000-", "bytes=200000-"]
    assert waits == []  # each attempt brought bytes: continued at once, no retry spent


def test_a_partial_file_is_continued(server: FileServer, tmp_path: Path) -> None:
    dest = tmp_path / "file.json"
    part_path(dest).write_bytes(DATA[:5000])
    seen: list[tuple[int, int | None]] = []
    get(server, dest, progress=lambda done, total: seen.append((done, total)))
    assert dest.read_bytes() == DATA
    assert server.requests[0].headers["range"] == "bytes=5000-"
    assert seen[0] == (5000, len(DATA))  # the bar starts where the partial file ends


def test_a_server_that_ignores_range_restarts_cleanly(server: FileServer, tmp_path: Path) -> None:
    dest = tmp_path / "file.json"
    part_path(dest).write_bytes(DATA[:5000])
    server.faults[PATH] = Fault(ignore_range=True)
    get(server, dest)
    assert dest.read_bytes() == DATA  # not the partial's 5000 bytes twice
    assert server.requests[0].headers["range"] == "bytes=5000-" and len(server.requests) == 1


def test_a_partial_file_of_other_bytes_fails_the_checksum_and_is_removed(
    server: FileServer, tmp_path: Path
) -> None:
    dest = tmp_path / "file.json"
    part_path(dest).write_bytes(b"x" * 5000)  # an earlier download of another file
    with pytest.raises(DownloadError, match=r"not the one pinned .SHA-256 [0-9a-f]{64}, not the"):
        get(server, dest)
    assert not dest.exists() and not part_path(dest).exists()


def test_a_partial_file_already_whole_is_checked_and_moved(
    server: FileServer, tmp_path: Path
) -> None:
    """Its pinned size: no request; its size unknown: a Range past the end answered 416."""
    dest = tmp_path / "file.json"
    part_path(dest).write_bytes(DATA)
    get(server, dest)
    assert dest.read_bytes() == DATA and server.requests == []
    part_path(dest).write_bytes(DATA)
    get(server, dest, Pin(None, PIN.sha256))
    assert dest.read_bytes() == DATA
    assert server.requests[0].headers["range"] == f"bytes={len(DATA)}-"


def test_corrupt_bytes_are_an_error_and_the_partial_file_is_removed(
    server: FileServer, tmp_path: Path
) -> None:
    server.faults[PATH] = Fault(body=DATA[:-1] + b"!")
    dest = tmp_path / "file.json"
    with pytest.raises(DownloadError) as caught:
        get(server, dest)
    message = str(caught.value)
    assert f"{server.url}{PATH} is not the one pinned" in message
    assert PIN.sha256 in message and "partial download was removed" in message
    assert not dest.exists() and not part_path(dest).exists()


def test_a_file_cut_short_on_the_server_is_refused_before_it_is_kept(
    server: FileServer, tmp_path: Path
) -> None:
    server.faults[PATH] = Fault(body=DATA[:1000])
    dest = tmp_path / "file.json"
    with pytest.raises(DownloadError, match="serves 1,000 bytes, not the 262,144 pinned"):
        get(server, dest)
    assert not part_path(dest).exists()


def test_more_bytes_than_pinned_are_refused(server: FileServer, tmp_path: Path) -> None:
    dest = tmp_path / "file.json"
    with pytest.raises(DownloadError, match="serves 262,144 bytes, not the 1,000 pinned"):
        get(server, dest, Pin(1000))
    with pytest.raises(DownloadError, match="more than 1,000"):
        get(server, dest, Pin(), limit=1000)
    assert not part_path(dest).exists() and not dest.exists()


def test_a_size_pin_checks_the_size_only(server: FileServer, tmp_path: Path) -> None:
    dest = tmp_path / "file.json"
    digest = get(server, dest, Pin(len(DATA)))
    assert digest == PIN.sha256 and check_file(dest, Pin(len(DATA))) is None
    assert check_file(dest, Pin(5)) == "262,144 bytes, not the 5 pinned"
    assert "not the 00" in (check_file(dest, Pin(None, "00" * 32)) or "")


def test_404_is_an_error_leaving_nothing(server: FileServer, tmp_path: Path) -> None:
    dest = tmp_path / "missing.json"
    with pytest.raises(DownloadError, match=r"HTTP 404 from http://127\.0\.0\.1:\d+/nope"):
        fetcher().download(server.url + "/nope", dest, PIN)
    assert os.listdir(tmp_path) == []
    assert len(server.requests) == 1  # no retry of a 404


def test_5xx_is_retried_then_succeeds(server: FileServer, tmp_path: Path) -> None:
    server.faults[PATH] = Fault(status=503, times=2)
    get(server, tmp_path / "file.json")
    assert len(server.requests) == 3


def test_a_redirect_is_followed(server: FileServer, tmp_path: Path) -> None:
    server.faults["/old.json"] = Fault(location=PATH)
    dest = tmp_path / "file.json"
    fetcher().download(server.url + "/old.json", dest, PIN)
    assert dest.read_bytes() == DATA and server.paths() == ["/old.json", PATH]


def test_endless_redirects_stop(server: FileServer, tmp_path: Path) -> None:
    server.faults["/loop"] = Fault(location="/loop")
    with pytest.raises(DownloadError, match="redirected more than 5 times"):
        fetcher().download(server.url + "/loop", tmp_path / "x", PIN)
    assert len(server.requests) == 6


def test_a_slow_server_is_waited_for_with_progress(server: FileServer, tmp_path: Path) -> None:
    server.faults[PATH] = Fault(delay_s=0.005, chunk=16_384)
    seen: list[int] = []
    get(server, tmp_path / "file.json", progress=lambda done, total: seen.append(done))
    assert len(seen) >= len(DATA) // (1 << 16)  # told as it came, chunk after chunk


def test_a_refused_connection_fails_at_once_as_unreachable(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    waits: list[object] = []
    with pytest.raises(DownloadError) as caught:
        Fetcher.open("t", QUICK, 2.0, on_retry=waits.append).download(
            f"http://127.0.0.1:{port}/x", tmp_path / "x", PIN
        )
    assert caught.value.unreachable and "connection refused" in str(caught.value)
    assert waits == [] and os.listdir(tmp_path) == []


def test_a_name_under_invalid_fails_at_once_without_asking_dns(tmp_path: Path) -> None:
    """RFC 6761 reserves ``.invalid`` for names that never resolve: no resolver is asked."""
    asked = Lookups.start()
    with pytest.raises(DownloadError) as caught:
        fetcher().fetch("http://mirror.react-cli-test.invalid/catalog", 1000)
    assert caught.value.unreachable
    assert str(caught.value) == (
        "cannot reach mirror.react-cli-test.invalid: cannot resolve the host name"
    )
    assert asked == []


def test_a_download_under_way_elsewhere_is_not_joined(server: FileServer, tmp_path: Path) -> None:
    dest = tmp_path / "file.json"
    with hold_lock(part_path(dest)), pytest.raises(BlockingIOError):
        get(server, dest)


def test_a_link_planted_as_the_partial_file_is_never_followed(
    server: FileServer, tmp_path: Path
) -> None:
    victim = tmp_path / "victim"
    victim.write_bytes(b"keep")
    dest = tmp_path / "file.json"
    part_path(dest).symlink_to(victim)
    with pytest.raises(OSError):
        get(server, dest)
    assert victim.read_bytes() == b"keep"


def test_a_stamp_is_kept_until_the_file_changes(tmp_path: Path) -> None:
    path = tmp_path / "file.json"
    path.write_bytes(DATA)
    assert not verified(path, PIN)
    assert verify(path, PIN) is None and verified(path, PIN)  # checked once, remembered
    assert not verified(path, Pin(len(DATA), "0" * 64))  # another pin: checked again
    path.write_bytes(DATA[:-1] + b"!")  # the file changed: its stamp no longer holds
    assert not verified(path, PIN) and "not the" in (verify(path, PIN) or "")
    for planted in ("[1, 2]", "{", '{"size": "x"}', "\u0000" * 5000):
        stamp_path(path).write_text(planted)
        assert not verified(path, PIN)


def test_fetch_reads_a_small_document_within_its_limit(server: FileServer) -> None:
    assert fetcher().fetch(server.url + "/small.txt", 5) == b"hello"
    with pytest.raises(DownloadError, match="a document larger than 4 bytes"):
        fetcher().fetch(server.url + "/small.txt", 4)


def test_mirrored_urls_keep_host_path_and_query() -> None:
    url = "https://library.kiwix.org/catalog/v2/entries?name=x&count=-1"
    assert mirrored(url, None) == url
    assert mirrored(url, "http://127.0.0.1:9/m/") == (
        "http://127.0.0.1:9/m/library.kiwix.org/catalog/v2/entries?name=x&count=-1"
    )
