"""A real MCP server written with the SDK (``MCPServer``, the 2.x name of ``FastMCP``), whose
tools do everything a server may do to a client: answer, take several arguments, raise, refuse,
hang, answer 10 MB, write escape sequences, show its environment and how it was reached, leak a
secret in its listing and a resource, die. They are marked read-only (``readOnlyHint``), so
react-cli runs them without asking, but ``write_note``, which is unmarked (it may change things:
each call needs the user's consent) and writes a file.

``python mcp_server.py`` serves it over stdio. Every process that imports the SDK pays half a
second of CPU, so the tests start one process a run (``mcp_zygotes.servers``), a zygote that
imports it once: it serves the app over streamable HTTP (a forked child, uvicorn) and forks a
stdio server for each run that starts its ``command`` (``mcp_launch.py``, which hands the
zygote its pipes and environment, and waits for its server's exit). What react-cli starts,
talks to, stops and sees exit is a process speaking MCP over its pipes, as any server's.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import selectors
import signal
import socket
import sys
from pathlib import Path
from typing import Annotated, Any, NoReturn

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from mcp_types import EmbeddedResource, TextResourceContents
from pydantic import Field

HANG_S = 3600.0
_LOGGING = (list(logging.root.handlers), logging.root.level)
app = MCPServer("demo", version="1.2.3")
READ_ONLY = ToolAnnotations(read_only_hint=True)
logging.root.handlers[:], _ = _LOGGING  # the SDK's server configures the root logger: undone
logging.root.setLevel(_LOGGING[1])


@app.tool(annotations=READ_ONLY)
def echo(text: str) -> str:
    """Echo the text back."""
    return f"echo: {text}"


@app.tool(annotations=READ_ONLY)
def concat(a: str, b: str) -> str:
    """Join two strings."""
    return a + b


@app.tool(annotations=READ_ONLY)
def search(query: str) -> str:
    """Search the notes (its name is Wikipedia's Search's: it becomes demo.search)."""
    return f"notes about {query}"


@app.tool(annotations=READ_ONLY)
def boom(text: str) -> str:
    """Always raises (the SDK hides the message of an exception that is not a ToolError)."""
    raise ValueError(f"boom on {text!r}")


@app.tool(annotations=READ_ONLY)
def refuse(text: str) -> str:
    """Always refuses, saying why."""
    raise ToolError(f"cannot {text}")


@app.tool(annotations=READ_ONLY)
async def hang(text: str) -> str:
    """Never answers (an hour); first writes its process id into the file ``text`` names, if
    it names one (a test waits for it to know the call is under way)."""
    if text.startswith("/"):
        Path(text).write_text(str(os.getpid()), encoding="utf-8")
    await anyio.sleep(HANG_S)
    return "woke"


@app.tool(annotations=READ_ONLY)
def big(size: str) -> str:
    """Return ``size`` characters of words, then END."""
    words = "lorem ipsum dolor sit amet "
    return (words * (int(size) // len(words) + 1))[: int(size)] + " END"


@app.tool(annotations=READ_ONLY)
def escape(text: str) -> str:
    """Answer with escape sequences and control characters around the text."""
    return f"\x1b[31m{text}\x1b[0m\x00\x07\u202e done"


@app.tool(annotations=READ_ONLY)
def env(names: str) -> str:
    """The values of environment variables (names separated by commas)."""
    return "; ".join(f"{name}={os.environ.get(name, '<unset>')}" for name in names.split(","))


@app.tool(annotations=READ_ONLY)
def pid(text: str) -> str:
    """This server's process id."""
    return str(os.getpid())


@app.tool(annotations=READ_ONLY)
def die(code: str) -> str:
    """Kill this server's process at once."""
    os._exit(int(code))


@app.tool(annotations=READ_ONLY)
def get_env(text: str) -> str:
    """This server's whole environment as JSON (the reference "everything" server's get-env)."""
    return json.dumps(dict(os.environ))


@app.tool(annotations=READ_ONLY)
def reached(text: str, ctx: Context) -> str:
    """How this server was reached: its command line (stdio), or the request's URL and
    headers (HTTP)."""
    if ctx.headers is None:
        return " ".join(sys.argv)
    url = str(getattr(ctx.request_context.request, "url", ""))
    return json.dumps({"url": url, "headers": dict(ctx.headers)})


LISTED_SECRET = "sk-listed-in-a-tool-0042"


