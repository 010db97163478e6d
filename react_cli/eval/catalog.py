"""Datasets by name: the files the paper used as the shipped manifest pins them, where each is
installed and whether it was checked; and the sample shipped inside react-cli.

The manifest (``react_cli/data/datasets.json``, package data) gives each dataset's official
URL, its size and SHA-256 and where that pin came from (a file whose checksum could not be
found is pinned by its size alone). ``REACT_CLI_DATA_MANIFEST`` names a manifest of your own
instead (a private mirror's files, the tests' small ones), read as untrusted input like the
shipped one. A dataset is installed as ``<home>/data/<file>``, by ``react-cli data get`` or
by hand, and used only once it matches its pin: checked once, then remembered until the file
changes (``infra.download.verify``). ``eval NAME`` and ``wiki build-zim NAME`` find it here.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from react_cli.core.errors import UsageError
from react_cli.core.records import StrEnum
from react_cli.core.wording import PATH_CHARS, byte_text, clipped, closest, did_you_mean, quoted
from react_cli.eval.files import SUMMARY
from react_cli.infra.download import part_path
from react_cli.infra.pins import SHA256, Pin, verified, verify
from react_cli.infra.untrusted import BadInput, parse_json, read_text
from react_cli.settings.environment import DATA_MANIFEST_ENV
from react_cli.settings.resolve import absolute_path, home_dir

SHIPPED_DATA = Path(__file__).resolve().parent.parent / "data"
MANIFEST = SHIPPED_DATA / "datasets.json"
SAMPLE = "hotpotqa-sample"
SAMPLE_FILE = SHIPPED_DATA / "hotpotqa-sample.json"
SAMPLE_TITLE = "The first 10 HotpotQA dev questions, distractor setting, shipped with react-cli"
MAX_MANIFEST_BYTES = 1 << 20
MAX_DATASETS = 1000
MAX_SIZE = 1 << 40  # 1 TB: a size beyond it is a typo
NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,62}")
FILE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,126}")
TEXT_CHARS = 300


@dataclass(frozen=True)
class Named:
    """One dataset of the manifest: its name, what it is, where it comes from, the file it is
    installed as, its pin and the pin's source, its licence."""

    name: str
    title: str
    url: str
    file: str
    pin: Pin
    pin_source: str = ""
    license: str = ""

    def installed(self) -> Path:
        return data_folder() / self.file

    def get_command(self) -> str:
        return f"react-cli data get {self.name}"


class State(StrEnum):
    """Where a dataset is, as ``data list`` says it."""

    SHIPPED = "shipped"
    VERIFIED = "verified"
    UNCHECKED = "not checked yet"
    PARTIAL = "partly downloaded"
    MISSING = "not downloaded"


def data_folder() -> Path:
    """``<home>/data``, where datasets are installed."""
    return home_dir() / "data"


def manifest() -> tuple[Named, ...]:
    """The datasets ``data get`` knows: the shipped manifest's, or those of the manifest
    ``REACT_CLI_DATA_MANIFEST`` names; UsageError for one that cannot be read."""
    given = os.environ.get(DATA_MANIFEST_ENV)
    path = absolute_path(given) if given else MANIFEST
    where = f"dataset manifest {path}"
    try:
        document = parse_json(read_text(path, MAX_MANIFEST_BYTES))
    except (OSError, BadInput) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise UsageError(f"{where}: {reason}") from None
    entries = document.get("datasets") if isinstance(document, dict) else None
    if not isinstance(entries, list) or len(entries) > MAX_DATASETS:
        raise UsageError(f'{where}: expected {{"datasets": [...]}} of at most {MAX_DATASETS}')
    found = [_entry(entry, f"{where} entry {n}") for n, entry in enumerate(entries)]
    names = [entry.name for entry in found]
    files = [entry.file for entry in found]
    if len(set(names)) != len(names) or len(set(files)) != len(files) or SAMPLE in names:
        raise UsageError(f"{where}: two datasets share a name or a file (or name {SAMPLE})")
    return tuple(found)


