"""Kiwix's catalog (OPDS, ``library.kiwix.org/catalog/v2``): a ZIM archive found by its name,
with the URL, size and checksum to download it by (``react-cli wiki get NAME``).

A name is the catalog's name and flavour, as an archive's file is named without its month:
``wikipedia_en_top_nopic`` (the top selection, no pictures), ``wikipedia_en_100_mini``,
``wikipedia_en_all_maxi``; a name without a flavour is enough when the catalog has one
flavour of it. The catalog is asked for the entries of that name (``entries?name=``), which a
static mirror may ignore and answer with every entry: the match is made here. An entry's
acquisition link names the file (``….zim``) or its Metalink (``….zim.meta4``, the file beside
it); the SHA-256 comes from the Metalink, else from the ``.sha256`` file beside the archive,
else the file is pinned by the size the catalog gives.

What the catalog and its files say is hostile input: fetched under a size limit, parsed
without a DTD, entity expansion or network access, every field bounded, a file name that
could leave its folder refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

from react_cli.core.errors import DownloadError, UsageError
from react_cli.core.wording import byte_text, closest
from react_cli.infra.download import Fetcher, mirrored
from react_cli.infra.pins import SHA256, Pin

CATALOG = "https://library.kiwix.org/catalog/v2/entries"
FLAVOURS = ("maxi", "nopic", "mini", "novid")
MAX_CATALOG_BYTES = 16 << 20  # every entry of the catalog is ~12 MB
MAX_METALINK_BYTES = 4 << 20  # a 100 GB archive's piece hashes
MAX_CHECKSUM_BYTES = 4096
MAX_ENTRIES = 50_000
FIELD_CHARS = 300
ATOM = "{http://www.w3.org/2005/Atom}"
DC = "{http://purl.org/dc/terms/}"
METALINK = "{urn:ietf:params:xml:ns:metalink}"
ACQUISITION = "http://opds-spec.org/acquisition/open-access"
FILE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,200}\.zim")
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,200}")
_DOCTYPE = re.compile(rb"<!doctype|<!entity", re.IGNORECASE)


@dataclass(frozen=True)
class Book:
    """One archive of the catalog."""

    name: str  # the catalog's: wikipedia_en_top
    flavour: str  # nopic, maxi, mini, … or ""
    title: str
    language: str  # ISO 639-3: eng
    date: str  # when it was made: 2026-06-01
    articles: int | None
    size: int | None
    link: str  # the acquisition link as the catalog gives it (a .meta4 or the .zim)

    @property
    def full_name(self) -> str:
        """What ``wiki get`` and ``--wiki zim:`` call it: name and flavour."""
        return f"{self.name}_{self.flavour}" if self.flavour else self.name

    @property
    def url(self) -> str:
        """The archive itself (a Metalink's file is beside it, as Kiwix's server serves it)."""
        return self.link.removesuffix(".meta4")

    @property
    def file(self) -> str:
        """The archive's file name on the server."""
        return urlsplit(self.url).path.rsplit("/", 1)[-1]

    @property
    def local_file(self) -> str:
        """Its file name in ``<home>/zim``: the server's when it starts with the full name
        (``wikipedia_en_top_nopic_2026-06.zim``), else the full name and month (a ``maxi``
        archive's file leaves its flavour out), so that ``zim:FULL_NAME`` finds it."""
        from react_cli.settings.archives import archive_name

        name, month = archive_name(self.file)
        if name == self.full_name:
            return self.file
        return f"{self.full_name}_{month or self.date[:7]}.zim"


def catalog_url(name: str) -> str:
    """The catalog's entries of ``name`` (its flavour left out: the catalog filters by name)."""
    base = _base_name(name)
    return f"{CATALOG}?name={quote(base, safe='')}&count=-1"


def _base_name(name: str) -> str:
    for flavour in FLAVOURS:
        if name.endswith(f"_{flavour}"):
            return name.removesuffix(f"_{flavour}")
    return name


def parse_catalog(data: bytes) -> list[Book]:
    """The archives an OPDS answer lists (entries that cannot be read are left out);
    DownloadError for an answer that is no catalog."""
    root = _xml(data, "the catalog")
    if root.tag != f"{ATOM}feed":
        raise DownloadError("the catalog answered with something that is not an OPDS feed")
    books: list[Book] = []
    for entry in root.iterchildren(f"{ATOM}entry"):
        if len(books) >= MAX_ENTRIES:
            break
        book = _book(entry)
        if book is not None:
            books.append(book)
    return books


def _xml(data: bytes, what: str) -> Any:
    """``data`` parsed as XML without a DTD, entities, network or huge trees."""
    from lxml import etree

    if _DOCTYPE.search(data):
        raise DownloadError(f"{what} holds a document type declaration: refused")
    parser = etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        huge_tree=False,
        remove_comments=True,
        remove_pis=True,
    )
    try:
        return etree.fromstring(data, parser)
    except etree.XMLSyntaxError:
        raise DownloadError(f"{what} is not readable XML") from None


