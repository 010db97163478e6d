"""Consent rules as settings: ``--allow-tool`` / ``--deny-tool`` and the config file's
``[tools]`` table (``allow = [...]``, ``deny = [...]``).

A rule is a tool's name or a glob of one (``*`` any run of characters, ``?`` one), read in
any case: what a tool name may hold (letters, digits, ``_``, ``.``, ``-``) and the two
wildcards, 128 characters at most, so a rule is never a regex to run on untrusted names.
The flags add to the table's rules (they never replace them): a rule written in the config
file holds for every command. What the rules mean, and which names of a tool they match, is
``tools.consent``'s.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from react_cli.core.errors import UsageError
from react_cli.core.wording import quoted

TOOLS_TABLE = "tools"  # [tools] allow = ["notes.*"], deny = ["files.write_*"]
RULES = {"allow": "tool_allow", "deny": "tool_deny"}
"""Each key of the table and the setting it fills (``--allow-tool``, ``--deny-tool``)."""
MAX_RULE_CHARS = 128
RULE = re.compile(rf"[A-Za-z0-9_.*?-]{{1,{MAX_RULE_CHARS}}}")


def checked(rule: object, where: str) -> str:
    """``rule`` if it is one (see the module docstring); UsageError naming ``where`` it is."""
    if not isinstance(rule, str) or not RULE.fullmatch(rule):
        raise UsageError(
            f"{where}: {quoted(rule)} is no tool name or glob (letters, digits, '_', '.', "
            f"'-', '*' and '?'; {MAX_RULE_CHARS} characters at most)"
        )
    return rule


def tool_rules(
    table: Any, flags: dict[str, Iterable[str] | None], path: Path
) -> dict[str, tuple[str, ...]]:
    """The settings ``tool_allow`` and ``tool_deny``: the ``[tools]`` table's rules, then the
    flags' (each rule once, in order); UsageError for a table or rule that is none."""
    if table is None:
        table = {}
    where = f"config file {path} [{TOOLS_TABLE}]"
    if not isinstance(table, dict):
        raise UsageError(f'{where}: a table such as allow = ["notes.*"], deny = ["rm"]')
    unknown = sorted(set(table) - set(RULES))
    if unknown:
        named = ", ".join(quoted(key) for key in unknown)
        raise UsageError(f"{where}: unknown key(s) {named} (use allow and deny)")
    rules: dict[str, tuple[str, ...]] = {}
    for key, setting in RULES.items():
        written = table.get(key, [])
        if not isinstance(written, list):
            raise UsageError(f"{where}: {key} is a list of tool names or globs")
        found = [checked(rule, f"{where} {key}") for rule in written]
        found += [checked(rule, f"--{key}-tool") for rule in flags.get(setting) or ()]
        rules[setting] = tuple(dict.fromkeys(found))
    return rules
