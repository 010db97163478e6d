"""Replay real "Could not find" Searches against a stand-in host: what do cleaning and folding save?

Data: ``bench/data/reflexion_search_misses.jsonl``, the 514 Searches of a real ReAct run
(text-davinci-003, 100 HotpotQA questions x 5 trials, live Wikipedia) that came back "Could
not find", each with the titles Wikipedia's search offered (see bench/README.md).

The stand-in host (tests/support/fake_mediawiki.py on 127.0.0.1) has a page for every offered title
and answers ``list=search`` with the recorded lists. Each Search is replayed twice: through
the backend alone with the entity as written (what react-cli did before cleaning and
folding) and through ``Wikipedia`` (cleaning, then folding on a miss).

Usage: python bench/search_folding.py
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from react_cli.infra.deadline import NO_DEADLINE  # noqa: E402
from react_cli.infra.http import make_session, user_agent  # noqa: E402
from react_cli.infra.retry import RetryPolicy  # noqa: E402
from react_cli.tools.wikipedia import Wikipedia  # noqa: E402
from react_cli.wiki.mediawiki import MediaWikiBackend  # noqa: E402
from react_cli.wiki.titles import clean_entity, fold, folded_match  # noqa: E402
from tests.support.fake_mediawiki import FakeMediaWiki  # noqa: E402

DATA = ROOT / "bench" / "data" / "reflexion_search_misses.jsonl"
SOURCE_SEARCHES = 1334  # Searches in the source log, hits included


@dataclass
class Tally:
    """Counts over the replayed misses."""

    folded_exact: int = 0
    reached: int = 0
    reached_by_cleaning: int = 0
    reached_by_folding: int = 0
    reached_before: int = 0
    true_misses: int = 0
    still_missing: int = 0
    exact_elsewhere: int = 0
    wrong_title: int = 0
    requests_before: int = 0
    requests_after: int = 0


def load() -> list[dict[str, object]]:
    with DATA.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def stand_in(rows: list[dict[str, object]]) -> FakeMediaWiki:
    """A host with a page per offered title, searching by the recorded lists."""
    titles = {title for row in rows for title in row["similar"]}  # type: ignore[attr-defined]
    results: dict[str, list[str]] = {}
    for row in rows:
        argument = str(row["argument"])
        for key in (argument, clean_entity(argument)):
            results.setdefault(key, list(row["similar"]))  # type: ignore[call-overload]
    pages = {title: f"{title} is a page. It stands in for the article." for title in titles}
    return FakeMediaWiki(pages, search_results=results)


def replay(rows: list[dict[str, object]]) -> Tally:
    tally = Tally()
    with stand_in(rows) as host:
        session = make_session(user_agent())
        backend = MediaWikiBackend(host.url, session, 10.0, policy=RetryPolicy(0))
        for row in rows:
            argument = str(row["argument"])
            similar = [str(t) for t in row["similar"]]  # type: ignore[attr-defined]
            expected = folded_match(clean_entity(argument), similar)
            host.requests.clear()
            before = backend.search(argument, deadline=NO_DEADLINE).article is not None
            tally.requests_before += len(host.requests)
            host.requests.clear()
            details = Wikipedia(backend).search(argument, deadline=NO_DEADLINE).details
            tally.requests_after += len(host.requests)
            title = details.get("resolved_title")
            if title is not None and fold(str(title)) != fold(argument):
                tally.wrong_title += 1
                continue
            if expected is None:
                tally.true_misses += 1
                tally.still_missing += title is None
                tally.exact_elsewhere += title is not None
                continue
            tally.folded_exact += 1
            tally.reached_before += before
            if title is None:
                continue
            tally.reached += 1
            if details["folded"]:
                tally.reached_by_folding += 1
            else:
                tally.reached_by_cleaning += 1
    return tally


def report(tally: Tally, misses: int) -> str:
    lines = [
        f"recorded Searches: {SOURCE_SEARCHES}; recorded 'Could not find': {misses}",
        f"folded-exact misses (an offered title equals the query once folded): "
        f"{tally.folded_exact}",
        f"  reach their article now: {tally.reached}/{tally.folded_exact} "
        f"(title lookup of the cleaned entity: {tally.reached_by_cleaning}, "
        f"folding over search results: {tally.reached_by_folding})",
        f"  reached before cleaning and folding (entity as written): {tally.reached_before}",
        f"true misses stay 'Could not find': {tally.still_missing}/{tally.true_misses} "
        f"(the others: the exact title, a page offered for another query: "
        f"{tally.exact_elsewhere})",
        f"Searches shown a page whose folded title differs from the query: {tally.wrong_title}",
        f"Search steps saved: {tally.reached} of {misses} wasted "
        f"({tally.reached - tally.reached_before} of them by cleaning and folding)",
        f"API requests for these Searches: {tally.requests_before} before, "
        f"{tally.requests_after} after",
    ]
    return "\n".join(lines)


def main() -> None:
    rows = load()
    print(report(replay(rows), len(rows)))


if __name__ == "__main__":
    main()
