"""The console script's entry point: Ctrl-C while the command's modules load exits with 130.

It imports nothing heavy itself, so the window a raw traceback could show in is the few
milliseconds of the interpreter's own start-up.
"""

from __future__ import annotations

import sys

from react_cli.core.errors import EXIT_INTERRUPTED


def main() -> None:
    try:
        from react_cli.cli import main as run
    except KeyboardInterrupt:
        print("Error: interrupted", file=sys.stderr, flush=True)
        raise SystemExit(EXIT_INTERRUPTED) from None
    run()
