"""The docs' own MCP examples, taken from ``docs/tools.md`` and run as written: ``~`` in a
server's ``command``, ``cwd`` and ``env`` (the ``[mcp]`` table) and in ``--mcp``'s command line
is expanded as a shell would, so ``python ~/notes/server.py`` starts ``$HOME/notes/server.py``
in ``$HOME/notes`` with ``NOTES_DIR`` set to it (an ``env`` value is a secret: observations
mask it, so the launcher records what it was given).

The server is the tests' SDK-written one, reached through the run's zygote
(``mcp_zygotes.servers``): ``~/notes/server.py`` is a launcher that writes where it was
started (its folder and arguments) and hands its pipes to the zygote.
"""

from __future__ import annotations

import json
import os
import re
import sys
import textwrap
from pathlib import Path

import pytest
from fake_mediawiki import FakeMediaWiki
from fake_openai import FakeOpenAI, scripted
from inproc import FAST_CONFIG, Runner, servers_env, toml_value
from mcp_fixtures import SUPPORT, Servers

pytest_plugins = ["mcp_zygotes"]  # servers: one zygote a run
ROOT = Path(__file__).resolve().parents[3]
PAGE = (ROOT / "docs" / "tools.md").read_text(encoding="utf-8")
SECTION = PAGE[PAGE.index("\n## MCP servers\n") :]
TABLE = SECTION[SECTION.index("```toml\n") + len("```toml\n") :]
TABLE = textwrap.dedent(TABLE[: TABLE.rindex("\n", 0, TABLE.index("```")) + 1])
"""The docs' ``[mcp]`` example, as printed there."""
COMMAND_LINE = re.search(r"react-cli ask --mcp '([^']*~[^']*)'", SECTION)
"""The docs' first ``--mcp 'COMMAND ARGS…'`` example (its arguments name ``~/notes``)."""

LAUNCHER = """\
import json, os, runpy, sys
with open({record!r}, "w") as out:
    json.dump({{"cwd": os.getcwd(), "argv": sys.argv[1:], "env": os.environ.get("NOTES_DIR")}}, out)
sys.argv = [{launch!r}, {socket!r}]
runpy.run_path({launch!r}, run_name="__main__")
"""


@pytest.fixture
def user_home(tmp_path: Path) -> Path:
    """The user's home (``$HOME``), its ``notes`` folder made."""
    folder = tmp_path / "user"
    (folder / "notes").mkdir(parents=True)
    return folder


def launcher(path: Path, servers: Servers, record: Path) -> None:
    launch = str(SUPPORT / "mcp_launch.py")
    path.write_text(
        LAUNCHER.format(record=str(record), launch=launch, socket=servers.socket), "utf-8"
    )


def user_env(llm: FakeOpenAI, wiki: FakeMediaWiki, home: Path) -> dict[str, str]:
    """The user's environment: ``$HOME``, and ``python`` on ``PATH`` (this interpreter)."""
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    return {**servers_env(llm, wiki), "HOME": str(home), "PATH": path}


def test_the_readme_mcp_table_starts_its_server_from_the_home_folder(
    cli: Runner, wiki: FakeMediaWiki, servers: Servers, user_home: Path, tmp_path: Path
) -> None:
    assert '[mcp.notes]\ncommand = "python ~/notes/server.py"' in TABLE
    assert 'env = { NOTES_DIR = "~/notes" }' in TABLE and '# cwd = "~/notes"' in TABLE
    table = TABLE.replace('# cwd = "~/notes"', 'cwd = "~/notes"')  # its commented-out line on
    table += "enabled = false\n"  # the example's docs.example.com: no network in tests
    record = tmp_path / "started.json"
    launcher(user_home / "notes" / "server.py", servers, record)
    fast = "".join(f"{key} = {toml_value(value)}\n" for key, value in FAST_CONFIG.items())
    cli.config_text(fast + "tool_timeout_s = 10.0\n" + table)
    script = (" Echo.\nAction 1: echo[hi]", " Done.\nAction 2: Finish[hi]")
    with FakeOpenAI(scripted(*script)) as llm:
        result = cli(["ask", "Say hi"], **user_env(llm, wiki, user_home))
    assert (result.code, result.stdout) == (0, "hi\n"), result.stderr
    assert cli.trace()["steps"][0]["actions"][0]["observation"] == "echo: hi"  # the server answered
    notes = str(user_home / "notes")
    started = json.loads(record.read_text(encoding="utf-8"))
    assert started == {"cwd": notes, "argv": [], "env": notes}


def test_the_readme_mcp_command_line_gets_its_home_folder_expanded(
    cli: Runner,
    wiki: FakeMediaWiki,
    servers: Servers,
    user_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert COMMAND_LINE is not None
    command = COMMAND_LINE.group(1)
    assert command == "python notes_server.py --dir ~/notes"
    monkeypatch.chdir(tmp_path)  # notes_server.py is the working directory's
    record = tmp_path / "started.json"
    launcher(tmp_path / "notes_server.py", servers, record)
    script = (" Echo.\nAction 1: echo[hi]", " Done.\nAction 2: Finish[hi]")
    with FakeOpenAI(scripted(*script)) as llm:
        result = cli(["ask", "--mcp", command, "Say hi"], **user_env(llm, wiki, user_home))
    assert (result.code, result.stdout) == (0, "hi\n"), result.stderr
    started = json.loads(record.read_text(encoding="utf-8"))
    notes = str(user_home / "notes")
    assert started == {"cwd": str(tmp_path), "argv": ["--dir", notes], "env": None}
