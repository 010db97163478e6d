"""The archives installed in ``<home>/zim`` (``react-cli wiki list``): each one's name, language,
date, articles and size as the archive itself says them (read with libzim, as untrusted
input), and whether it was checked against a SHA-256 when it was downloaded."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from react_cli.infra.pins import checked_sha256
from react_cli.settings.archives import archive_name, zim_folder
from react_cli.settings.resolve import home_dir

METADATA_CHARS = 100


@dataclass(frozen=True)
class Installed:
    """One archive of ``<home>/zim``; None where the archive does not say (or libzim is not
    installed: ``readable`` None)."""

    name: str
    path: Path
    size: int
    month: str
    title: str | None = None
    language: str | None = None
    date: str | None = None
    articles: int | None = None
    readable: bool | None = None
    sha256: str | None = None  # checked when it was downloaded, if it has not changed since


def installed() -> list[Installed]:
    """Every ``.zim`` file of ``<home>/zim``, by name then month."""
    folder = zim_folder(home_dir())
    try:
        files = sorted(p for p in folder.iterdir() if p.suffix == ".zim" and p.is_file())
    except OSError:
        return []
    found = [_read(path) for path in files]
    return sorted(found, key=lambda archive: (archive.name, archive.month))


def _read(path: Path) -> Installed:
    name, month = archive_name(path.name)
    size = path.stat().st_size
    digest = checked_sha256(path) or None
    try:
        from libzim.reader import Archive
    except ImportError:
        return Installed(name, path, size, month, sha256=digest)
    from react_cli.wiki.zim import silenced

    try:
        with silenced(2):
            archive = Archive(path)
        facts = {key: _metadata(archive, key) for key in ("Title", "Language", "Date")}
        articles = int(archive.article_count)
    except (RuntimeError, UnicodeDecodeError, KeyError, OSError, ValueError):
        return Installed(name, path, size, month, readable=False, sha256=digest)
    return Installed(
        name,
        path,
        size,
        month,
        facts["Title"],
        facts["Language"],
        facts["Date"],
        articles,
        readable=True,
        sha256=digest,
    )


def _metadata(archive: object, key: str) -> str | None:
    from react_cli.infra.untrusted import decode, plain

    try:
        raw = archive.get_metadata(key)  # type: ignore[attr-defined]
    except (RuntimeError, KeyError, UnicodeDecodeError):
        return None
    text = " ".join(plain(decode(bytes(raw))).split())
    return text[:METADATA_CHARS] or None
