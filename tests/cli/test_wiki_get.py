"""``react-cli wiki get NAME`` and ``wiki list`` through the CLI against a local mirror of Kiwix's
catalog and download server (``REACT_CLI_DATA_URL``) serving the real Ray Charles archive;
then ``--wiki zim:NAME`` answering from it."""

from __future__ import annotations

import hashlib
import json

import pytest
from fake_openai import FakeOpenAI, scripted
from file_server import Fault, FileServer
from inproc import HANG_S, Runner, one_error_line
from kiwix_fakes import CATALOG_PATH, DOWNLOADS, MIRRORED, RAY, Entry, feed, kiwix_files

RAY_BYTES = RAY.read_bytes()
FILE = "wikipedia_en_ray_charles_2015-06.zim"
NAME = "wikipedia_en_ray_charles"
RAY_ENTRY = Entry(NAME, "", FILE, len(RAY_BYTES))


@pytest.fixture
def mirror() -> FileServer:
    with FileServer(kiwix_files(RAY_ENTRY)) as server:
        yield server  # type: ignore[misc]


def env_of(mirror: FileServer) -> dict[str, str]:
    return {"REACT_CLI_DATA_URL": mirror.url}


def test_get_reads_the_catalog_checks_the_metalink_sha256_and_installs(
    cli: Runner, mirror: FileServer
) -> None:
    result = cli(["wiki", "get", NAME], **env_of(mirror))
    assert result.code == 0, result.stderr
    path = cli.home / "zim" / FILE
    assert result.stdout == f"{path}\n" and path.read_bytes() == RAY_BYTES
    assert result.stderr == (
        f"{NAME} (2015-06-02): 1.5 MB, SHA-256 checked; use --wiki zim:{NAME}\n"
    )
    assert mirror.paths() == [
        f"{CATALOG_PATH}?name={NAME}&count=-1",
        f"{MIRRORED}/{FILE}.meta4",
        f"{MIRRORED}/{FILE}",
    ]
    again = cli(["wiki", "get", NAME], **env_of(mirror))
    assert again.code == 0 and "installed, SHA-256 checked" in again.stderr
    assert mirror.paths()[-1].endswith(".meta4")  # the catalog asked again, the archive not


def test_then_zim_name_answers_from_the_archive(cli: Runner, mirror: FileServer) -> None:
    assert cli(["wiki", "get", NAME], **env_of(mirror)).code == 0
    searched = cli(["wiki", "search", "--wiki", f"zim:{NAME}", "Ray Charles"])
    assert searched.code == 0 and searched.stdout.startswith("Ray Charles Robinson (September 23")
    steps = (" I search.\nAction 1: Search[Ray Charles]", " Found.\nAction 2: Finish[1930]")
    with FakeOpenAI(scripted(*steps)) as llm:
        args = ["ask", "When was Ray Charles born?", "--wiki", f"zim:{NAME}", "--no-trace"]
        result = cli(args, OPENAI_BASE_URL=llm.url, REACT_CLI_MODEL="m")
    assert result.code == 0 and result.stdout == "1930\n", result.stderr
    body = llm.requests[1].json or {}
    observation = json.dumps(body)
    assert "Ray Charles Robinson (September 23, 1930" in observation


def test_list_shows_what_the_archives_say(cli: Runner, mirror: FileServer) -> None:
    empty = cli(["wiki", "list"])
    assert empty.code == 0 and "no archives in" in empty.stdout
    assert cli(["wiki", "get", NAME], **env_of(mirror)).code == 0
    result = cli(["wiki", "list"])
    assert result.code == 0, result.stderr
    header, row = result.stdout.splitlines()[:2]
    assert header.split() == ["name", "language", "date", "articles", "size", "checked"]
    assert row.split() == [NAME, "eng", "2015-06-02", "85", "1.5", "MB", "sha256"]
    listed = json.loads(cli(["wiki", "list", "--json"]).stdout)["archives"][0]
    assert (
        listed["name"] == NAME and listed["month"] == "2015-06" and listed["size"] == len(RAY_BYTES)
    )
    assert listed["sha256"] == hashlib.sha256(RAY_BYTES).hexdigest()


def test_a_zim_link_with_a_sha256_file_beside_it(cli: Runner, mirror: FileServer) -> None:
    entry = Entry(NAME, "", FILE, len(RAY_BYTES), link=f"{DOWNLOADS}/{FILE}")
    mirror.files[CATALOG_PATH] = feed(entry)
    digest = hashlib.sha256(RAY_BYTES).hexdigest()
    mirror.files[f"{MIRRORED}/{FILE}.sha256"] = f"{digest}  {FILE}\n".encode()
    result = cli(["wiki", "get", NAME], **env_of(mirror))
    assert result.code == 0 and "SHA-256 checked" in result.stderr, result.stderr
    assert f"{MIRRORED}/{FILE}.sha256" in mirror.paths()


