"""Wikipedia through the MediaWiki Action API (``/w/api.php``).

A hit costs one request: the entity's case variants are looked up together with a
``srwhat=nearmatch`` search in a single ``action=query``. Only a near match, a
disambiguation page or a miss costs a second request.

Every answer is untrusted: it is read under the request's time limit (``deadline.watchdog``)
and size limit, decoded with replacement characters, and checked for the shape this module
reads (``_Answer``); anything else is a ``WikiError``, which the session shows the model as a
failed tool call.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, NoReturn
from urllib.parse import urlsplit, urlunsplit

import requests
from urllib3.exceptions import NewConnectionError
from urllib3.exceptions import TimeoutError as Urllib3Timeout

from react_cli.deadline import bounded, time_left, watchdog
from react_cli.errors import WikiError
from react_cli.http import RetryPolicy, retry_after_s
from react_cli.records import RetryObserver, RetryWait
from react_cli.redaction import Redactor, redact_url, url_secrets
from react_cli.retrycount import note_retries
from react_cli.sanitize import decode, loads
from react_cli.sizelimit import TooLarge, read_capped
from react_cli.wiki.base import MAX_ANSWER_BYTES, REQUEST_FAILED, Article, SearchOutcome
from react_cli.wiki.titles import case_variants

MAXLAG_S = 5
MAXLAG_RETRIES = 3
MAXLAG_WAIT_CAP_S = 3.0
SIMILAR_LIMIT = 5
MESSAGE_CHARS = 160  # of a server's own error text
_PAGE_PROPS = {
    "prop": "extracts|pageprops",
    "explaintext": "1",
    "exsectionformat": "wiki",
    "ppprop": "disambiguation",
    "redirects": "1",
}


class _Malformed(ValueError):
    """An answer that is JSON but not of the shape the Action API documents."""


@dataclass(frozen=True)
class _Page:
    title: str
    extract: str | None  # None: not sent (several pages matched; extracts come one at a time)
    disambiguation: bool
    links: list[str]


@dataclass(frozen=True)
class _Answer:
    """The parts of an ``action=query`` answer this module reads, checked."""

    pages: dict[str, _Page]  # existing pages by title
    normalized: dict[str, str]
    redirects: dict[str, str]
    search: list[str]

    def first_existing(self, wanted: list[str]) -> _Page | None:
        """The page for the first of ``wanted`` that exists, after normalisation and redirects."""
        for title in wanted:
            title = self.normalized.get(title, title)
            title = self.redirects.get(title, title)
            if title in self.pages:
                return self.pages[title]
        return None


class MediaWikiBackend:
    """Resolves entities like Wikipedia's "go" search; raises WikiError on any failure."""

    def __init__(
        self,
        host: str,
        session: requests.Session,
        timeout_s: float,
        variant: str | None = None,
        policy: RetryPolicy | None = None,
        on_retry: RetryObserver | None = None,
    ) -> None:
        parts = urlsplit(host)
        api_path = parts.path.rstrip("/") + "/w/api.php"
        self._api = urlunsplit((parts.scheme, parts.netloc, api_path, parts.query, ""))
        self._host = urlsplit(redact_url(host)).netloc or redact_url(host)
        self._redact = Redactor(url_secrets(host))
        self._session = session
        self._timeout_s = timeout_s
        self._variant = variant
        self._policy = policy or RetryPolicy()  # its backoff, when a maxlag names no wait
        self._on_retry = on_retry

    def search(self, entity: str) -> SearchOutcome:
        """Exact title (or a case variant), then a near match, else up to 5 similar titles."""
        query = " ".join(entity.replace("_", " ").split())
        if not query:
            return SearchOutcome(None)
        variants = case_variants(query)
        params: dict[str, str] = {
            "list": "search",
            "srsearch": query,
            "srwhat": "nearmatch",
            "srlimit": "1",
            "srnamespace": "0",
            "srprop": "",
        }
        if variants:
            params.update(_PAGE_PROPS, titles="|".join(variants))
        answer = self._query(params)
        page = answer.first_existing(variants)
        if page is None:
            if not answer.search:
                return SearchOutcome(None, self._similar(query))
            near = answer.search[0]
            page = self._query({**_PAGE_PROPS, "titles": near}).first_existing([near])
            if page is None:
                return SearchOutcome(None, self._similar(query))
        if page.extract is None:  # several pages matched; full extracts come one at a time
            title = page.title
            page = self._query({**_PAGE_PROPS, "titles": title}).first_existing([title])
            if page is None:
                return SearchOutcome(None, self._similar(query))
        article = Article(page.title, page.extract or "")
        if page.disambiguation:
            return SearchOutcome(article, self._entries(article), disambiguation=True)
        return SearchOutcome(article)

    def _similar(self, query: str) -> list[str]:
        """Full-text search titles, the paper's "Similar" list."""
        params = {"list": "search", "srsearch": query, "srlimit": str(SIMILAR_LIMIT)}
        return self._query({**params, "srnamespace": "0", "srprop": ""}).search

    def _entries(self, article: Article) -> list[str]:
        """A disambiguation page's article links, in the order the page mentions them."""
        answer = self._query(
            {"prop": "links", "titles": article.title, "plnamespace": "0", "pllimit": "max"}
        )
        titles = [link for page in answer.pages.values() for link in page.links]
        text = article.text.lower()
        position = {title: text.find(title.lower()) for title in titles}
        return sorted(titles, key=lambda t: (position[t] < 0, position[t]))

    def _query(self, params: dict[str, str]) -> _Answer:
        """One ``action=query`` GET; returns its checked ``query`` object, retrying maxlag."""
        full = {"action": "query", "format": "json", "formatversion": "2", "maxlag": str(MAXLAG_S)}
        full.update(params)
        if self._variant:
            full["variant"] = self._variant
        attempt = 0
        while True:
            data, retry_after = self._get(full)
            error = data.get("error")
            if error is None:
                try:
                    return _answer(data.get("query", {}))
                except _Malformed as exc:
                    self._fail(f"{self._host} answered with a malformed query result ({exc})")
            error = error if isinstance(error, dict) else {}
            code = " ".join(str(error.get("code", "unknown")).split())[:MESSAGE_CHARS]
            wait = self._policy.backoff_s(attempt) if retry_after is None else retry_after
            wait = min(wait, MAXLAG_WAIT_CAP_S, self._policy.max_retry_after_s)
            left = time_left()
            if code != "maxlag" or attempt >= MAXLAG_RETRIES or (left is not None and wait >= left):
                info = " ".join(str(error.get("info", "")).split())[:MESSAGE_CHARS]
                self._fail(f"API error '{code}' from {self._host}" + (f": {info}" if info else ""))
            attempt += 1
            note_retries(1)
            if self._on_retry is not None:
                self._on_retry(
                    RetryWait(wait, f"{self._host} is lagging (maxlag)", attempt, MAXLAG_RETRIES)
                )
            time.sleep(wait)

    def _get(self, params: dict[str, str]) -> tuple[dict[str, Any], float | None]:
        """The JSON object of one answer, and the wait its ``Retry-After`` asks for."""
        with watchdog(self._timeout_s) as dog:
            try:
                response = self._session.get(
                    self._api, params=params, timeout=bounded(self._timeout_s), stream=True
                )
                with response:
                    body = read_capped(response.iter_content(65536), MAX_ANSWER_BYTES)
            except TooLarge as exc:
                self._fail(f"the answer from {self._host} is {exc}")
            except requests.RequestException as exc:
                if dog.expired or _is_timeout(exc):
                    self._fail(f"no answer from {self._host} within {self._timeout_s:g}s")
                self._fail(f"cannot reach {self._host} ({type(exc).__name__})")
            if dog.expired:  # a body delimited by the close the watchdog caused
                self._fail(f"no answer from {self._host} within {self._timeout_s:g}s")
        if response.status_code != 200:
            self._fail(
                f"HTTP {response.status_code} from {self._host}{_plain_reason(response, body)}"
            )
        try:
            data = loads(body)
        except ValueError:
            data = None
        if not isinstance(data, dict):
            self._fail(f"{self._host} did not answer with a JSON object")
        return data, retry_after_s(response.headers.get("Retry-After"))

    def _fail(self, reason: str) -> NoReturn:
        raise WikiError(REQUEST_FAILED + self._redact(reason)) from None


