"""``eval merge DIR… --out DIR``: the shards of one eval (``--shard I/N``) made one eval folder.

Every shard must be a part of the same eval: the same dataset (by name, format, size and
selection: machines keep it in different places), the same run settings but the endpoint's
URL (each machine has its own server) and the levels of concurrency, the same methods, tools
and consent rules. No question may be in two shards, and every part of the N must be there,
finished, unless ``partial`` (the merged summary says ``partial`` then, and ``--resume`` on it
runs what the missing parts held). The rows go through the eval's own store, so the merged
summary is what one eval of those rows would say; its ``wall_s`` is the longest shard's, its
``created`` the first one's.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path, PurePath
from typing import Any

from react_cli.core.errors import UsageError
from react_cli.eval.config import EvalConfig
from react_cli.eval.files import RESULTS, SUMMARY, TRACES, read_rows, read_summary
from react_cli.eval.rows import Row
from react_cli.eval.shard import Shard
from react_cli.eval.store import ResultsStore, claim_folder
from react_cli.eval.summary import EvalStatus, Summary
from react_cli.infra.files import write_json_atomic

_PER_MACHINE = ("base_url",)  # run settings that may differ between the shards' machines


@dataclass(frozen=True)
class Part:
    """One shard's folder as read: its summary, its shard and the last row of each question."""

    folder: Path
    summary: Summary
    shard: Shard
    rows: tuple[Row, ...]


def merge_shards(folders: Sequence[Path], out: Path, *, partial: bool = False) -> Summary:
    """Merge the shard folders into the new folder ``out`` (see the module docstring); the
    merged summary. UsageError for anything that does not make one eval."""
    parts = [_read(folder) for folder in folders]
    _check_same(parts)
    missing = _check_parts(parts, partial)
    rows = _check_once(parts)
    first = parts[0].summary
    dataset = replace(first.dataset, selection=replace(first.dataset.selection, shard=None))
    keys = {row.key for row in rows}
    lock = claim_folder(out, resuming=False)
    store = ResultsStore(out, lock, dataset, first.config, keys)
    try:
        for part in parts:
            _copy_traces(part, out)
        for row in sorted(rows, key=lambda row: row.index):
            store.add(row)
    finally:
        status = EvalStatus.PARTIAL if missing else EvalStatus.FINISHED
        summary = store.close(status)
    merged = replace(
        summary,
        created=min(part.summary.created for part in parts),
        wall_s=max(part.summary.wall_s for part in parts),
    )
    write_json_atomic(out / SUMMARY, merged.to_json())
    return merged


def _read(folder: Path) -> Part:
    if not folder.is_dir():
        raise UsageError(f"{folder}: no such eval folder")
    summary = read_summary(folder / SUMMARY)
    if summary is None:
        raise UsageError(f"{folder}: not an eval folder (no {SUMMARY})")
    shard = summary.dataset.selection.shard
    if shard is None:
        raise UsageError(f"{folder} is no shard (it ran without --shard I/N): nothing to merge")
    last = {row.key: row for row in read_rows(folder / RESULTS).rows}
    return Part(folder, summary, shard, tuple(last.values()))


def _check_same(parts: list[Part]) -> None:
    """UsageError naming the first shard of another eval than the first one."""
    first = parts[0]
    wanted = _identity(first.summary)
    for part in parts[1:]:
        if part.shard.count != first.shard.count:
            raise UsageError(
                f"{part.folder} is shard {part.shard} and {first.folder} shard {first.shard}: "
                "merge the shards of one split"
            )
        differ = next((k for k, v in _identity(part.summary).items() if wanted[k] != v), None)
        if differ is not None:
            raise UsageError(
                f"{part.folder} and {first.folder} are shards of different evals (their "
                f"{differ} differs): merge shards run with the same settings"
            )


def _identity(summary: Summary) -> dict[str, Any]:
    """What makes two shards parts of one eval, by name (what differs is named)."""
    dataset, config = summary.dataset, summary.config
    run = {k: v for k, v in config.run.items() if k not in _PER_MACHINE}
    wiki = run.get("wiki")
    if isinstance(wiki, str) and wiki.startswith("zim:"):  # one archive, wherever it is
        run["wiki"] = "zim:" + PurePath(wiki[4:]).name
    return {
        "dataset": (PurePath(dataset.path).name, dataset.format, dataset.rows),
        "selection": replace(dataset.selection, shard=None),
        "settings": run,
        "methods": config.methods,
        "tools": _tools(config),
    }


def _tools(config: EvalConfig) -> tuple[Any, ...]:
    files = tuple(sorted(f.sha256 for f in config.tool_files))
    return (config.wiki_tools, files, config.mcp, config.tool_allow, config.tool_deny)


def _check_parts(parts: list[Part], partial: bool) -> list[int]:
    """The parts of the N missing (or unfinished); UsageError for a part given twice, or for
    any missing without ``partial``."""
    count = parts[0].shard.count
    seen: dict[int, Path] = {}
    for part in parts:
        earlier = seen.get(part.shard.index)
        if earlier is not None:
            raise UsageError(f"{earlier} and {part.folder} are both shard {part.shard}")
        seen[part.shard.index] = part.folder
    unfinished = [p.shard.index for p in parts if p.summary.status is not EvalStatus.FINISHED]
    missing = sorted(set(range(1, count + 1)) - set(seen)) + sorted(unfinished)
    if missing and not partial:
        what = ", ".join(f"{index}/{count}" for index in missing[:20])
        raise UsageError(
            f"shards missing or unfinished: {what}; run them (or --resume them), or merge "
            "what there is with --partial"
        )
    return missing


def _check_once(parts: list[Part]) -> list[Row]:
    """Every shard's rows; UsageError when a question is in two of them."""
    where: dict[tuple[int, str], Path] = {}
    rows: list[Row] = []
    for part in parts:
        for row in part.rows:
            other = where.setdefault(row.key, part.folder)
            if other != part.folder:
                raise UsageError(
                    f"question {row.index} is in both {other} and {part.folder}: shards of one "
                    "split never share a question"
                )
            rows.append(row)
    return rows


def _copy_traces(part: Part, out: Path) -> None:
    """The traces a shard's rows name, copied into ``out`` (one inside the shard's folder,
    a regular file, not a link: a folder from elsewhere points nowhere else)."""
    root = part.folder.resolve()
    (out / TRACES).mkdir(exist_ok=True)
    for row in part.rows:
        for result in row.results().values():
            name = result.trace
            if name is None:
                continue
            source = part.folder / name
            try:
                inside = source.resolve().is_relative_to(root / TRACES)
            except (OSError, ValueError):
                continue
            if not inside or source.is_symlink() or not source.is_file():
                continue
            target = out / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
