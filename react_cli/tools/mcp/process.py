"""A stdio server's process: started in a session of its own that dies with react-cli, and
stopped with its whole process group, however its leader ended.

A server's command is often a launcher (``npx``, ``uvx``, a shell script) whose children do
the work, and a server may start helpers of its own (a browser, workers). They are all in the
process group the server leads (it starts in a new session, so a Ctrl-C at the terminal does
not reach it: react-cli stops it). Stopping it ends that group every time: stdin closed, then
``SIGTERM`` to the group once the leader exited or ``stop_wait_s`` passed, ``SIGKILL`` to what
is left after ``kill_wait_s``. A leader that exits on its own as its stdin closes leaves its
helpers running otherwise: they are orphans nobody else signals.

On Linux the server is also asked to die with react-cli (the kernel sends it ``SIGTERM`` when
the thread that started it ends: ``prctl(PR_SET_PDEATHSIG)``), the last resort when react-cli
is killed with ``SIGKILL`` and nothing of it runs to stop its servers. The setting is made by a
wrapper that then executes the server's command (util-linux's ``setpriv --pdeathsig``, or a
few lines of Python where there is none), never by code run between ``fork`` and ``exec``:
``preexec_fn`` is not safe in a process with threads, and react-cli has several.
"""

from __future__ import annotations

import errno
import functools
import os
import shutil
import signal
import sys
from collections.abc import Mapping
from contextlib import suppress
from pathlib import Path

import anyio
import anyio.abc

REAP_WAIT_S = 1.0  # after SIGKILL, for the event loop to see it
_POLL_S = 0.01
_GROUP_POLL_S = 0.02
_PDEATHSIG = "TERM"
_PR_SET_PDEATHSIG = 1
_TRAMPOLINE = (
    "import ctypes, os, sys\n"
    f"ctypes.CDLL(None).prctl({_PR_SET_PDEATHSIG}, {int(signal.SIGTERM)})\n"
    "if os.getppid() != int(sys.argv[1]):\n"  # react-cli died before the setting took
    "    os._exit(1)\n"
    "try:\n"
    "    os.execvp(sys.argv[2], sys.argv[2:])\n"
    "except OSError as exc:\n"
    "    sys.stderr.write(f'cannot start {sys.argv[2]}: {exc.strerror}\\n')\n"
    "    os._exit(127)\n"
)


async def start(
    argv: tuple[str, ...], env: Mapping[str, str], cwd: str | None
) -> anyio.abc.Process:
    """The server ``argv`` started (its pipes open, stderr piped), or the OSError ``Popen``
    would raise for a command that cannot be run."""
    if sys.platform == "linux":
        _runnable(argv[0], env, cwd)  # said here, as Popen says it: the wrapper would exit 127
        argv = (*_dying_with_us(), *argv)
    return await anyio.open_process(
        list(argv), env=dict(env), cwd=cwd, stderr=-1, start_new_session=True
    )


def _dying_with_us() -> tuple[str, ...]:
    """The wrapper that sets the parent-death signal and executes what follows it."""
    setpriv = _setpriv(os.environ.get("PATH"))
    if setpriv is not None:
        return (setpriv, f"--pdeathsig={_PDEATHSIG}", "--")
    return (sys.executable, "-S", "-I", "-c", _TRAMPOLINE, str(os.getpid()))


@functools.cache
def _setpriv(path: str | None) -> str | None:
    """util-linux's ``setpriv`` found along react-cli's ``PATH``, once for each."""
    return shutil.which("setpriv", path=path)


def _runnable(program: str, env: Mapping[str, str], cwd: str | None) -> None:
    """Nothing, when ``program`` names an executable file as ``exec`` finds it (a path, else
    along the server's ``PATH``, relative to ``cwd``); else FileNotFoundError or
    PermissionError."""
    base = Path(cwd or os.getcwd())
    if os.sep in program:
        candidates = [base / program]
    else:
        candidates = [base / folder / program for folder in os.get_exec_path(dict(env))]
    denied = False
    for path in candidates:
        if path.is_file():
            if os.access(path, os.X_OK):
                return
            denied = True
    code = errno.EACCES if denied else errno.ENOENT
    error = PermissionError if denied else FileNotFoundError
    raise error(code, os.strerror(code), program)


def _budget(wait_s: float, left_s: float | None) -> float:
    """``wait_s``, or half of what is left of the close's time when that is less (a floor
    of a few polls: the process gets a moment however late it is)."""
    if left_s is None:
        return wait_s
    return min(wait_s, max(5 * _POLL_S, left_s / 2))


async def stop(
    process: anyio.abc.Process, stop_wait_s: float, kill_wait_s: float, left_s: float | None
) -> None:
    """Close its stdin and give it ``stop_wait_s`` to exit, then end its process group
    (``SIGTERM``, ``kill_wait_s``, ``SIGKILL``); with ``left_s`` (the close's time left),
    both waits are shortened to fit it."""
    with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        assert process.stdin is not None
        await process.stdin.aclose()
    await exited(process, _budget(stop_wait_s, left_s))
    if sys.platform != "win32":
        await _end_group(process.pid, _budget(kill_wait_s, left_s))
    elif process.returncode is None:  # pragma: no cover - no Windows here
        process.kill()
    await exited(process, REAP_WAIT_S)


async def exited(process: anyio.abc.Process, wait_s: float) -> bool:
    """Whether the process ended within ``wait_s`` (by its return code: ``wait()`` would
    also wait for its pipes, which a child it started may hold)."""
    with anyio.move_on_after(wait_s):
        while process.returncode is None:
            await anyio.sleep(_POLL_S)
    return process.returncode is not None


async def _end_group(pgid: int, wait_s: float) -> None:
    """``SIGTERM`` to the group ``pgid`` (the leader's pid: it started a session), then
    ``SIGKILL`` to what is still running of it after ``wait_s``. Nothing when it is gone."""
    if not _signal_group(pgid, signal.SIGTERM):
        return
    with anyio.move_on_after(wait_s):
        while _group_running(pgid):
            await anyio.sleep(_GROUP_POLL_S)
        return
    _signal_group(pgid, signal.SIGKILL)


def _signal_group(pgid: int, signum: int) -> bool:
    """Send ``signum`` to the group; False when no process of it is left."""
    try:
        os.killpg(pgid, signum)
    except ProcessLookupError:
        return False
    except PermissionError:  # a member we may not signal: the others got it
        pass
    return True


def _group_running(pgid: int) -> bool:
    """Whether a process of the group ``pgid`` runs: any at all by ``kill(0)``, and on Linux
    one that is not a zombie (orphans wait there for init, which may reap them late)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    if sys.platform != "linux":
        return True
    return any(state != "Z" for state in _group_states(pgid))


def _group_states(pgid: int) -> list[str]:
    """The state letter of each process of the group ``pgid``, read from ``/proc``."""
    states = []
    with suppress(OSError):
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as stat:
                    fields = stat.read().rsplit(b")", 1)[-1].split()
            except OSError:
                continue  # it ended meanwhile
            if len(fields) > 2 and fields[2] == str(pgid).encode():
                states.append(fields[0].decode("ascii", "replace"))
    return states
