"""MCP over stdio: a large result read by the SDK's transport and by react-cli's, and what a
server costs to start and stop.

A raw child process (no SDK: it answers ``initialize``, then each ``tools/call`` with a text of
N characters, written twice as MCP servers do, in ``content`` and ``structuredContent``) is read
through the SDK's ``ClientSession`` over (a) the SDK's ``stdio_client`` and (b) react-cli's
``tools.mcp.transport.stdio_streams``; median wall time of the call. ``--starts K`` then starts
the test server of ``tests/support/mcp_server.py`` (written with the SDK) K times through
react-cli's toolbox: start + ``initialize`` + listing, and the stop.

Usage: python bench/mcp_stdio.py [--sizes 1000000,10000000] [--repeat 3] [--starts 5]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from statistics import median
from typing import Any

from _common import TESTS

RAW_SERVER = r"""
import json, sys
for line in sys.stdin:
    request = json.loads(line)
    if "id" not in request:
        continue
    if request["method"] == "initialize":
        result = {"protocolVersion": request["params"]["protocolVersion"], "capabilities": {},
                  "serverInfo": {"name": "raw", "version": "1"}}
    elif request["method"] == "tools/list":
        schema = {"type": "object", "properties": {"size": {"type": "string"}}}
        result = {"tools": [{"name": "big", "inputSchema": schema}]}
    else:
        text = "x" * int(request["params"]["arguments"]["size"])
        result = {"content": [{"type": "text", "text": text}],
                  "structuredContent": {"result": text}, "isError": False}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}) + "\n")
    sys.stdout.flush()
"""

Opener = Callable[[], AbstractAsyncContextManager[Any]]


def sdk_streams() -> AbstractAsyncContextManager[Any]:
    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=sys.executable, args=["-c", RAW_SERVER])
    return stdio_client(params, errlog=open(os.devnull, "w"))


def our_streams() -> AbstractAsyncContextManager[Any]:
    from react_cli.tools.mcp.transport import Link, stdio_streams

    return stdio_streams((sys.executable, "-c", RAW_SERVER), dict(os.environ), None, Link())


async def timed_call(open_streams: Opener, size: int) -> float:
    from mcp import ClientSession

    async with open_streams() as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        started = time.perf_counter()
        result = await session.call_tool("big", {"size": str(size)})
        elapsed = time.perf_counter() - started
        assert len(result.content[0].text) == size  # type: ignore[union-attr]
        return elapsed


def starts(count: int) -> tuple[list[float], list[float]]:
    from react_cli.settings.resolve import resolve
    from react_cli.tools.users import open_user_tools

    server = f"{sys.executable} {TESTS / 'support' / 'mcp_server.py'}"
    opened, closed = [], []
    for _ in range(count):
        began = time.perf_counter()
        toolbox = open_user_tools(resolve({"mcp": [server]}, {}))
        opened.append(time.perf_counter() - began)
        began = time.perf_counter()
        toolbox.close()
        closed.append(time.perf_counter() - began)
    return opened, closed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000000,10000000", help="result sizes (characters)")
    parser.add_argument("--repeat", type=int, default=3, help="calls per size and transport")
    parser.add_argument("--starts", type=int, default=5, help="test server starts")
    args = parser.parse_args()
    for size in (int(s) for s in args.sizes.split(",")):
        for name, opener in (("SDK stdio_client", sdk_streams), ("react-cli", our_streams)):
            times = [asyncio.run(timed_call(opener, size)) for _ in range(args.repeat)]
            print(f"{size:>11,} characters, {name:<16}: median {median(times):.3f} s")
    if args.starts:
        opened, closed = starts(args.starts)
        print(f"test server start + initialize + listing: median {median(opened):.2f} s")
        print(f"test server stop: median {median(closed):.3f} s")


if __name__ == "__main__":
    main()
