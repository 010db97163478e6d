"""``react-cli data get|list`` and ``eval NAME`` through the CLI, against a local mirror
(``REACT_CLI_DATA_URL``) serving small files of a test manifest (``REACT_CLI_DATA_MANIFEST``:
the real pins cannot be checked without the network) with every fault a real server has.
The shipped manifest's own entries are checked in ``test_shipped_manifest``."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from eval_fakes import EVAL_FIXTURES, FEVER, rows_of
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, scripted
from file_server import Fault, FileServer
from inproc import HANG_S, Runner, one_error_line, servers_env

from react_cli.core.wording import byte_text
from react_cli.eval.catalog import MANIFEST, SAMPLE_FILE

HOTPOT_BYTES = (EVAL_FIXTURES.parent / "hotpotqa" / "distractor_first10.json").read_bytes()
FEVER_BYTES = FEVER.read_bytes()
OFFICIAL = "https://datasets.example.org"
MIRRORED = "/mirror/datasets.example.org"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def entry(name: str, file: str, data: bytes, *, sha256: bool = True) -> dict[str, object]:
    pin: dict[str, object] = {"size": len(data)}
    if sha256:
        pin["sha256"] = sha(data)
    named = {"name": name, "title": f"{name} for tests", "url": f"{OFFICIAL}/{file}"}
    return {**named, "file": file, **pin}


MANIFEST_ENTRIES = [
    entry("small-hotpot", "small-hotpot.json", HOTPOT_BYTES),
    entry("small-fever", "small-fever.jsonl", FEVER_BYTES, sha256=False),
]


@pytest.fixture
def mirror(tmp_path: Path) -> FileServer:
    files = {
        f"{MIRRORED}/small-hotpot.json": HOTPOT_BYTES,
        f"{MIRRORED}/small-fever.jsonl": FEVER_BYTES,
    }
    with FileServer(files) as server:
        yield server  # type: ignore[misc]


@pytest.fixture
def env(tmp_path: Path, mirror: FileServer) -> dict[str, str]:
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({"datasets": MANIFEST_ENTRIES}), encoding="utf-8")
    return {"REACT_CLI_DATA_MANIFEST": str(manifest), "REACT_CLI_DATA_URL": mirror.url + "/mirror"}


def installed(cli: Runner, file: str) -> Path:
    return cli.home / "data" / file


def test_get_downloads_from_the_mirror_checks_and_installs(
    cli: Runner, env: dict[str, str], mirror: FileServer
) -> None:
    result = cli(["data", "get", "small-hotpot"], **env)
    assert result.code == 0, result.stderr
    path = installed(cli, "small-hotpot.json")
    assert result.stdout == f"{path}\n" and path.read_bytes() == HOTPOT_BYTES
    size = byte_text(len(HOTPOT_BYTES))
    assert result.stderr == f"small-hotpot: {size}, SHA-256 checked\n"  # no bar: no terminal
    assert mirror.paths() == [f"{MIRRORED}/small-hotpot.json"]
    assert sorted(p.name for p in path.parent.iterdir()) == [
        ".small-hotpot.json.verified",
        "small-hotpot.json",
    ]
    again = cli(["data", "get", "small-hotpot"], **env)
    assert again.code == 0 and again.stdout == result.stdout
    assert again.stderr == "small-hotpot: installed, SHA-256 checked\n"
    assert len(mirror.requests) == 1  # installed and checked: nothing fetched again


def test_list_says_how_each_is_checked_and_what_is_installed(
    cli: Runner, env: dict[str, str]
) -> None:
    assert cli(["data", "get", "small-fever"], **env).code == 0
    result = cli(["data", "list"], **env)
    assert result.code == 0, result.stderr
    rows = [line.split() for line in result.stdout.splitlines()]
    assert rows[0] == ["name", "size", "checked", "by", "installed", "what"]
    sample = byte_text(SAMPLE_FILE.stat().st_size).split()
    assert rows[1][:4] == ["hotpotqa-sample", *sample, "-"]
    assert rows[2][0] == "small-hotpot" and rows[2][3:6] == ["sha256", "not", "downloaded"]
    assert rows[3][0] == "small-fever" and rows[3][3:5] == ["size", "verified"]
    assert f"folder: {cli.home / 'data'}" in result.stdout
    listed = json.loads(cli(["data", "list", "--json"], **env).stdout)
    assert [d["name"] for d in listed["datasets"]] == [
        "hotpotqa-sample",
        "small-hotpot",
        "small-fever",
    ]
    fever = listed["datasets"][2]
    assert (
        fever["checked_by"] == "size" and fever["sha256"] is None and fever["state"] == "verified"
    )
    assert fever["url"] == f"{OFFICIAL}/small-fever.jsonl"


def test_a_size_pin_says_so(cli: Runner, env: dict[str, str]) -> None:
    result = cli(["data", "get", "small-fever"], **env)
    assert result.code == 0 and "size checked (no checksum is pinned)" in result.stderr


def test_corrupt_bytes_are_one_error_and_nothing_is_kept(
    cli: Runner, env: dict[str, str], mirror: FileServer
) -> None:
    mirror.faults[f"{MIRRORED}/small-hotpot.json"] = Fault(body=HOTPOT_BYTES[:-2] + b"]]")
    result = cli(["data", "get", "small-hotpot"], **env)
    assert result.code == 1 and result.stdout == ""
    line = one_error_line(result.stderr)
    assert "is not the one pinned (SHA-256" in line and "partial download was removed" in line
    path = installed(cli, "small-hotpot.json")
    assert f"fetch {OFFICIAL}/small-hotpot.json by hand and put it at {path}" in line
    assert not path.parent.exists() or list(path.parent.iterdir()) == []


def test_a_file_cut_short_is_refused(cli: Runner, env: dict[str, str], mirror: FileServer) -> None:
    mirror.faults[f"{MIRRORED}/small-hotpot.json"] = Fault(body=HOTPOT_BYTES[:100])
    result = cli(["data", "get", "small-hotpot"], **env)
    assert result.code == 1
    assert f"serves 100 bytes, not the {len(HOTPOT_BYTES):,} pinned" in one_error_line(
        result.stderr
    )


def test_a_dropped_connection_resumes_with_range(
    cli: Runner, env: dict[str, str], mirror: FileServer
) -> None:
    mirror.faults[f"{MIRRORED}/small-hotpot.json"] = Fault(drop_after=1000, times=1)
    result = cli(["data", "get", "small-hotpot"], **env)
    assert result.code == 0, result.stderr
    assert installed(cli, "small-hotpot.json").read_bytes() == HOTPOT_BYTES
    assert [r.headers.get("range") for r in mirror.requests] == [None, "bytes=1000-"]


def test_a_partial_download_left_by_ctrl_c_resumes_even_where_range_is_ignored(
    cli: Runner, env: dict[str, str], mirror: FileServer
) -> None:
    part = installed(cli, "small-hotpot.json.part")
    part.parent.mkdir()
    part.write_bytes(HOTPOT_BYTES[:500])
    mirror.faults[f"{MIRRORED}/small-hotpot.json"] = Fault(ignore_range=True)
    result = cli(["data", "get", "small-hotpot"], **env)
    assert result.code == 0, result.stderr
    assert installed(cli, "small-hotpot.json").read_bytes() == HOTPOT_BYTES
    assert mirror.requests[0].headers["range"] == "bytes=500-" and not part.exists()


@pytest.mark.parametrize(
    ("fault", "said"),
    [
        (Fault(status=404), "HTTP 404 from"),
        (Fault(status=403), "HTTP 403 from"),
        (Fault(location="/elsewhere"), "HTTP 404 from"),  # a redirect to nothing
    ],
    ids=["404", "403", "redirect-to-404"],
)
def test_errors_from_the_server_say_how_to_fetch_by_hand(
    cli: Runner, env: dict[str, str], mirror: FileServer, fault: Fault, said: str
) -> None:
    mirror.faults[f"{MIRRORED}/small-hotpot.json"] = fault
    result = cli(["data", "get", "small-hotpot"], **env)
    assert result.code == 1
    line = one_error_line(result.stderr)
    assert said in line and f"fetch {OFFICIAL}/small-hotpot.json by hand" in line
    assert "'react-cli data get small-hotpot' checks it" in line


def test_a_redirect_is_followed(cli: Runner, env: dict[str, str], mirror: FileServer) -> None:
    mirror.files["/moved.json"] = HOTPOT_BYTES
    mirror.faults[f"{MIRRORED}/small-hotpot.json"] = Fault(location="/moved.json", status=301)
    result = cli(["data", "get", "small-hotpot"], **env)
    assert result.code == 0, result.stderr
    assert installed(cli, "small-hotpot.json").read_bytes() == HOTPOT_BYTES


def test_a_slow_server_is_waited_for(cli: Runner, env: dict[str, str], mirror: FileServer) -> None:
    mirror.faults[f"{MIRRORED}/small-hotpot.json"] = Fault(delay_s=0.01, chunk=4096)
    result = cli(["data", "get", "small-hotpot"], **env)
    assert result.code == 0, result.stderr


def test_offline_the_error_says_what_to_fetch_and_where_at_once(
    cli: Runner, env: dict[str, str]
) -> None:
    env = {**env, "REACT_CLI_DATA_URL": "http://mirror.react-cli-test.invalid"}
    result = cli(["data", "get", "small-hotpot"], **env)
    assert result.code == 1 and cli.elapsed_s < HANG_S
    line = one_error_line(result.stderr)
    path = installed(cli, "small-hotpot.json")
    assert line == (
        "Error: cannot reach mirror.react-cli-test.invalid: cannot resolve the host name; "
        f"offline or behind a firewall? fetch {OFFICIAL}/small-hotpot.json by hand and put it "
        f"at {path} ('react-cli data get small-hotpot' checks it), or set REACT_CLI_DATA_URL "
        "to a mirror that holds it"
    )


def test_a_file_put_there_by_hand_is_checked_before_use(cli: Runner, env: dict[str, str]) -> None:
    path = installed(cli, "small-hotpot.json")
    path.parent.mkdir()
    path.write_bytes(HOTPOT_BYTES)
    listed = cli(["data", "list"], **env).stdout
    assert "not checked yet" in listed
    result = cli(["data", "get", "small-hotpot"], **env)
    assert result.code == 0 and "installed, SHA-256 checked" in result.stderr
    path.write_bytes(HOTPOT_BYTES.replace(b"a", b"b", 1))
    wrong = cli(["data", "get", "small-hotpot"], **env)
    assert wrong.code == 2
    assert f"{path} is not the file pinned (SHA-256" in one_error_line(wrong.stderr)
    assert "'react-cli data get small-hotpot --force' downloads it again" in wrong.stderr
    forced = cli(["data", "get", "small-hotpot", "--force"], **env)
    assert forced.code == 0 and path.read_bytes() == HOTPOT_BYTES


def test_unknown_names_are_refused_before_any_download(
    cli: Runner, env: dict[str, str], mirror: FileServer
) -> None:
    result = cli(["data", "get", "small-hotpot", "small-hotpt"], **env)
    assert result.code == 2 and mirror.requests == []
    line = one_error_line(result.stderr)
    assert "no dataset named small-hotpt (did you mean small-hotpot?)" in line
    assert "the names: hotpotqa-sample, small-hotpot, small-fever" in line


def test_the_sample_is_shipped(cli: Runner, env: dict[str, str]) -> None:
    result = cli(["data", "get", "hotpotqa-sample"], **env)
    assert result.code == 0 and result.stdout == f"{SAMPLE_FILE}\n"
    assert result.stderr == "hotpotqa-sample: shipped with react-cli\n"


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"file": "../../outside.json"}, "is not a plain file name"),
        ({"file": "x.json.part"}, "is not a plain file name"),
        ({"name": "Bad Name"}, "is not lower-case letters"),
        ({"url": "file:///etc/passwd"}, "is not an http(s) URL"),
        ({"sha256": "ABC"}, "is not 64 lower-case hex digits"),
        ({"size": -1}, "is not a number of bytes"),
        ({"size": True}, "is not a number of bytes"),
        ({"size": None, "sha256": None}, "has no pin"),
        ({"name": "hotpotqa-sample"}, "two datasets share a name or a file"),
    ],
)
def test_a_hostile_manifest_is_refused_naming_the_entry(
    cli: Runner, env: dict[str, str], tmp_path: Path, change: dict[str, object], said: str
) -> None:
    bad = {**MANIFEST_ENTRIES[0], **change}
    Path(env["REACT_CLI_DATA_MANIFEST"]).write_text(json.dumps({"datasets": [bad]}))
    result = cli(["data", "list"], **env)
    assert result.code == 2
    line = one_error_line(result.stderr)
    assert said in line and ("entry 0" in line or "share" in said)
    assert not (tmp_path / "outside.json").exists()


def test_eval_takes_a_dataset_name(cli: Runner, env: dict[str, str], wiki: FakeMediaWiki) -> None:
    missing = cli(["eval", "small-hotpot", "--limit", "1"], **env)
    assert missing.code == 2
    assert one_error_line(missing.stderr) == (
        "Error: dataset small-hotpot is not downloaded yet: react-cli data get small-hotpot "
        f"fetches it ({byte_text(len(HOTPOT_BYTES))})"
    )
    assert cli(["data", "get", "small-hotpot"], **env).code == 0
    out = cli.home / "run"
    with FakeOpenAI(scripted(" Easy.\nAction 1: Finish[yes]")) as llm:
        args = ["eval", "small-hotpot", "--limit", "1", "--out", str(out)]
        result = cli(args, **env, **servers_env(llm, wiki))
    assert result.code == 0, result.stderr
    assert len(rows_of(out)) == 1
    recorded = json.loads((out / "summary.json").read_text())["dataset"]
    assert recorded["path"] == str(installed(cli, "small-hotpot.json"))


def test_eval_of_a_name_put_there_wrong_says_how_to_fix_it(
    cli: Runner, env: dict[str, str]
) -> None:
    path = installed(cli, "small-hotpot.json")
    path.parent.mkdir()
    path.write_bytes(b"[]")
    result = cli(["eval", "small-hotpot"], **env)
    assert result.code == 2
    line = one_error_line(result.stderr)
    assert f"{path} is not the small-hotpot file pinned (2 bytes, not the" in line
    assert "react-cli data get small-hotpot --force" in line


def test_a_missing_dataset_file_names_the_names(cli: Runner, env: dict[str, str]) -> None:
    result = cli(["eval", "small-hotpt"], **env)
    assert result.code == 2
    assert one_error_line(result.stderr) == (
        "Error: no such dataset file: small-hotpt (did you mean small-hotpot?); or a dataset "
        "name: hotpotqa-sample, small-hotpot, small-fever ('react-cli data list' shows them)"
    )


def test_a_folder_given_as_a_dataset_is_said_to_be_one(cli: Runner, tmp_path: Path) -> None:
    result = cli(["eval", str(EVAL_FIXTURES)])
    assert result.code == 2
    line = one_error_line(result.stderr)
    assert line == f"Error: dataset {EVAL_FIXTURES} is a folder, not a file"
    assert "Errno" not in line
    evals = tmp_path / "done"
    evals.mkdir()
    (evals / "summary.json").write_text("{}")
    said = one_error_line(cli(["eval", str(evals)]).stderr)
    assert said.endswith(f"is a folder, not a file (to continue the eval in it: --resume {evals})")


def test_shipped_manifest() -> None:
    """The manifest users get: every dataset the issue names, each from its official host,
    pinned by size and SHA-256 (the sources are in the report and each entry's ``pin``)."""
    datasets = json.loads(MANIFEST.read_text(encoding="utf-8"))["datasets"]
    by_name = {d["name"]: d for d in datasets}
    assert list(by_name) == [
        "hotpotqa-dev",
        "hotpotqa-dev-fullwiki",
        "hotpotqa-train",
        "react-hotpotqa-dev",
        "react-fever-dev",
        "fever-paper-dev",
        "fever-shared-task-dev",
    ]
    hosts = {d["url"].split("/")[2] for d in datasets}
    assert hosts == {"curtis.ml.cmu.edu", "raw.githubusercontent.com", "fever.ai"}
    assert all(len(d["sha256"]) == 64 and d["size"] > 0 and d["pin"] for d in datasets)
    # the same bytes, found in two places (ReAct's copy hashed, FEVER's published pin)
    assert by_name["react-fever-dev"]["sha256"] == by_name["fever-paper-dev"]["sha256"]


def test_the_shipped_manifest_reads(cli: Runner) -> None:
    result = cli(["data", "list", "--json"])
    assert result.code == 0, result.stderr
    names = [d["name"] for d in json.loads(result.stdout)["datasets"]]
    assert names[:2] == ["hotpotqa-sample", "hotpotqa-dev"] and len(names) == 8


def test_a_mirrors_credentials_are_sent_and_never_shown(
    cli: Runner, env: dict[str, str], mirror: FileServer
) -> None:
    secret = "s3cret-Mirror-Pass"
    host = mirror.url.removeprefix("http://")
    env = {**env, "REACT_CLI_DATA_URL": f"http://reader:{secret}@{host}/mirror"}
    mirror.faults[f"{MIRRORED}/small-hotpot.json"] = Fault(status=404)
    failed = cli(["data", "get", "small-hotpot", "--debug"], **env)
    assert failed.code == 1 and secret not in failed.stderr + failed.stdout
    assert mirror.requests[0].headers["authorization"].startswith("Basic ")
    shown = cli(["config", "--json"], **env)
    assert secret not in shown.stdout