def _answer(query: Any) -> _Answer:
    """The checked form of a ``query`` object; ``_Malformed`` says what is wrong."""
    if not isinstance(query, dict):
        raise _Malformed("not an object")
    pages = {}
    for page in _list(query, "pages"):
        if page.get("missing") or page.get("invalid"):
            continue
        title = _text(page, "title")
        extract = page.get("extract")
        if extract is not None and not isinstance(extract, str):
            raise _Malformed(f"an extract of type {type(extract).__name__}")
        props = page.get("pageprops", {})
        if not isinstance(props, dict):
            raise _Malformed("pageprops not an object")
        links = [_text(link, "title") for link in _list(page, "links")]
        pages[title] = _Page(title, extract, "disambiguation" in props, links)
    return _Answer(
        pages=pages,
        normalized={_text(n, "from"): _text(n, "to") for n in _list(query, "normalized")},
        redirects={_text(r, "from"): _text(r, "to") for r in _list(query, "redirects")},
        search=[_text(hit, "title") for hit in _list(query, "search")],
    )


def _list(data: dict[str, Any], key: str) -> list[dict[str, Any]]:
    """``data[key]``: a list of objects (missing: empty)."""
    items = data.get(key, [])
    if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
        raise _Malformed(f"'{key}' not a list of objects")
    return items


def _text(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str):
        raise _Malformed(f"'{key}' missing or not text")
    return value


def _is_timeout(exc: requests.RequestException) -> bool:
    """Read timeouts surface as ConnectionError once urllib3's retries are used up.

    urllib3's NewConnectionError (refused, unresolvable) subclasses its timeout error.
    """
    if isinstance(exc, requests.Timeout):
        return True
    reason = getattr(exc.args[0], "reason", None) if exc.args else None
    return isinstance(reason, Urllib3Timeout) and not isinstance(reason, NewConnectionError)


def _plain_reason(response: requests.Response, body: bytes) -> str:
    """A short plain-text error body (Wikimedia's 403 explains itself), else nothing."""
    if not response.headers.get("Content-Type", "").startswith("text/plain"):
        return ""
    text = " ".join(decode(body[: 4 * MESSAGE_CHARS]).split())[:MESSAGE_CHARS]
    return f": {text}" if text else ""