@app.tool(
    description=f"Opens the vault with the key {LISTED_SECRET} (a listing that leaks).",
    annotations=READ_ONLY,
)
def vault(
    key: Annotated[str, Field(description=f"not {LISTED_SECRET}")], note: str = ""
) -> list[Any]:
    """(The description above is the listing's.)"""
    leaked = TextResourceContents(uri="file:///vault", text=f"the vault's key: {LISTED_SECRET}")
    return [EmbeddedResource(type="resource", resource=leaked)]


@app.tool()
def write_note(path: str, text: str) -> str:
    """Append the text to the file at the path (unmarked: it needs consent)."""
    with open(path, "a", encoding="utf-8") as note:
        note.write(text + "\n")
    return f"wrote {len(text)} characters to {path}"


def _serve_stdio(asked: dict[str, Any], fds: list[int]) -> NoReturn:
    """In a forked child: the server over the pipes the launcher handed over, in its
    environment and folder."""
    signal.set_wakeup_fd(-1)
    for signum in (signal.SIGCHLD, signal.SIGTERM):
        signal.signal(signum, signal.SIG_DFL)
    for target, fd in zip((0, 1, 2), fds, strict=True):
        os.dup2(fd, target)
    os.closerange(3, os.sysconf("SC_OPEN_MAX"))  # the zygote's sockets are not the server's
    os.environ.clear()
    os.environ.update(asked["env"])
    os.chdir(asked["cwd"])
    sys.argv = asked["argv"]
    try:
        app.run()
    finally:
        os._exit(0)


def _serve_http(listener: socket.socket) -> NoReturn:
    """In a forked child: the server over streamable HTTP on ``listener``."""
    import uvicorn

    config = uvicorn.Config(
        app.streamable_http_app(), log_level="critical", timeout_graceful_shutdown=0
    )
    try:
        uvicorn.Server(config).run(sockets=[listener])
    finally:
        os._exit(0)


def zygote(path: str) -> None:
    """Serve forever: a server over HTTP (a child, on a port said on stdout as ``ready
    PORT``), and, for each launcher that connects to the UNIX socket ``path``, a server over
    its pipes (a child forked from here, the SDK already imported: no start-up to pay). Each
    launcher hears its server's exit status; its ``T`` (or its end) stops its server. A
    connection without pipes is asked how many stdio servers were started: ``count``. Ends
    (its children killed) on ``SIGTERM`` or when its stdin closes (the test process is gone)."""
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(path)
    listener.listen(16)
    web = socket.socket()
    web.bind(("127.0.0.1", 0))
    web.listen(16)
    children: dict[int, socket.socket | None] = {}
    http_pid = os.fork()
    if http_pid == 0:
        listener.close()
        _serve_http(web)
    children[http_pid] = None
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    selector.register(wake_read, selectors.EVENT_READ)
    selector.register(sys.stdin, selectors.EVENT_READ)  # the test process's pipe: its end, ours
    print(f"ready {web.getsockname()[1]}", flush=True)
    started = 0
    try:
        while True:
            for key, _ in selector.select():
                if key.fileobj is listener:
                    link, _ = listener.accept()
                    message, fds, _, _ = socket.recv_fds(link, 1 << 20, 3)
                    if not fds:
                        link.sendall(str(started).encode())
                        link.close()
                        continue
                    pid = os.fork()
                    if pid == 0:
                        _serve_stdio(json.loads(message), fds)
                    started += 1
                    for fd in fds:
                        os.close(fd)
                    children[pid] = link
                    selector.register(link, selectors.EVENT_READ, pid)
                elif key.fileobj == wake_read:
                    os.read(wake_read, 512)
                    _reap(children, selector)
                elif key.fileobj is sys.stdin:
                    return  # the test process is gone (or closed us): so are its servers
                else:  # a launcher: "T", or it is gone
                    link = key.fileobj
                    assert isinstance(link, socket.socket)
                    with contextlib.suppress(OSError):
                        link.recv(16)
                        os.kill(key.data, signal.SIGTERM)
                    selector.unregister(link)
    finally:
        for pid in children:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)


def _reap(children: dict[int, socket.socket | None], selector: selectors.BaseSelector) -> None:
    """Tell each launcher whose server exited its status."""
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        link = children.pop(pid, None)
        if link is not None:
            with contextlib.suppress(OSError, KeyError, ValueError):
                selector.unregister(link)
            with contextlib.suppress(OSError):
                link.sendall(str(os.waitstatus_to_exitcode(status)).encode())
                link.close()


if __name__ == "__main__":
    if sys.argv[1:2] == ["zygote"]:
        try:
            zygote(sys.argv[2])
        finally:
            os._exit(0)  # its children are gone: no interpreter shutdown to wait for
    else:
        app.run()
