"""Every regex, parser and extractor over its worst input at 10 KB, 100 KB and 1 MB.

Each case feeds one function of react-cli the input its pattern or loop handles worst (long
runs of a repeated token, unclosed tags, nesting, near-misses of a secret) and times it; the
figure is the growth ratio for each ×10 in size. Linear code grows about 10×, quadratic code
about 100×; the goal is ≤ 12×. Times are the minimum of ``--repeat`` runs, in CPU time of the
process, so time the process spends waiting for a core does not count; a busy machine still
inflates them (a neighbour on the core evicts the caches), mostly at 1 MB.

``tests/test_pathological.py`` checks the same ``CASES`` for linear growth with
``best_time_s``, against a bound load cannot reach (its docstring says how).

Usage: python bench/pathological.py [--repeat N] [--sizes 10000,100000,1000000] [--only NAME]
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from react_cli.core.method import Method, Task  # noqa: E402
from react_cli.display import terminal  # noqa: E402
from react_cli.infra import untrusted  # noqa: E402
from react_cli.infra.redaction import Redactor  # noqa: E402
from react_cli.infra.sizelimit import capped_lines  # noqa: E402
from react_cli.llm.parameters import _MENTIONS_N  # noqa: E402
from react_cli.loop.text import cutter, parser, shown  # noqa: E402
from react_cli.methods import scoring  # noqa: E402
from react_cli.methods.answers import read_answer as answer_of  # noqa: E402
from react_cli.methods.vote import vote  # noqa: E402
from react_cli.tools import output, wikipedia  # noqa: E402
from react_cli.tools.base import FINISH, ToolSpec  # noqa: E402
from react_cli.tools.consent import matches  # noqa: E402
from react_cli.tools.paper import PAPER_TOOLS  # noqa: E402
from react_cli.wiki import html, html_body, sentences, titles, zim, zimbuild  # noqa: E402
from react_cli.wiki.query_answer import read_answer  # noqa: E402

SIZES = (10_000, 100_000, 1_000_000)
SECRET = "sk-" + "a" * 40


@dataclass(frozen=True)
class Case:
    """``run(make(size))`` is timed; ``make`` builds an input of about ``size`` characters."""

    name: str
    make: Callable[[int], Any]
    run: Callable[[Any], object]


def repeat(unit: str, size: int) -> str:
    return unit * max(1, size // len(unit))


def chunks(text: str, width: int) -> list[str]:
    return [text[i : i + width] for i in range(0, len(text), width)]


def feed_all(pieces: list[str]) -> str:
    stream = cutter.ObservationCutter()
    return "".join(stream.feed(piece) for piece in pieces) + stream.flush()


def thought_shown(pieces: list[str]) -> str:
    stream = shown.ThoughtShown(PAPER_TOOLS)
    return "".join(stream.feed(piece) for piece in pieces) + stream.end()


def sse_lines(pieces: list[str]) -> int:
    return sum(1 for _ in capped_lines([piece.encode() for piece in pieces], 10**9))


loads, split, clean = untrusted.loads, sentences.split_sentences, titles.clean_entity
disamb, REDACT = zim._is_disambiguation, Redactor([SECRET])


UNCLOSED = '<style><h2><sup class="<a<div id="toc"<math'  # each opening the slicer skips


def held_then_obs(size: int) -> str:
    """A line of marks that may still become "Observation" (held), then short lines."""
    return repeat("* ", size // 2) + repeat("Obs\n", size // 2)


def lines_then_labels(size: int) -> str:
    """Lines of emphasis and quote marks (the thought), then Action labels with no action."""
    return repeat("\n" + "*_> " * 8, size // 2) + repeat(" Action:", size // 2)


def open_escapes(size: int) -> str:
    """OSC sequences never terminated, then a CSI sequence never finished."""
    return repeat("\x1b]x", size // 2) + "\x1b[" + repeat("0", size // 2)


def cot_answer(text: str) -> str | None:
    return answer_of(Method.COT, text)


def votes(answers: list[str]) -> object:
    return vote(answers, Task.HOTPOTQA)


def many_pages(size: int) -> dict[str, object]:
    """A ``query`` object of a MediaWiki answer with as many pages as fit in ``size``."""
    return {"pages": [{"title": f"T{i}", "extract": "x" * 200} for i in range(size // 220)]}


JSON_TOOLS = (ToolSpec("edit", "old, new", "Edit.", {"type": "object", "properties": {}}), FINISH)


def json_action(unit: str) -> Callable[[int], str]:
    """An action whose JSON argument is ``unit`` repeated: strings holding brackets, a string
    that never ends, brackets that never close."""
    return lambda size: "Action 1: edit[{" + repeat(unit, size) + "]"


def json_step(text: str) -> object:
    return parser.parse_step(text, JSON_TOOLS)


def tool_result(text: str) -> str:
    return output.shown_result(text, 2000, Redactor())


def near_miss_rule(name: str) -> bool:
    """A rule whose parts nearly match everywhere (a tool's name is short: this is the bound)."""
    return matches("*a?" + "a" * 60 + "b*a*", name)


CASES = [
    # The model's text (cutter.py, parser.py)
    Case("cut_at_observation: marks", lambda n: repeat("* _ # > ", n), cutter.cut_at_observation),
    Case("cutter: a held line, 'Obs' lines", lambda n: chunks(held_then_obs(n), 16), feed_all),
    Case("strip_think: unclosed tags", lambda n: repeat("<think>", n), cutter.strip_think),
    Case("parse_step: emphasis lines, labels", lambda n: lines_then_labels(n), parser.parse_step),
    Case("parse_step: '[' runs", lambda n: "Finish" + repeat("[", n), parser.parse_step),
    Case("parse_step: JSON strings holding ']'", json_action('"a]",'), json_step),
    Case("parse_step: JSON string never ended", json_action('"'), json_step),
    Case("parse_step: JSON brackets never closed", json_action("{["), json_step),
    Case("tool result: lines, returns, blanks", lambda n: repeat(" \r\n\n\x1b[0m", n), tool_result),
    Case("thought shown: 'Act' words", lambda n: chunks(repeat(" Act", n), 16), thought_shown),
    Case("thought shown: lines, labels", lambda n: chunks(lines_then_labels(n), 16), thought_shown),
    Case("thought shown: one endless word", lambda n: chunks("S" * n, 16), thought_shown),
    # The methods' answers and votes (methods/), the refusal of n (llm/client.py)
    Case("CoT answer: a line of marks", lambda n: repeat("*_> -", n), cot_answer),
    Case("CoT answer: near-labels", lambda n: repeat("> **Answe\n", n), cot_answer),
    Case("vote: distinct answers", lambda n: [f"the answer {i}!" for i in range(n // 64)], votes),
    Case("n refused: no word n", lambda n: repeat("nn n_", n), _MENTIONS_N.search),
    # The stream and the answers around it (sizelimit.py, untrusted.py, redaction.py)
    Case("SSE lines: 16-byte pieces", lambda n: chunks(repeat(": ping\n\n", n), 16), sse_lines),
    Case("JSON: lone surrogate escapes", lambda n: json.dumps([repeat("\ud800x", n)]), loads),
    Case("redactor: near-misses, one hit", lambda n: repeat(SECRET[:-1] + " ", n) + SECRET, REDACT),
    # Wikipedia answers and ZIM pages (wiki/)
    Case("page_sentences: '=' line", lambda n: repeat("=", n) + "x", wikipedia.page_sentences),
    Case("split_sentences: initials, citations", lambda n: repeat("U.S. e.g. .[1]", n), split),
    Case("clean_entity: nested quotes", lambda n: repeat("“", n // 2) + repeat("”", n // 2), clean),
    Case("clean_entity: stacked full stops", lambda n: "x" + repeat(" .", n), clean),
    Case("clean_entity: wide full stops", lambda n: "xy" + repeat("。", n), clean),
    Case("fold: punctuation and CJK", lambda n: repeat("貓 -", n), titles.fold),
    Case("body_slice: every tag unclosed", lambda n: repeat(UNCLOSED, n), html_body.body_slice),
    Case("article_text: nested <div>", lambda n: repeat("<div>" + "x" * 95, n), html.article_text),
    Case("disambiguation: open class", lambda n: 'class="' + repeat("disambig ", n), disamb),
    Case("zimbuild heading: '=' line", lambda n: repeat("=", n) + "x", zimbuild._heading),
    Case("MediaWiki answer: many pages", many_pages, read_answer),
    # Elsewhere (terminal.py, scoring.py, consent.py)
    Case("plain: open OSC, unfinished CSI", lambda n: open_escapes(n), terminal.plain),
    Case("consent rule: near-misses", lambda n: repeat("a", n), near_miss_rule),
    Case("normalize_answer: articles", lambda n: repeat("a an the ", n), scoring.normalize_answer),
]


def best_time_s(case: Case, data: Any, runs: int) -> float:
    """The fastest of ``runs`` runs of ``case`` on ``data``, in CPU time of this process,
    with the garbage collector off during (a collection inside a run would charge it for
    objects it did not make). Only the young generation is collected before: a full collection
    costs what the whole heap holds, which in the test process, after a thousand tests, is
    ten times the measurement itself."""
    best = float("inf")
    gc.collect(0)
    gc.disable()
    try:
        for _ in range(runs):
            started = time.process_time()
            case.run(data)
            best = min(best, time.process_time() - started)
    finally:
        gc.enable()
    return best


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--repeat", type=int, default=3)
    options.add_argument("--sizes", default=",".join(map(str, SIZES)))
    options.add_argument("--only", help="run the cases whose name contains this")
    args = options.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    cases = [c for c in CASES if not args.only or args.only in c.name]
    header = "".join(f"{size // 1000:>9} KB" for size in sizes)
    growth = "".join(f"{'×' + str(b // a):>9}" for a, b in itertools.pairwise(sizes))
    print(f"{'case':40}{header}   growth{growth}")
    worst = 0.0
    for case in cases:
        times = [best_time_s(case, case.make(size), args.repeat) for size in sizes]
        ratios = [b / a for a, b in itertools.pairwise(times)]
        worst = max(worst, *ratios) if ratios else worst
        cells = "".join(f"{t * 1000:9.2f} ms" for t in times)
        print(f"{case.name:40}{cells}         {''.join(f'{r:9.1f}' for r in ratios)}")
    print(f"worst growth per ×10: {worst:.1f} (goal ≤ 12)")


if __name__ == "__main__":
    main()
