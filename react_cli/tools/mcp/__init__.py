"""Tools from MCP (Model Context Protocol) servers, with the official ``mcp`` SDK (the ``mcp``
extra, imported only when a server is configured).

- ``transport.py``: how bytes reach a server: its process over stdio (a reader of our own:
  bounded and linear, where the SDK's grows without bound and slows quadratically on a long
  line) or streamable HTTP (the SDK's, every answer bounded);
- ``bridge.py``: the one event loop (on one thread) that owns every connection of a command,
  and the calls the loop's threads make through it; nothing outlives ``close``;
- ``tools.py``: a server's listing as tool declarations, and its calls as observations;
- ``environment.py``: what a stdio server's process is given of the user's environment.
"""

from __future__ import annotations

from react_cli.core.errors import UsageError

INSTALL_MCP = "pip install 'react-cli[mcp]'"


def require_sdk() -> None:
    """UsageError naming the install when the ``mcp`` SDK is missing."""
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise UsageError(f"MCP servers need the 'mcp' extra: {INSTALL_MCP}") from None
