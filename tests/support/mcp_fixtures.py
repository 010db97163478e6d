"""The test side of ``mcp_server``'s zygote: one process that has imported the SDK, serving the
test server over streamable HTTP and forking a stdio server for each run (see ``mcp_server``).
A run starts each zygote once (the ``mcp_zygotes`` plugin). Standard library only: the test
process never imports the server's SDK."""

from __future__ import annotations

import os
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

SUPPORT = Path(__file__).resolve().parent


class Servers:
    """The zygote (``script``'s server's: ``mcp_server.py``, or one that hands it its own app),
    from the test process: ``command`` starts a stdio server (the launcher),
    ``url`` is the HTTP one's, :meth:`started` counts the stdio servers started so far."""

    def __init__(self, script: str = "mcp_server.py") -> None:
        self._folder = tempfile.mkdtemp(prefix="mcp-")  # short: a UNIX socket path holds 107
        self.socket = os.path.join(self._folder, "zygote")
        self._process = subprocess.Popen(
            [sys.executable, str(SUPPORT / script), "zygote", self.socket],
            stdin=subprocess.PIPE,  # when this process dies, the zygote sees its end
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self._process.stdout is not None
        ready = self._process.stdout.readline().split()
        assert ready[:1] == ["ready"], ready
        self.url = f"http://127.0.0.1:{ready[1]}/mcp"
        argv = [sys.executable, "-S", str(SUPPORT / "mcp_launch.py"), self.socket]
        self.argv = argv
        self.command = shlex.join(argv)

    def started(self) -> int:
        with socket.socket(socket.AF_UNIX) as link:
            link.connect(self.socket)
            socket.send_fds(link, [b"count"], [])
            return int(link.recv(16))

    def close(self) -> None:
        assert self._process.stdin is not None
        self._process.stdin.close()
        self._process.wait(10)
        shutil.rmtree(self._folder, ignore_errors=True)
