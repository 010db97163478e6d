"""The command a test's ``--mcp`` starts: ``python -S mcp_launch.py SOCKET [--helper FILE]``.

It hands its stdin, stdout and stderr (the pipes react-cli made), its environment and its
command line (any arguments after ``SOCKET`` are the server's own) to the
servers' zygote (``mcp_server.Zygote``, listening on ``SOCKET``), which forks a server that
already imported the SDK and speaks over those pipes; it forwards ``SIGTERM`` to that server
and exits with its status. With ``--helper FILE`` it first starts a helper in its process
group, as ``npx`` starts node or a server its browser: one that ignores its stdin closing
(and ``SIGHUP``), writes ``PID PGID`` into ``FILE`` and sleeps, holding the server's pipes.
Standard library only, no site packages: it starts in 20 ms.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import time


def helper(path: str) -> None:
    """Fork the helper (it never returns in the child)."""
    if os.fork() != 0:
        return
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    with open(path + ".part", "w") as file:
        file.write(f"{os.getpid()} {os.getpgid(0)}")
    os.replace(path + ".part", path)
    time.sleep(3600)
    os._exit(0)


def main(path: str, options: list[str]) -> int:
    if options[:1] == ["--helper"]:
        helper(options[1])
    link = socket.socket(socket.AF_UNIX)
    link.connect(path)
    asked = {"env": dict(os.environ), "cwd": os.getcwd(), "argv": sys.argv}
    socket.send_fds(link, [json.dumps(asked).encode()], [0, 1, 2])
    signal.signal(signal.SIGTERM, lambda signum, frame: link.send(b"T"))
    status = link.recv(16)  # the server's exit status, once it has exited
    return int(status or b"1")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
