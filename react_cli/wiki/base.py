"""What every Wikipedia backend is: it resolves an entity to an article, as Wikipedia's "go"
box does. Everything the model sees of an article (sentences, Lookup, caps, wording) is the
tools' (``tools.wikipedia``), so every backend behaves the same in a prompt.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from react_cli.core.sources import Revision, Wiki
from react_cli.infra.deadline import Deadline

REQUEST_FAILED = "Wikipedia request failed: "
"""Prefix of a backend's WikiError message; the session shows only what follows it."""

OFFLINE_HINT = (
    "offline or behind a firewall? answer from an archive: --wiki zim:NAME "
    "('react-cli wiki get NAME' downloads one, 'react-cli wiki build-zim' builds one)"
)
"""What a user who cannot reach Wikipedia can do instead (a host that never answered)."""

MAX_ANSWER_BYTES = 8_000_000  # one Wikipedia answer or ZIM page (the longest articles: ~2 MB)


@dataclass(frozen=True)
class Article:
    """A resolved page as plain text, paragraphs separated by newlines.

    ``convert`` is the script conversion the backend applied to ``text`` (a Chinese variant),
    if any; Lookup applies it to the keyword too, so 貓 finds 猫 in a page shown as zh-cn.

    Where the text came from, for the observations' sources: the ``wiki``, the ``revision``
    of this text (MediaWiki's ``lastrevid``, asked in the request that gave the text; a ZIM
    entry's path), the page's ``url`` at that revision, and ``sentences``, the page's own
    sentence list when the page keeps one (an archive built from HotpotQA keeps each
    paragraph's): the tools then number sentences as the page does instead of splitting the
    text themselves.
    """

    title: str
    text: str
    convert: Callable[[str], str] | None = field(default=None, compare=False, repr=False)
    wiki: Wiki | None = None
    revision: Revision | None = None
    url: str | None = None
    sentences: tuple[str, ...] | None = None


@dataclass(frozen=True)
class SearchResult:
    """What a backend found for an entity, and how many requests it had to make again.

    A hit has ``article``. A miss has ``article=None`` and search suggestions in
    ``similar``. A disambiguation page has ``disambiguation=True`` and its entries in
    ``similar`` (``article`` may hold the disambiguation page itself). ``cached``: the cache
    answered, no request was made.
    """

    article: Article | None
    similar: list[str] = field(default_factory=list)
    disambiguation: bool = False
    retries: int = 0
    cached: bool = False


class WikiBackend(Protocol):
    """Resolves an entity the way Wikipedia's "go" box does, before ``deadline``; raises
    WikiError on failure. One backend may serve many sessions, from several threads."""

    def search(self, entity: str, *, deadline: Deadline) -> SearchResult: ...
