"""The console script's entry point: Ctrl-C (or SIGTERM, SIGHUP) while the command's modules
load exits with the signal's code (130, 143, 129) and one ``Error:`` line.

It imports nothing heavy itself, so the window a raw traceback could show in is the few
milliseconds of the interpreter's own start-up.
"""

from __future__ import annotations

import sys

from react_cli.infra import interrupts


def main() -> None:
    try:
        with interrupts.catching():
            from react_cli.cli import main as run
    except KeyboardInterrupt:
        print(f"Error: {interrupts.interrupted()}", file=sys.stderr, flush=True)
        raise SystemExit(interrupts.exit_code()) from None
    run()
