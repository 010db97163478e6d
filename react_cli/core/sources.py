"""Where an observation's text came from: the wiki, the page, its revision, the sentences shown.

A tool that reads pages (Wikipedia's Search and Lookup) gives each observation a
:class:`PageSource`; the loop records it on the step, so every protocol has it, and a run's
sources (``methods.sources``) are derived from its steps. A tool that reads no page gives none.
Plain values with one ``to_json``/``from_json`` pair each; traces are untrusted input, so the
reader checks every field and says what is wrong (TypeError/ValueError).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeVar

from react_cli.core.fields import optional_text
from react_cli.core.records import StrEnum

E = TypeVar("E", bound=StrEnum)
Revision = int | str
"""What pins the text shown: a MediaWiki revision id (``oldid``), or a ZIM archive's entry path
(an archive never changes: its UUID and the path name the text)."""


class WikiKind(StrEnum):
    """The kind of wiki a page was read from."""

    MEDIAWIKI = "mediawiki"  # a MediaWiki host, e.g. en.wikipedia.org
    ZIM = "zim"  # a Kiwix ZIM archive


class SentenceIds(StrEnum):
    """Whose sentence numbering a source's indices are."""

    PAGE = "page"  # the page's own sentence list (a corpus's, e.g. HotpotQA's: exact ids)
    SPLIT = "split"  # react-cli's sentence splitter over the page text


@dataclass(frozen=True)
class Wiki:
    """The wiki a page came from: a MediaWiki host and the page's language, or a ZIM archive's
    file name, UUID and date (and language, where it says)."""

    kind: WikiKind | str  # a newer writer's kind is kept as text
    host: str | None = None
    language: str | None = None
    archive: str | None = None
    uuid: str | None = None
    date: str | None = None

    @property
    def name(self) -> str:
        """How the wiki is named to people: its host, or its archive's file name."""
        return self.host or self.archive or str(self.kind)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": str(self.kind)}
        if self.kind == WikiKind.ZIM:
            data.update(archive=self.archive, uuid=self.uuid, date=self.date)
        else:
            data["host"] = self.host
        data["language"] = self.language
        return data

    @classmethod
    def from_json(cls, data: Any) -> Wiki:
        if not isinstance(data, dict):
            raise TypeError(f"a source's wiki is {type(data).__name__}, not an object")
        kind = optional_text(data, "kind")
        if not kind:
            raise TypeError("a source's wiki has no kind")
        fields = ("host", "language", "archive", "uuid", "date")
        return cls(_member(WikiKind, kind), **{name: optional_text(data, name) for name in fields})


@dataclass(frozen=True)
class Sentence:
    """A sentence shown, by its index in the page's sentence list (from 0)."""

    index: int
    text: str

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "text": self.text}

    @classmethod
    def from_json(cls, data: Any) -> Sentence:
        if not isinstance(data, dict):
            raise TypeError(f"a sentence is {type(data).__name__}, not an object")
        index, text = data.get("index"), data.get("text")
        if isinstance(index, bool) or not isinstance(index, int) or index < 0:
            raise ValueError(f"a sentence's index is {index!r}, not a count")
        if not isinstance(text, str):
            raise TypeError("a sentence's text is not text")
        return cls(index, text)


@dataclass(frozen=True)
class PageSource:
    """What one observation showed of one page: the wiki, the resolved title, the page's URL
    at that revision (None for a ZIM archive, which has none), the revision, and the
    sentences shown, in page order."""

    wiki: Wiki
    title: str
    url: str | None
    revision: Revision | None
    sentences: tuple[Sentence, ...] = ()
    sentence_ids: SentenceIds | str = SentenceIds.SPLIT

    @property
    def page(self) -> tuple[str, str, Revision | None]:
        """What names the page text: the wiki, the title and the revision."""
        return self.wiki.name, self.title, self.revision

    def to_json(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "url": self.url,
            "revision": self.revision,
            "wiki": self.wiki.to_json(),
            "sentences": [sentence.to_json() for sentence in self.sentences],
            "sentence_ids": str(self.sentence_ids),
        }

    @classmethod
    def from_json(cls, data: Any) -> PageSource:
        """A recorded source; TypeError/ValueError naming what is wrong."""
        if not isinstance(data, dict):
            raise TypeError(f"a source is {type(data).__name__}, not an object")
        title = optional_text(data, "title")
        if title is None:
            raise TypeError("a source has no title")
        revision = data.get("revision")
        if revision is not None and (isinstance(revision, bool) or not _revision(revision)):
            raise TypeError(f"a source's revision is {type(revision).__name__}, not an id")
        sentences = data.get("sentences") or []
        if not isinstance(sentences, list):
            raise TypeError("a source's sentences are not a list")
        ids = optional_text(data, "sentence_ids") or SentenceIds.SPLIT
        return cls(
            wiki=Wiki.from_json(data.get("wiki")),
            title=title,
            url=optional_text(data, "url"),
            revision=revision,
            sentences=tuple(Sentence.from_json(item) for item in sentences),
            sentence_ids=_member(SentenceIds, ids),
        )


def _revision(value: Any) -> bool:
    return (isinstance(value, int) and value >= 0) or isinstance(value, str)


def _member(kind: type[E], text: str) -> E | str:
    """The member of ``kind`` named ``text``, or the text (a newer writer's value) kept."""
    try:
        return kind(text)
    except ValueError:
        return text