def _entry(entry: Any, where: str) -> Named:
    if not isinstance(entry, dict):
        raise UsageError(f"{where}: not a JSON object")
    text = {key: entry.get(key) for key in ("name", "title", "url", "file", "pin", "license")}
    for key in ("name", "url", "file"):
        if not isinstance(text[key], str):
            raise UsageError(f"{where}: no {key!r} text")
    name, url, file = str(text["name"]), str(text["url"]), str(text["file"])
    if not NAME.fullmatch(name):
        raise UsageError(f"{where}: name {quoted(name)} is not lower-case letters, digits, -._")
    if not FILE.fullmatch(file) or file.endswith((".part", ".verified")):
        raise UsageError(f"{where}: file {quoted(file)} is not a plain file name")
    if not url.startswith(("http://", "https://")) or not url.isprintable() or " " in url:
        raise UsageError(f"{where}: url {quoted(url)} is not an http(s) URL")
    size, sha256 = entry.get("size"), entry.get("sha256")
    if size is not None and (isinstance(size, bool) or not isinstance(size, int)):
        raise UsageError(f"{where}: size {quoted(size)} is not a number of bytes")
    if size is not None and not 0 < size <= MAX_SIZE:
        raise UsageError(f"{where}: size {quoted(size)} is not a number of bytes")
    if sha256 is not None and not (isinstance(sha256, str) and SHA256.fullmatch(sha256)):
        raise UsageError(f"{where}: sha256 {quoted(sha256)} is not 64 lower-case hex digits")
    if size is None and sha256 is None:
        raise UsageError(f"{where}: {name} has no pin: give its size, its sha256 or both")
    extra = {key: _text(text[key]) for key in ("title", "pin", "license")}
    return Named(name, extra["title"], url, file, Pin(size, sha256), extra["pin"], extra["license"])


def _text(value: object) -> str:
    return " ".join(value.split())[:TEXT_CHARS] if isinstance(value, str) else ""


def names() -> list[str]:
    """Every dataset name: the shipped sample's, then the manifest's."""
    return [SAMPLE, *(entry.name for entry in manifest())]


def find(name: str) -> Named:
    """The manifest's dataset ``name``; UsageError naming the names (and the closest)."""
    for entry in manifest():
        if entry.name == name:
            return entry
    if name == SAMPLE:
        raise UsageError(f"{SAMPLE} is shipped with react-cli: nothing to download")
    raise UsageError(
        f"no dataset named {did_you_mean(name, names())}; the names: {', '.join(names())}"
    )


def state(entry: Named) -> State:
    """Whether ``entry`` is installed and checked (never reads the file: that is ``use``)."""
    path = entry.installed()
    if path.is_file():
        return State.VERIFIED if verified(path, entry.pin) else State.UNCHECKED
    return State.PARTIAL if part_path(path).is_file() else State.MISSING


def use(entry: Named) -> Path:
    """The installed file of ``entry``, checked against its pin (once; then remembered);
    UsageError saying how to get it when it is missing or not the file pinned."""
    path = entry.installed()
    if not path.is_file():
        size = f" ({byte_text(entry.pin.size)})" if entry.pin.size else ""
        raise UsageError(
            f"dataset {entry.name} is not downloaded yet: {entry.get_command()} fetches it{size}"
        )
    wrong = verify(path, entry.pin)
    if wrong is not None:
        raise UsageError(
            f"{path} is not the {entry.name} file pinned ({wrong}): "
            f"{entry.get_command()} --force downloads it again"
        )
    return path


def dataset_path(given: Path) -> Path:
    """What a DATASET argument names: a file (or folder) that exists, as it is; else the
    shipped sample or a manifest dataset by name (installed and checked); else UsageError
    naming the names."""
    if given.is_dir():
        evals = (given / SUMMARY).is_file()
        resume = f" (to continue the eval in it: --resume {given})" if evals else ""
        raise UsageError(f"dataset {given} is a folder, not a file{resume}")
    if given.exists() or given.is_symlink():
        return given
    text = str(given)
    named = named_dataset(text)
    if named is not None:
        return named
    known = names()
    close = closest(text, known)
    maybe = f" (did you mean {close}?)" if close else ""
    raise UsageError(
        f"no such dataset file: {clipped(text, PATH_CHARS)}{maybe}; or a dataset name: "
        f"{', '.join(known)} ('react-cli data list' shows them)"
    )


def named_dataset(text: str) -> Path | None:
    """The file of the dataset named ``text`` (the shipped sample, or a manifest dataset,
    installed and checked: UsageError else), None when no dataset has that name."""
    if text == SAMPLE:
        return SAMPLE_FILE
    if any(entry.name == text for entry in manifest()):
        return use(find(text))
    return None
