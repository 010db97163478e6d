"""The MCP zygotes of a run (``mcp_fixtures.Servers``), as a plugin: load it with
``pytest_plugins = ["mcp_zygotes"]`` and ask for ``servers`` (the zygote of ``mcp_server.py``) or
``files_servers`` (``mcp_files_server.py``'s).

Each zygote starts once per test process, the first time a test asks for it, and serves every
file after; the scheduler puts the files loading this plugin on one worker
(``scheduling.UNITS``), so each zygote and its import of the SDK (a second and a half of CPU on
the 2-core machine) is paid once a run, not once per file. Tests count the servers they start
as a difference (``started()`` before and after), never from zero.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from mcp_fixtures import Servers


@pytest.fixture(scope="session")
def servers() -> Iterator[Servers]:
    """The zygote of ``mcp_server.py``, the tests' own server."""
    made = Servers()
    yield made
    made.close()


@pytest.fixture(scope="session")
def files_servers() -> Iterator[Servers]:
    """The zygote of ``mcp_files_server.py``: the same server with file tools and results."""
    made = Servers("mcp_files_server.py")
    yield made
    made.close()
