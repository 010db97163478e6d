"""Kiwix's catalog read as hostile input (``wiki.kiwix``): the feed libkiwix writes, entries
that cannot be used left out, a DTD or entities refused before parsing (no billion laughs, no
external entity read), names matched with and without their flavour, Metalinks and ``.sha256``
files read."""

from __future__ import annotations

import hashlib
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kiwix_fakes import DOWNLOADS, Entry, feed, metalink

from react_cli.core.errors import DownloadError, UsageError
from react_cli.wiki.kiwix import (
    catalog_url,
    choose,
    parse_catalog,
    parse_checksum_file,
    parse_metalink,
)

TOP = [
    Entry("wikipedia_en_top", flavour, f"wikipedia_en_top_{flavour}_2026-06.zim", size)
    for flavour, size in (("maxi", 7_800_000_000), ("nopic", 2_100_000_000), ("mini", 900_000))
]


def test_the_feed_libkiwix_writes_is_read() -> None:
    books = parse_catalog(feed(*TOP))
    assert [book.full_name for book in books] == [
        "wikipedia_en_top_maxi",
        "wikipedia_en_top_nopic",
        "wikipedia_en_top_mini",
    ]
    nopic = books[1]
    assert (nopic.title, nopic.language, nopic.date, nopic.articles) == (
        "Ray Charles",
        "eng",
        "2015-06-02",
        85,
    )
    assert nopic.size == 2_100_000_000 and nopic.link.endswith(".zim.meta4")
    assert nopic.url == f"{DOWNLOADS}/wikipedia_en_top_nopic_2026-06.zim"
    assert nopic.local_file == "wikipedia_en_top_nopic_2026-06.zim"


def test_a_name_is_chosen_with_or_without_its_flavour_or_month() -> None:
    books = parse_catalog(feed(*TOP))
    assert choose(books, "wikipedia_en_top_nopic").flavour == "nopic"
    assert choose(books, "wikipedia_en_top_mini_2026-06").flavour == "mini"
    with pytest.raises(UsageError) as caught:
        choose(books, "wikipedia_en_top")
    assert str(caught.value) == (
        "wikipedia_en_top comes in 3 flavours: wikipedia_en_top_maxi (7.8 GB), "
        "wikipedia_en_top_nopic (2.1 GB), wikipedia_en_top_mini (900.0 kB); name one"
    )
    assert choose(books[1:2], "wikipedia_en_top").flavour == "nopic"  # the only one
    with pytest.raises(UsageError, match=r"no archive named wikipedia_en_tpo_nopic .did you mean"):
        choose(books, "wikipedia_en_tpo_nopic")


def test_a_maxi_archive_whose_file_leaves_its_flavour_out_is_kept_under_its_full_name() -> None:
    book = parse_catalog(feed(Entry("wikipedia_en_100", "maxi", "wikipedia_en_100_2026-08.zim", 9)))
    assert book[0].local_file == "wikipedia_en_100_maxi_2026-08.zim"
    assert choose(book, "wikipedia_en_100").full_name == "wikipedia_en_100_maxi"


def test_the_catalog_is_asked_by_name_without_the_flavour() -> None:
    assert catalog_url("wikipedia_en_top_nopic") == (
        "https://library.kiwix.org/catalog/v2/entries?name=wikipedia_en_top&count=-1"
    )
    assert catalog_url("a&b=c").endswith("?name=a%26b%3Dc&count=-1")


@pytest.mark.parametrize(
    "link",
    [
        "javascript:alert(1)",
        "file:///etc/passwd",
        f"{DOWNLOADS}/..",
        f"{DOWNLOADS}/%2e%2e%2fescape.zim",
        f"{DOWNLOADS}/",
        f"{DOWNLOADS}/a b.zim",
        f"{DOWNLOADS}/x.zim\u202e",
        f"{DOWNLOADS}/x.txt",
    ],
)
def test_entries_that_cannot_be_used_are_left_out(link: str) -> None:
    good = Entry("good", "", "good_2026-01.zim", 5)
    bad = Entry("bad", "", "bad.zim", 5, link=link)
    assert [book.name for book in parse_catalog(feed(bad, good))] == ["good"]


def test_a_link_that_climbs_folders_still_saves_under_its_plain_name() -> None:
    link = f"{DOWNLOADS}/../../etc/passwd.zim"
    book = parse_catalog(feed(Entry("x", "", "x.zim", 5, link=link)))[0]
    assert book.local_file == "x_2015-06.zim"  # the last part of the path, in <home>/zim


def test_fields_are_bounded_and_numbers_checked() -> None:
    entry = Entry("x", "", "x_2026-01.zim", None, title="T" * 10_000, articles=10**30)
    book = parse_catalog(feed(entry))[0]
    assert len(book.title) == 300 and book.articles is None and book.size is None


BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE feed [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol9 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
]>
<feed xmlns="http://www.w3.org/2005/Atom"><entry><name>&lol9;</name></entry></feed>"""
EXTERNAL = b"""<?xml version="1.0"?>
<!DOCTYPE feed [<!ENTITY secret SYSTEM "file:///etc/passwd">]>
<feed xmlns="http://www.w3.org/2005/Atom"><entry><name>&secret;</name></entry></feed>"""


@pytest.mark.parametrize("answer", [BILLION_LAUGHS, EXTERNAL], ids=["laughs", "external"])
def test_a_dtd_or_entities_are_refused_before_parsing(answer: bytes) -> None:
    started = time.process_time()
    with pytest.raises(DownloadError, match="document type declaration: refused"):
        parse_catalog(answer)
    assert time.process_time() - started < 1.0  # nothing was expanded


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (b"<feed", "is not readable XML"),
        (b"", "is not readable XML"),
        (b"<html><body>Welcome</body></html>", "not an OPDS feed"),
        (b"\xff\xfe<\x00f\x00", "is not readable XML"),
    ],
)
def test_an_answer_that_is_no_catalog_is_an_error(answer: bytes, said: str) -> None:
    with pytest.raises(DownloadError, match=said):
        parse_catalog(answer)


def test_deep_nesting_is_refused_by_the_parser() -> None:
    deep = b'<feed xmlns="http://www.w3.org/2005/Atom">' + b"<a>" * 100_000 + b"</a>" * 100_000
    with pytest.raises(DownloadError, match="not readable XML"):
        parse_catalog(deep + b"</feed>")


@given(st.binary(max_size=2000))
def test_any_bytes_are_a_list_of_books_or_one_error(data: bytes) -> None:
    try:
        books = parse_catalog(data)
    except DownloadError:
        return
    assert isinstance(books, list)


def test_a_metalink_gives_size_and_sha256() -> None:
    data = b"archive bytes"
    pin = parse_metalink(metalink("x.zim", data))
    assert pin.size == len(data) and pin.sha256 == hashlib.sha256(data).hexdigest()
    assert parse_metalink(metalink("x.zim", data, sha256="not-hex")).sha256 is None
    assert parse_metalink(b'<metalink xmlns="urn:ietf:params:xml:ns:metalink"/>').kind == "none"


def test_a_checksum_file_gives_its_first_word() -> None:
    digest = "a" * 64
    assert parse_checksum_file(f"{digest}  wikipedia_en_100.zim\n".encode()) == digest
    assert parse_checksum_file(digest.upper().encode()) == digest
    assert parse_checksum_file(b"<html>404</html>") is None
    assert parse_checksum_file(b"") is None
