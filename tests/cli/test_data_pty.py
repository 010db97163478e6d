"""Downloads as a person meets them, each in a process of its own: the progress bar on a real
pseudo-terminal (``tests/support/terminal.py``: bytes, rate and time left on stderr, cleared
for the result line), and Ctrl-C as a real SIGINT (what arrived kept, resumed next time)."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest
from conftest import REACT_CLI, cli_env, run_cli
from file_server import Fault, FileServer
from terminal import Terminal

DATA = bytes(range(256)) * 400  # 102 kB
MIRRORED = "/mirror/datasets.example.org/slow.json"
BAR = "slow\\.json +\\S*━\\S* +[\\d.]+/102\\.4 kB +[\\d.]+ [kM]?B/s ETA".encode()
"""The bar's line: the file, the bar, bytes so far of the whole, the rate, the time left."""


def slow_dataset(tmp_path: Path, mirror: FileServer) -> tuple[Path, dict[str, str]]:
    """A home and the environment that gets ``slow`` (DATA, pinned) from ``mirror``."""
    manifest = tmp_path / "manifest.json"
    entry = {
        "name": "slow",
        "url": "https://datasets.example.org/slow.json",
        "file": "slow.json",
        "size": len(DATA),
        "sha256": hashlib.sha256(DATA).hexdigest(),
    }
    manifest.write_text(json.dumps({"datasets": [entry]}), encoding="utf-8")
    home = tmp_path / "home"
    home.mkdir()
    data_url, listed = mirror.url + "/mirror", str(manifest)
    return home, cli_env(home, REACT_CLI_DATA_URL=data_url, REACT_CLI_DATA_MANIFEST=listed)


@pytest.mark.timeout(60)
def test_the_bar_shows_bytes_rate_and_time_left(tmp_path: Path) -> None:
    with FileServer({MIRRORED: DATA}) as mirror:
        mirror.faults[MIRRORED] = Fault(delay_s=0.02, chunk=2048)  # 50 pieces: ≥ 1 s
        home, env = slow_dataset(tmp_path, mirror)
        env["TERM"] = "xterm-256color"
        env.pop("COLUMNS")
        start = "import sys\nfrom react_cli.entry import main\nsys.argv[0] = 'react-cli'\nmain()"
        shown = Terminal([sys.executable, "-c", start, "data", "get", "slow"], env, columns=100)
        try:
            bar = shown.expect(BAR)
            shown.expect(rb"slow: 102\.4 kB, SHA-256 checked")
            assert shown.wait() == 0
        finally:
            shown.close()
    assert bar is not None and (home / "data" / "slow.json").read_bytes() == DATA


@pytest.mark.timeout(60)
def test_ctrl_c_keeps_what_arrived_and_the_same_command_resumes(tmp_path: Path) -> None:
    """Exit 130 saying what was kept; the same command then continues from there (Range)."""
    import signal
    import subprocess
    import time

    with FileServer({MIRRORED: DATA}) as mirror:
        mirror.faults[MIRRORED] = Fault(delay_s=0.05, chunk=2048, times=1)
        home, env = slow_dataset(tmp_path, mirror)
        part = home / "data" / "slow.json.part"
        args = [str(REACT_CLI), "data", "get", "slow"]
        proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 30
        while not (part.is_file() and part.stat().st_size >= 4096):
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.01)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 130, err
        kept = part.stat().st_size
        assert 0 < kept < len(DATA)
        line = err.decode().strip()
        assert line.startswith("Error: interrupted") and f"kept in {part}" in line
        assert line.endswith("run the same command to resume") and out == b""
        again = run_cli(["data", "get", "slow"], env)
        assert again.code == 0, again.stderr
        assert mirror.requests[-1].headers["range"] == f"bytes={kept}-"
    assert (home / "data" / "slow.json").read_bytes() == DATA
