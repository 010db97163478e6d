"""Kiwix's catalog and download server as a mirror lays them out (``REACT_CLI_DATA_URL``):
an OPDS feed written as libkiwix's ``catalog_v2_entries.xml`` template writes it, Metalinks as
MirrorBrain writes them, ``.sha256`` files, and the archives, served by ``file_server``.

The archive is the real Kiwix ZIM of the fixtures (``wikipedia_en_ray_charles_2015-06.zim``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

RAY = (
    Path(__file__).resolve().parents[1]
    / "fixtures"
    / "zim"
    / "wikipedia_en_ray_charles_2015-06.zim"
)
CATALOG_PATH = "/library.kiwix.org/catalog/v2/entries"
DOWNLOADS = "https://download.kiwix.org/zim/wikipedia"
MIRRORED = "/download.kiwix.org/zim/wikipedia"
ACQUISITION = "http://opds-spec.org/acquisition/open-access"


@dataclass
class Entry:
    """One catalog entry; ``link`` is the acquisition link (a ``.meta4`` or the ``.zim``)."""

    name: str
    flavour: str
    file: str
    size: int | None
    link: str = ""
    title: str = "Ray Charles"
    language: str = "eng"
    issued: str = "2015-06-02T00:00:00Z"
    articles: int = 85

    def __post_init__(self) -> None:
        self.link = self.link or f"{DOWNLOADS}/{self.file}.meta4"


def entry_xml(entry: Entry) -> str:
    length = "" if entry.size is None else f" length={quoteattr(str(entry.size))}"
    return f"""  <entry>
    <id>urn:uuid:2b9b5ad0-7c58-e0e1-d3a4-8fb5b1e6d0d1</id>
    <title>{escape(entry.title)}</title>
    <updated>2015-06-05T00:00:00Z</updated>
    <summary>Ray Charles and the pages around him</summary>
    <language>{escape(entry.language)}</language>
    <name>{escape(entry.name)}</name>
    <flavour>{escape(entry.flavour)}</flavour>
    <category>wikipedia</category>
    <tags>wikipedia;_category:wikipedia;_pictures:yes</tags>
    <articleCount>{entry.articles}</articleCount>
    <mediaCount>12</mediaCount>
    <link rel="http://opds-spec.org/image/thumbnail" href="/catalog/v2/illustration/x/?size=48"
          type="image/png;width=48;height=48;scale=1"/>
    <link type="text/html" href="/content/{escape(entry.file)}" />
    <author>
      <name>Wikipedia</name>
    </author>
    <publisher>
      <name>Kiwix</name>
    </publisher>
    <dc:issued>{escape(entry.issued)}</dc:issued>
    <link rel="{ACQUISITION}" type="application/x-zim" href={quoteattr(entry.link)}{length} />
  </entry>
"""


def feed(*entries: Entry) -> bytes:
    body = "".join(entry_xml(entry) for entry in entries)
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"
      xmlns:dc="http://purl.org/dc/terms/"
      xmlns:opds="https://specs.opds.io/opds-1.2"
      xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">
  <id>c3d9fe4f-8f0e-4a49-bf8e-1f4b3c2f6a30</id>
  <link rel="self" href="/catalog/v2/entries"
        type="application/atom+xml;profile=opds-catalog;kind=acquisition"/>
  <title>Filtered Entries</title>
  <updated>2026-01-01T00:00:00Z</updated>
  <totalResults>{len(entries)}</totalResults>
  <startIndex>0</startIndex>
  <itemsPerPage>{len(entries)}</itemsPerPage>
{body}</feed>
""".encode()


def metalink(file: str, data: bytes, *, sha256: str | None = None) -> bytes:
    digest = sha256 or hashlib.sha256(data).hexdigest()
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<metalink xmlns="urn:ietf:params:xml:ns:metalink">
  <generator>MirrorBrain/2.19.0</generator>
  <origin dynamic="true">{DOWNLOADS}/{file}.meta4</origin>
  <published>2015-06-05T00:00:00Z</published>
  <publisher>
    <name>Kiwix project</name>
    <url>https://download.kiwix.org</url>
  </publisher>
  <file name="{file}">
    <size>{len(data)}</size>
    <hash type="md5">{hashlib.md5(data).hexdigest()}</hash>
    <hash type="sha-1">{hashlib.sha1(data).hexdigest()}</hash>
    <hash type="sha-256">{digest}</hash>
    <pieces length="262144" type="sha-1">
      <hash>{hashlib.sha1(data[:262144]).hexdigest()}</hash>
    </pieces>
    <url location="se" priority="1">http://ftp.acc.umu.se/mirror/kiwix.org/zim/wikipedia/{file}</url>
  </file>
</metalink>
""".encode()


def kiwix_files(*entries: Entry, data: bytes | None = None) -> dict[str, bytes]:
    """A mirror serving ``entries`` in its catalog, each entry's archive (``data``, the real
    fixture archive by default) and its Metalink."""
    archive = RAY.read_bytes() if data is None else data
    files = {CATALOG_PATH: feed(*entries)}
    for entry in entries:
        files[f"{MIRRORED}/{entry.file}"] = archive
        files[f"{MIRRORED}/{entry.file}.meta4"] = metalink(entry.file, archive)
    return files
