"""A server's processes from start to end, through the real CLI, with SDK-written servers
(``support/mcp_server.py``'s zygote, started by ``support/mcp_launch.py``):

- nothing of a stdio server's process group outlives the command, though its leader exits on
  its own as its stdin closes and leaves a helper behind (``ask``, ``eval``, ``chat``,
  ``tools``);
- SIGTERM and SIGHUP stop every command as Ctrl-C does: servers stopped, the trace or the
  eval's rows kept, exit 128 + the signal (in-process for ``eval``, ``chat``, ``tools`` and
  ``replay --live-tools``, the signal sent to the main thread; a real process for ``ask``,
  and ``kill -9`` of it, after which the server dies of its parent's death);
- a server's start and close held to ``--timeout``;
- an eval whose server dies is started again once, and the questions that met it dead are
  failed rows that ``--resume`` runs again.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import REACT_CLI, ROOT, cli_env
from eval_fakes import PerQuestion, finish
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, Reply, scripted
from inproc import FAST_CONFIG, HANG_S, Runner, one_error_line, servers_env, toml_value
from mcp_fixtures import Servers
from mcp_raw import raw_http

pytest_plugins = ["mcp_zygotes"]  # servers: one zygote a run

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
RAW = Path(__file__).resolve().parents[2] / "support" / "mcp_raw.py"
QUESTION = "What do my notes say about Paris?"
EXIT_TERMINATED, EXIT_HUNG_UP = 128 + signal.SIGTERM, 128 + signal.SIGHUP  # 143, 129


def config_lines(**values: object) -> str:
    settings = {**FAST_CONFIG, "tool_timeout_s": 10.0, **values}
    return "".join(f"{key} = {toml_value(value)}\n" for key, value in settings.items())


def running(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its parent to reap it does not)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[-1].split()[0] != b"Z"
    except OSError:
        return False


def group(pgid: int) -> list[int]:
    """The processes of the group ``pgid`` that run."""
    members = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[-1].split()
        except OSError:
            continue
        if entry.isdigit() and fields[2] == str(pgid).encode() and fields[0] != b"Z":
            members.append(int(entry))
    return members


def eventually(done: Callable[[], bool]) -> bool:
    """Whether ``done()`` comes true within the hang bound (it takes a second or two)."""
    until = time.monotonic() + HANG_S
    while not done() and time.monotonic() < until:
        time.sleep(0.02)
    return done()


def signal_once(marker: Path, signum: int) -> threading.Thread:
    """``signum`` to the main thread once the server's hang tool wrote ``marker`` (never
    when nothing handles it: left to its default, it would end the test process)."""

    def wait_then_signal() -> None:
        if eventually(marker.exists) and signal.getsignal(signum) is not signal.SIG_DFL:
            signal.pthread_kill(threading.main_thread().ident or 0, signum)

    thread = threading.Thread(target=wait_then_signal, daemon=True)
    thread.start()
    return thread


def dataset(tmp_path: Path, *questions: str) -> Path:
    path = tmp_path / "questions.jsonl"
    rows = [json.dumps({"question": q, "answer": "x"}) for q in questions]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


# --- class 2: a server's helpers -----------------------------------------------------------


@pytest.mark.parametrize("command", ["ask", "eval", "chat", "tools"])
def test_nothing_of_a_server_s_process_group_outlives_the_command(
    cli: Runner, wiki: FakeMediaWiki, servers: Servers, tmp_path: Path, command: str
) -> None:
    helper = tmp_path / "helper"
    mcp = shlex.join([*servers.argv, "--helper", str(helper)])
    cli.config_text(config_lines())
    with FakeOpenAI(scripted(" Done.\nAction 1: Finish[x]")) as llm:
        args = {
            "ask": ["ask", QUESTION],
            "eval": ["eval", str(dataset(tmp_path, QUESTION)), "--out", str(tmp_path / "ev")],
            "chat": ["chat"],
            "tools": ["tools"],
        }[command]
        result = cli([*args, "--mcp", mcp], f"{QUESTION}\n", **servers_env(llm, wiki))
    assert result.code == 0, result.stderr
    pid, pgid = map(int, helper.read_text().split())
    assert group(pgid) == [] and not running(pid)  # the leader had exited on its own


# --- class 3: SIGTERM and SIGHUP, in-process -------------------------------------------------


def test_sighup_stops_an_eval_keeping_its_rows(
    cli: Runner, wiki: FakeMediaWiki, servers: Servers, tmp_path: Path
) -> None:
    marker = tmp_path / "hanging"
    cli.config_text(config_lines())
    first, second = "Who is one?", "Who is two?"
    scripts = {
        first: [" Ask.\nAction 1: pid[me]", finish("x", 2)],
        second: [f" Wait.\nAction 1: hang[{marker}]"],
    }
    out = tmp_path / "ev"
    watcher = signal_once(marker, signal.SIGHUP)
    with FakeOpenAI(PerQuestion(scripts)) as llm:
        args = ["eval", str(dataset(tmp_path, first, second)), "--out", str(out)]
        result = cli(
            [*args, "--concurrency", "1", "--mcp", servers.command], **servers_env(llm, wiki)
        )
    watcher.join()
    assert result.code == EXIT_HUNG_UP, result.stderr
    assert result.stderr.splitlines()[-1] == (
        f"Error: interrupted by SIGHUP; 1 result kept in {out}; continue with: "
        f"react-cli eval --resume {out}"
    )
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert [row["question"] for row in rows] == [first]
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["status"] == "interrupted"
    assert not running(int(marker.read_text())) and not running(int(_pid_of(out, rows[0])))


def _pid_of(folder: Path, row: dict[str, object]) -> str:
    trace = json.loads((folder / str(row["trace"])).read_text(encoding="utf-8"))
    return str(trace["steps"][0]["actions"][0]["observation"])


def test_sigterm_ends_a_chat_keeping_the_question_s_trace(
    cli: Runner, wiki: FakeMediaWiki, servers: Servers, tmp_path: Path
) -> None:
    marker = tmp_path / "hanging"
    cli.config_text(config_lines())
    first, second, third = "Who is one?", "Who is two?", "Who is three?"
    scripts = {first: [finish("x")], second: [f" Wait.\nAction 1: hang[{marker}]"]}
    watcher = signal_once(marker, signal.SIGTERM)
    with FakeOpenAI(PerQuestion(scripts)) as llm:
        stdin = f"{first}\n{second}\n{third}\n"
        result = cli(["chat", "--mcp", servers.command], stdin, **servers_env(llm, wiki))
    watcher.join()
    assert (result.code, result.stdout) == (EXIT_TERMINATED, "x\n\n"), result.stderr
    assert one_error_line(result.stderr).startswith("Error: interrupted by SIGTERM; trace ")
    traces = [json.loads(p.read_text()) for p in sorted((cli.home / "traces").iterdir())]
    assert sorted(t["stop_reason"] for t in traces) == ["finish", "interrupted"]
    assert not [r for r in llm.requests if third in json.dumps(r.json)]  # the chat ended
    assert not running(int(marker.read_text()))


def test_sigterm_while_a_server_starts_stops_tools(cli: Runner, tmp_path: Path) -> None:
    marker = tmp_path / "started"
    code = f"import os, sys; open({str(marker)!r}, 'w').write(str(os.getpid())); sys.stdin.read()"
    cli.config_text(config_lines(tool_timeout_s=60.0))
    watcher = signal_once(marker, signal.SIGTERM)
    result = cli(["tools", "--mcp", shlex.join([sys.executable, "-c", code])])
    watcher.join()
    assert result.code == EXIT_TERMINATED and cli.elapsed_s < HANG_S, result.stderr
    assert one_error_line(result.stderr) == "Error: interrupted by SIGTERM"
    assert not running(int(marker.read_text()))


def test_sigterm_stops_a_replay_with_live_tools(
    cli: Runner, wiki: FakeMediaWiki, servers: Servers, tmp_path: Path
) -> None:
    marker = tmp_path / "hanging"
    # the recorded call of hang times out; the server's start has as long (1 s: a loaded machine)
    cli.config_text(config_lines(tool_timeout_s=1.0))
    script = (f" Wait.\nAction 1: hang[{marker}]", " Done.\nAction 2: Finish[x]")
    recorded = tmp_path / "run.json"
    with FakeOpenAI(scripted(*script)) as llm:
        args = ["--mcp", servers.command, "--trace", str(recorded)]
        assert cli.ask(llm, wiki, *args, question=QUESTION).code == 0
    marker.unlink()
    cli.config_text(config_lines())
    watcher = signal_once(marker, signal.SIGTERM)
    live = ["replay", "--rerun", "--live-tools", "--mcp", servers.command, str(recorded)]
    result = cli(live, REACT_CLI_WIKI=wiki.url)
    watcher.join()
    assert result.code == EXIT_TERMINATED, result.stderr
    assert one_error_line(result.stderr) == "Error: interrupted by SIGTERM"
    assert not running(int(marker.read_text()))


# --- class 3: a real process ------------------------------------------------------------------


def _ask_in_a_process(
    home: Path, wiki: FakeMediaWiki, servers: Servers, marker: Path, llm: FakeOpenAI
) -> subprocess.Popen[str]:
    (home / "config.toml").write_text(config_lines(), encoding="utf-8")
    env = cli_env(home, **servers_env(llm, wiki))
    return subprocess.Popen(
        [str(REACT_CLI), "ask", QUESTION, "--mcp", servers.command],
        env=env,
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[-1].split()
        except OSError:
            continue
        if entry.isdigit() and fields[1] == str(pid).encode():
            found.append(int(entry))
    return found


@pytest.mark.parametrize(
    ("signum", "code"), [(signal.SIGTERM, EXIT_TERMINATED), (signal.SIGHUP, EXIT_HUNG_UP)]
)
def test_a_signal_stops_ask_its_server_and_keeps_the_trace(
    home: Path, wiki: FakeMediaWiki, servers: Servers, tmp_path: Path, signum: int, code: int
) -> None:
    marker = tmp_path / "hanging"
    with FakeOpenAI(scripted(f" Wait.\nAction 1: hang[{marker}]")) as llm:
        proc = _ask_in_a_process(home, wiki, servers, marker, llm)
        assert eventually(marker.exists), proc.communicate()
        launchers = _children(proc.pid)
        proc.send_signal(signum)
        stdout, stderr = proc.communicate(timeout=HANG_S)
    name = signal.Signals(signum).name
    assert proc.returncode == code, stderr
    assert stdout == "" and stderr.splitlines()[-1].startswith(f"Error: interrupted by {name}")
    traces = list((home / "traces").glob("*.json"))
    assert len(traces) == 1 and "Traceback" not in stderr
    trace = json.loads(traces[0].read_text(encoding="utf-8"))
    assert trace["stop_reason"] == "interrupted"
    assert launchers and not [pid for pid in launchers if running(pid)]
    assert not running(int(marker.read_text()))  # the server the launcher had started


def test_a_server_dies_with_ask_killed_by_sigkill(
    home: Path, wiki: FakeMediaWiki, tmp_path: Path
) -> None:
    """Nothing of react-cli runs to stop it: the server, busy for good (it ignores its stdin
    closing), is told of its parent's death by the kernel."""
    marker = tmp_path / "busy"
    (home / "config.toml").write_text(config_lines(), encoding="utf-8")
    busy = shlex.join([sys.executable, "-S", str(RAW), "--pid", str(marker), "--busy"])
    with FakeOpenAI([Reply(" Wait.", delay_s=HANG_S)]) as llm:
        proc = subprocess.Popen(
            [str(REACT_CLI), "ask", QUESTION, "--mcp", busy],
            env=cli_env(home, **servers_env(llm, wiki)),
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        assert eventually(lambda: bool(llm.requests)), "no run started"
        server = int(marker.read_text().split()[0])
        assert running(server)
        proc.kill()
        proc.wait(HANG_S)
        assert eventually(lambda: not running(server))


@pytest.mark.parametrize("setpriv", [True, False], ids=["setpriv", "without"])
def test_a_server_is_told_to_die_with_its_parent(
    cli: Runner, wiki: FakeMediaWiki, llm: FakeOpenAI, tmp_path: Path, setpriv: bool
) -> None:
    """util-linux's ``setpriv`` sets it, or a few lines of Python where there is none."""
    said = tmp_path / "pid"
    cli.config_text(config_lines())
    raw = shlex.join([sys.executable, "-S", str(RAW), "--pid", str(said)])
    path = os.environ["PATH"] if setpriv else str(tmp_path)  # no setpriv in an empty folder
    result = cli(["tools", "--mcp", raw], PATH=path)
    assert result.code == 0, result.stderr
    pid, death_signal = map(int, said.read_text().split())
    assert death_signal == signal.SIGTERM and not running(pid)


# --- class 4: start and close within --timeout ------------------------------------------------


def test_a_server_that_never_answers_initialize_holds_ask_no_longer_than_its_timeout(
    cli: Runner, wiki: FakeMediaWiki, llm: FakeOpenAI
) -> None:
    cli.config_text(config_lines(tool_timeout_s=60.0))
    silent = shlex.join([sys.executable, "-c", "import sys; sys.stdin.read()"])
    result = cli.ask(llm, wiki, "--mcp", silent, "--timeout", "0.5")
    assert result.code == 2 and cli.elapsed_s < HANG_S, result.stderr
    said = one_error_line(result.stderr)  # what was left: 0.5 s, less on a loaded machine
    assert re.search(r"did not answer initialize within 0(\.\d+)? s \(what --timeout left\)$", said)


def test_a_server_that_stalls_its_session_s_end_holds_ask_no_longer_than_its_timeout(
    cli: Runner, wiki: FakeMediaWiki
) -> None:
    cli.config_text(config_lines(tool_timeout_s=60.0))
    with (
        raw_http(events=True, stall_close=True) as hostile,
        FakeOpenAI(scripted(" Echo.\nAction 1: echo[hi]", " Done.\nAction 2: Finish[hi]")) as llm,
    ):
        args = ("--mcp", f"{hostile.url}/mcp", "--timeout", "1")
        result = cli.ask(llm, wiki, *args, question=QUESTION)
        deleted = [r for r in hostile.requests if r.head.startswith(b"DELETE")]
    assert (result.code, result.stdout) == (0, "hi\n"), result.stderr
    assert deleted and cli.elapsed_s < HANG_S / 2  # it was 11 s
    assert result.stderr.splitlines()[-1].startswith(
        "warning: MCP server raw did not end its session within "
    )
    assert result.stderr.splitlines()[-1].endswith(" s (what --timeout left): cut short")


# --- an eval's server that dies ---------------------------------------------------------------


def test_an_eval_starts_a_dead_server_again_once_then_fails_the_questions_that_met_it(
    cli: Runner, wiki: FakeMediaWiki, servers: Servers, tmp_path: Path
) -> None:
    cli.config_text(config_lines(max_tool_errors=5))
    questions = [f"Who is number {n}?" for n in range(1, 5)]
    dies = [" Kill it.\nAction 1: die[3]", finish("x", 2)]
    asks = [" Ask it.\nAction 1: pid[me]", finish("x", 2)]
    scripts = dict(zip(questions, [dies, asks, dies, asks], strict=True))
    out = tmp_path / "ev"
    with FakeOpenAI(PerQuestion(scripts)) as llm:
        args = ["eval", str(dataset(tmp_path, *questions)), "--out", str(out)]
        result = cli(
            [*args, "--concurrency", "1", "--mcp", servers.command], **servers_env(llm, wiki)
        )
    assert result.code == 1, result.stderr
    restarted = [line for line in result.stderr.splitlines() if "started again" in line]
    assert restarted == [
        "warning: MCP server demo stopped (it closed its output); started again (once: if it "
        "stops again, the calls to it fail)"
    ]
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert [row["stop_reason"] for row in rows] == ["error", "finish", "error", "error"]
    assert rows[3]["error"] == "the MCP server stopped (it closed its output)"
    assert "3 questions failed" in result.stderr.splitlines()[-1]
    with FakeOpenAI(PerQuestion(dict.fromkeys(questions, asks))) as llm:
        again = cli(
            ["eval", "--resume", str(out), "--mcp", servers.command], **servers_env(llm, wiki)
        )
    assert again.code == 0, again.stderr
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert sorted(row["question"] for row in rows) == sorted(questions)
    assert {row["stop_reason"] for row in rows} == {"finish"}
