"""The command a test's ``--mcp`` starts: ``python -S mcp_launch.py SOCKET``.

It hands its stdin, stdout and stderr (the pipes react-cli made) and its environment to the
servers' zygote (``mcp_server.Zygote``, listening on ``SOCKET``), which forks a server that
already imported the SDK and speaks over those pipes; it forwards ``SIGTERM`` to that server
and exits with its status. Standard library only, no site packages: it starts in 20 ms.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys


def main(path: str) -> int:
    link = socket.socket(socket.AF_UNIX)
    link.connect(path)
    asked = {"env": dict(os.environ), "cwd": os.getcwd()}
    socket.send_fds(link, [json.dumps(asked).encode()], [0, 1, 2])
    signal.signal(signal.SIGTERM, lambda signum, frame: link.send(b"T"))
    status = link.recv(16)  # the server's exit status, once it has exited
    return int(status or b"1")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
