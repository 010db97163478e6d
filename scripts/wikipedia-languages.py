"""Regenerate react_cli/data/wikipedia-languages.txt from pywikibot's list of Wikipedias.

    pip download --no-deps -d /tmp/pwb pywikibot && unzip -o -d /tmp/pwb /tmp/pwb/*.whl
    python scripts/wikipedia-languages.py /tmp/pwb/pywikibot/families/wikipedia_family.py 11.9.0

Reads the ``codes`` (open wikis) and ``closed_wikis`` (closed, still readable) of the family
file without importing pywikibot.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "react_cli" / "data" / "wikipedia-languages.txt"
HEADER = """\
# Wikipedia language editions: the subdomain of https://CODE.wikipedia.org, one a line.
# Source: pywikibot {version} (MIT licence), pywikibot/families/wikipedia_family.py, the union of
# Family.codes (open wikis) and Family.closed_wikis (closed, still readable). Regenerate with
# scripts/wikipedia-languages.py from a newer pywikibot wheel.
"""


def family_lists(source: str) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Assign):
            continue
        target = node.targets[0]
        if isinstance(target, ast.Name) and target.id in ("codes", "closed_wikis"):
            found |= set(ast.literal_eval(node.value))
    return found


def main() -> None:
    family, version = Path(sys.argv[1]), sys.argv[2]
    codes = sorted(family_lists(family.read_text(encoding="utf-8")))
    OUT.write_text(HEADER.format(version=version) + "\n".join(codes) + "\n", encoding="utf-8")
    print(f"{OUT}: {len(codes)} languages")


if __name__ == "__main__":
    main()