def _text(entry: Any, tag: str) -> str:
    found = entry.find(tag)
    text = found.text if found is not None and isinstance(found.text, str) else ""
    return " ".join(text.split())[:FIELD_CHARS]


def _number(text: str) -> int | None:
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 15 else None


def _book(entry: Any) -> Book | None:
    """One entry, if it names an archive that can be downloaded."""
    name, flavour = _text(entry, f"{ATOM}name"), _text(entry, f"{ATOM}flavour")
    links = [
        link
        for link in entry.iterchildren(f"{ATOM}link")
        if link.get("rel") == ACQUISITION and link.get("type") == "application/x-zim"
    ]
    if not links or not NAME.fullmatch(name) or (flavour and not NAME.fullmatch(flavour)):
        return None
    href, length = str(links[0].get("href") or ""), str(links[0].get("length") or "")
    if not href.startswith(("https://", "http://")) or not href.isprintable() or " " in href:
        return None
    book = Book(
        name,
        flavour,
        _text(entry, f"{ATOM}title"),
        _text(entry, f"{ATOM}language"),
        _text(entry, f"{DC}issued")[:10],
        _number(_text(entry, f"{ATOM}articleCount")),
        _number(length),
        href,
    )
    return book if FILE_NAME.fullmatch(book.file) else None


def choose(books: list[Book], name: str) -> Book:
    """The book ``name`` names: its full name (name and flavour), its file's name without the
    month, or its name when only one flavour has it; UsageError otherwise, saying what the
    catalog has."""
    from react_cli.settings.archives import archive_name

    for key in (
        lambda book: book.full_name,
        lambda book: book.file.removesuffix(".zim"),  # with its month
        lambda book: archive_name(book.file)[0],  # the server's file name without its month
    ):
        found = [book for book in books if key(book) == name]
        if len(found) == 1:
            return found[0]
    flavours = [book for book in books if book.name == name]
    if len(flavours) == 1:
        return flavours[0]
    if flavours:
        shown = ", ".join(f"{book.full_name} ({_size(book)})" for book in flavours)
        raise UsageError(f"{name} comes in {len(flavours)} flavours: {shown}; name one")
    close = closest(name, {book.full_name for book in books})
    maybe = f" (did you mean {close}?)" if close else ""
    raise UsageError(
        f"Kiwix's catalog has no archive named {name}{maybe}: names look like "
        "wikipedia_en_100_nopic, wikipedia_en_top_nopic, wikipedia_en_all_nopic "
        "(https://library.kiwix.org lists them)"
    )


def _size(book: Book) -> str:
    return byte_text(book.size) if book.size else "size unknown"


def parse_metalink(data: bytes) -> Pin:
    """The size and SHA-256 a Metalink (RFC 5854) gives its first file (None where none)."""
    root = _xml(data, "the archive's Metalink")
    file = root.find(f"{METALINK}file")
    if file is None:
        return Pin()
    size = _number(_text(file, f"{METALINK}size"))
    hashes = [h for h in file.iterchildren(f"{METALINK}hash") if h.get("type") == "sha-256"]
    digest = (hashes[0].text or "").strip().lower() if hashes else ""
    return Pin(size, digest if SHA256.fullmatch(digest) else None)


def parse_checksum_file(data: bytes) -> str | None:
    """The SHA-256 a ``.sha256`` file gives (``HEX  name``), if it gives one."""
    words = data[:MAX_CHECKSUM_BYTES].decode("ascii", "replace").split()
    digest = words[0].lower() if words else ""
    return digest if SHA256.fullmatch(digest) else None


def find_book(fetcher: Fetcher, name: str, mirror: str | None) -> Book:
    """The catalog's archive ``name`` (asked of ``mirror`` when given)."""
    if not NAME.fullmatch(name):
        raise UsageError(f"an archive's name is letters, digits and -._, not {name!r}")
    answer = fetcher.fetch(mirrored(catalog_url(name), mirror), MAX_CATALOG_BYTES)
    return choose(parse_catalog(answer), name)


def book_pin(fetcher: Fetcher, book: Book, mirror: str | None) -> Pin:
    """What the archive must be: its Metalink's size and SHA-256, else the SHA-256 file
    beside it and the catalog's size, else that size alone."""
    if book.link.endswith(".meta4"):
        try:
            pin = parse_metalink(fetcher.fetch(mirrored(book.link, mirror), MAX_METALINK_BYTES))
        except DownloadError as exc:
            if exc.unreachable:
                raise
        else:
            if pin.sha256:
                return Pin(pin.size or book.size, pin.sha256)
    try:
        checksum = fetcher.fetch(mirrored(book.url + ".sha256", mirror), MAX_CHECKSUM_BYTES)
    except DownloadError as exc:
        if exc.unreachable:
            raise
        return Pin(book.size)
    return Pin(book.size, parse_checksum_file(checksum))
