"""Wikipedia through the MediaWiki Action API (``/w/api.php``).

A hit costs one request: the entity's case variants are looked up together with a
``srwhat=nearmatch`` search in a single ``action=query``. Only a near match, a
disambiguation page or a miss costs a second request.
"""

from __future__ import annotations

import time
from typing import Any, NoReturn
from urllib.parse import urlsplit

import requests
from urllib3.exceptions import NewConnectionError
from urllib3.exceptions import TimeoutError as Urllib3Timeout

from react_cli.deadline import bounded, time_left
from react_cli.errors import WikiError
from react_cli.records import RetryObserver, RetryWait
from react_cli.retrycount import note_retries
from react_cli.wiki.base import REQUEST_FAILED, Article, SearchOutcome
from react_cli.wiki.titles import case_variants

MAXLAG_S = 5
MAXLAG_RETRIES = 3
MAXLAG_WAIT_CAP_S = 3.0
SIMILAR_LIMIT = 5
_PAGE_PROPS = {
    "prop": "extracts|pageprops",
    "explaintext": "1",
    "exsectionformat": "wiki",
    "ppprop": "disambiguation",
    "redirects": "1",
}


class MediaWikiBackend:
    """Resolves entities like Wikipedia's "go" search; raises WikiError on any failure."""

    def __init__(
        self,
        host: str,
        session: requests.Session,
        timeout_s: float,
        variant: str | None = None,
        on_retry: RetryObserver | None = None,
    ) -> None:
        self._api = host.rstrip("/") + "/w/api.php"
        self._host = urlsplit(host).netloc or host
        self._session = session
        self._timeout_s = timeout_s
        self._variant = variant
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
        data = self._query(params)
        page = _first_existing(data, variants)
        if page is None:
            near = [hit["title"] for hit in data.get("search", [])]
            if not near:
                return SearchOutcome(None, self._similar(query))
            data = self._query({**_PAGE_PROPS, "titles": near[0]})
            page = _first_existing(data, near)
            if page is None:
                return SearchOutcome(None, self._similar(query))
        if "extract" not in page:  # several pages matched; full extracts come one at a time
            title = page["title"]
            page = _first_existing(self._query({**_PAGE_PROPS, "titles": title}), [title])
            if page is None:
                return SearchOutcome(None, self._similar(query))
        article = Article(page["title"], page.get("extract", ""))
        if "disambiguation" in page.get("pageprops", {}):
            return SearchOutcome(article, self._entries(article), disambiguation=True)
        return SearchOutcome(article)

    def _similar(self, query: str) -> list[str]:
        """Full-text search titles, the paper's "Similar" list."""
        data = self._query(
            {
                "list": "search",
                "srsearch": query,
                "srlimit": str(SIMILAR_LIMIT),
                "srnamespace": "0",
                "srprop": "",
            }
        )
        return [hit["title"] for hit in data.get("search", [])]

    def _entries(self, article: Article) -> list[str]:
        """A disambiguation page's article links, in the order the page mentions them."""
        data = self._query(
            {"prop": "links", "titles": article.title, "plnamespace": "0", "pllimit": "max"}
        )
        titles = [link["title"] for page in data.get("pages", []) for link in page.get("links", [])]
        text = article.text.lower()
        position = {title: text.find(title.lower()) for title in titles}
        return sorted(titles, key=lambda t: (position[t] < 0, position[t]))

    def _query(self, params: dict[str, str]) -> dict[str, Any]:
        """One ``action=query`` GET; returns its ``query`` object, retrying maxlag errors."""
        full = {"action": "query", "format": "json", "formatversion": "2", "maxlag": str(MAXLAG_S)}
        full.update(params)
        if self._variant:
            full["variant"] = self._variant
        attempt = 0
        while True:
            response = self._get(full)
            data = self._json(response)
            error = data.get("error")
            if error is None:
                query = data.get("query", {})
                return query if isinstance(query, dict) else {}
            error = error if isinstance(error, dict) else {}
            code = str(error.get("code", "unknown"))
            wait, left = _retry_after(response), time_left()
            if code != "maxlag" or attempt >= MAXLAG_RETRIES or (left is not None and wait >= left):
                info = " ".join(str(error.get("info", "")).split())[:160]
                self._fail(f"API error '{code}' from {self._host}" + (f": {info}" if info else ""))
            attempt += 1
            note_retries(1)
            if self._on_retry is not None:
                self._on_retry(
                    RetryWait(wait, f"{self._host} is lagging (maxlag)", attempt, MAXLAG_RETRIES)
                )
            time.sleep(wait)

    def _get(self, params: dict[str, str]) -> requests.Response:
        try:
            response = self._session.get(self._api, params=params, timeout=bounded(self._timeout_s))
        except requests.RequestException as exc:
            if _is_timeout(exc):
                self._fail(f"no answer from {self._host} within {self._timeout_s:g}s")
            self._fail(f"cannot reach {self._host} ({type(exc).__name__})")
        if response.status_code != 200:
            self._fail(f"HTTP {response.status_code} from {self._host}{_plain_reason(response)}")
        return response

    def _json(self, response: requests.Response) -> dict[str, Any]:
        try:
            data = response.json()
        except ValueError:
            data = None
        if not isinstance(data, dict):
            self._fail(f"{self._host} did not answer with a JSON object")
        return data

    def _fail(self, reason: str) -> NoReturn:
        raise WikiError(REQUEST_FAILED + reason) from None


def _first_existing(query: dict[str, Any], wanted: list[str]) -> dict[str, Any] | None:
    """The page for the first of ``wanted`` that exists, after normalisation and redirects."""
    normalized = {n["from"]: n["to"] for n in query.get("normalized", [])}
    redirects = {r["from"]: r["to"] for r in query.get("redirects", [])}
    pages = {
        p["title"]: p
        for p in query.get("pages", [])
        if not p.get("missing") and not p.get("invalid") and "title" in p
    }
    for title in wanted:
        title = normalized.get(title, title)
        title = redirects.get(title, title)
        if title in pages:
            return pages[title]
    return None


def _retry_after(response: requests.Response) -> float:
    """Seconds a maxlag answer asks us to wait, capped so a run never stalls."""
    try:
        wait = float(response.headers.get("Retry-After", "1"))
    except ValueError:
        wait = 1.0
    return min(max(wait, 0.0), MAXLAG_WAIT_CAP_S)


def _is_timeout(exc: requests.RequestException) -> bool:
    """Read timeouts surface as ConnectionError once urllib3's retries are used up.

    urllib3's NewConnectionError (refused, unresolvable) subclasses its timeout error.
    """
    if isinstance(exc, requests.Timeout):
        return True
    reason = getattr(exc.args[0], "reason", None) if exc.args else None
    return isinstance(reason, Urllib3Timeout) and not isinstance(reason, NewConnectionError)


def _plain_reason(response: requests.Response) -> str:
    """A short plain-text error body (Wikimedia's 403 explains itself), else nothing."""
    if not response.headers.get("Content-Type", "").startswith("text/plain"):
        return ""
    text = " ".join(response.text.split())[:160]
    return f": {text}" if text else ""