def test_no_checksum_anywhere_pins_the_catalogs_size(cli: Runner, mirror: FileServer) -> None:
    mirror.files[CATALOG_PATH] = feed(
        Entry(NAME, "", FILE, len(RAY_BYTES), link=f"{DOWNLOADS}/{FILE}")
    )
    result = cli(["wiki", "get", NAME], **env_of(mirror))
    assert result.code == 0 and "size checked (no checksum is pinned)" in result.stderr
    mirror.files[CATALOG_PATH] = feed(
        Entry("other", "", "other.zim", None, link=f"{DOWNLOADS}/o.zim")
    )
    refused = cli(["wiki", "get", "other"], **env_of(mirror))
    assert refused.code == 1
    assert (
        one_error_line(refused.stderr) == "Error: the catalog gives no size or checksum for other"
    )


def test_an_archive_with_other_bytes_is_removed(cli: Runner, mirror: FileServer) -> None:
    mirror.faults[f"{MIRRORED}/{FILE}"] = Fault(body=RAY_BYTES[:-1] + b"\0")
    result = cli(["wiki", "get", NAME], **env_of(mirror))
    assert result.code == 1
    line = one_error_line(result.stderr)
    assert "is not the one pinned (SHA-256" in line and "partial download was removed" in line
    assert f"fetch {DOWNLOADS}/{FILE} by hand and put it at {cli.home / 'zim' / FILE}" in line
    assert list((cli.home / "zim").iterdir()) == []


def test_a_dropped_download_resumes_and_a_redirect_is_followed(
    cli: Runner, mirror: FileServer
) -> None:
    """download.kiwix.org sends each download on to a mirror with a redirect."""
    mirror.files["/ftp/mirror/" + FILE] = RAY_BYTES
    mirror.faults[f"{MIRRORED}/{FILE}"] = Fault(location="/ftp/mirror/" + FILE)
    mirror.faults["/ftp/mirror/" + FILE] = Fault(drop_after=500_000, times=1)
    result = cli(["wiki", "get", NAME], **env_of(mirror))
    assert result.code == 0, result.stderr
    assert (cli.home / "zim" / FILE).read_bytes() == RAY_BYTES
    ranges = [r.headers.get("range") for r in mirror.requests if r.path.endswith(FILE)]
    assert ranges == [None, None, "bytes=500000-", "bytes=500000-"]  # each via the redirect


def test_offline_the_error_says_where_archives_come_from_at_once(cli: Runner) -> None:
    result = cli(["wiki", "get", NAME], REACT_CLI_DATA_URL="http://kiwix.react-cli-test.invalid")
    assert result.code == 1 and cli.elapsed_s < HANG_S
    assert one_error_line(result.stderr) == (
        "Error: cannot reach kiwix.react-cli-test.invalid: cannot resolve the host name; "
        "offline or behind a firewall? Kiwix's catalog (https://library.kiwix.org/catalog/v2/"
        "entries) could not be read: download the archive by hand from "
        f"https://download.kiwix.org/zim/ into {cli.home / 'zim'} (--wiki zim:NAME finds it "
        "there), or set REACT_CLI_DATA_URL to a mirror"
    )


def test_a_catalog_answer_too_large_or_hostile_is_refused(cli: Runner, mirror: FileServer) -> None:
    mirror.files[CATALOG_PATH] = b"<feed>" + b" " * (17 << 20)
    result = cli(["wiki", "get", NAME], **env_of(mirror))
    assert result.code == 1 and "answered with a document larger than" in result.stderr
    mirror.files[CATALOG_PATH] = b'<!DOCTYPE x [<!ENTITY a SYSTEM "file:///etc/passwd">]><x/>'
    result = cli(["wiki", "get", NAME], **env_of(mirror))
    assert "holds a document type declaration: refused" in one_error_line(result.stderr)


def test_a_name_in_several_flavours_is_asked_for_one(cli: Runner, mirror: FileServer) -> None:
    flavours = [
        Entry("wikipedia_en_100", f, f"wikipedia_en_100_{f}_2026-01.zim", 9)
        for f in ("nopic", "mini")
    ]
    mirror.files[CATALOG_PATH] = feed(*flavours)
    result = cli(["wiki", "get", "wikipedia_en_100"], **env_of(mirror))
    assert result.code == 2
    assert one_error_line(result.stderr) == (
        "Error: wikipedia_en_100 comes in 2 flavours: wikipedia_en_100_nopic (9 bytes), "
        "wikipedia_en_100_mini (9 bytes); name one"
    )


def test_a_zim_name_not_installed_says_how_to_get_it(cli: Runner) -> None:
    result = cli(["wiki", "search", "--wiki", "zim:wikipedia_en_100_nopic", "x"])
    assert result.code == 2
    line = one_error_line(result.stderr)
    assert f"nor an archive named wikipedia_en_100_nopic in {cli.home / 'zim'}" in line
    assert "'react-cli wiki get wikipedia_en_100_nopic' downloads it" in line


def test_the_newest_archive_of_a_name_is_used(cli: Runner) -> None:
    folder = cli.home / "zim"
    folder.mkdir()
    (folder / "old_2014-01.zim").write_bytes(b"not an archive")
    (folder / "old_2015-06.zim").write_bytes(RAY_BYTES)
    result = cli(["wiki", "search", "--wiki", "zim:old", "Ray Charles"])
    assert result.code == 0 and result.stdout.startswith("Ray Charles Robinson"), result.stderr
    listed = cli(["wiki", "list"]).stdout.splitlines()
    assert listed[1].split()[:4] == ["old", "?", "?", "unreadable"]
    assert listed[2].split()[:4] == ["old", "eng", "2015-06-02", "85"]
