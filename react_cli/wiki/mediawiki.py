"""Wikipedia through the MediaWiki Action API (``/w/api.php``).

A hit costs one request: the entity's case variants are looked up together with a
``srwhat=nearmatch`` search in a single ``action=query``. Only a near match, a
disambiguation page or a miss costs a second request.

Every answer is untrusted: it is read under the request's watchdog and size limit, decoded
with replacement characters, its strings redacted (a page may echo its request: the URL's
password and query, a ``~/.netrc`` entry's credentials), and checked for the shape this
backend reads (``query_answer``); anything else is a ``WikiError``, which the session shows
the model as a failed tool call. Failures worth another try (connection errors, timeouts,
429/5xx, ``maxlag``) are retried by the one ``retry.RetryPolicy``; ``maxlag`` at most
``MAXLAG_RETRIES`` times, briefly.

Every request holds a permit of the host's limiter (one per backend, so an eval's workers
share it) while it is on the wire: its time teaches the limiter how busy the host is, and
429/503, ``maxlag`` and timeouts halve the requests let through at once.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, NoReturn
from urllib.parse import quote, urlencode, urlsplit, urlunsplit

import requests

from react_cli.core.errors import WikiError
from react_cli.core.records import RetryObserver, RetryWait
from react_cli.core.sources import Wiki, WikiKind
from react_cli.infra.auth import credentials
from react_cli.infra.credentials import redact_url, url_secrets
from react_cli.infra.deadline import Deadline, Watchdog
from react_cli.infra.http import (
    TIMED_OUT,
    failure_reason,
    is_timeout,
    is_transient,
    is_unreachable,
    watched_request,
)
from react_cli.infra.limiter import Limiter, Permit, Waited
from react_cli.infra.redaction import Redactor
from react_cli.infra.retry import RETRY_STATUSES, GiveUp, Retryable, RetryPolicy, retry_after_s
from react_cli.infra.sizelimit import TooLarge, read_capped
from react_cli.infra.untrusted import decode, loads
from react_cli.wiki.base import (
    MAX_ANSWER_BYTES,
    OFFLINE_HINT,
    REQUEST_FAILED,
    Article,
    SearchResult,
)
from react_cli.wiki.query_answer import Malformed, QueryAnswer, read_answer
from react_cli.wiki.titles import case_variants, title_query

MAXLAG_S = 5
MAXLAG_RETRIES = 3
MAXLAG_WAIT_CAP_S = 3.0
SIMILAR_LIMIT = 5
MESSAGE_CHARS = 160  # of a server's own error text
OVERLOADED = frozenset({429, 503})
UNLIMITED = 1 << 20  # the limiter of a backend no run gave one
_PAGE_PROPS = {  # info: the revision and language of the text, in the request that gives it
    "prop": "extracts|pageprops|info",
    "explaintext": "1",
    "exsectionformat": "wiki",
    "ppprop": "disambiguation",
    "redirects": "1",
}


@dataclass
class _Search:
    """One search in progress: its deadline, and the retries made so far (each announced)."""

    deadline: Deadline
    on_retry: RetryObserver | None
    retries: int = 0

    def retrying(self, wait: RetryWait) -> None:
        self.retries += 1
        if self.on_retry is not None:
            self.on_retry(wait)


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
        redactor: Redactor | None = None,
        limiter: Limiter | None = None,
    ) -> None:
        """``redactor``: the one ``session`` teaches the credentials it sends (else one of
        ``host``'s secrets alone); ``limiter`` the host's (else no limit)."""
        parts = urlsplit(host)
        api_path = parts.path.rstrip("/") + "/w/api.php"
        self._api = urlunsplit((parts.scheme, parts.netloc, api_path, parts.query, ""))
        self._auth = credentials(host)
        self._host = urlsplit(redact_url(host)).netloc or redact_url(host)
        index_path = parts.path.rstrip("/") + "/w/index.php"
        self._index = urlunsplit((parts.scheme, self._host, index_path, "", ""))
        self._redact = redactor or Redactor(url_secrets(host))
        self._session = session
        self._timeout_s = timeout_s
        self._variant = variant
        self._policy = policy or RetryPolicy()
        self._on_retry = on_retry
        self.limiter = limiter or Limiter(UNLIMITED)

    def search(self, entity: str, *, deadline: Deadline) -> SearchResult:
        """Exact title (or a case variant), then a near match, else up to 5 similar titles."""
        query = title_query(entity)
        if not query:
            return SearchResult(None)
        search = _Search(deadline, self._on_retry)
        found = self._resolve(query, search)
        return SearchResult(found.article, found.similar, found.disambiguation, search.retries)

    def _resolve(self, query: str, search: _Search) -> SearchResult:
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
        answer = self._query(params, search)
        page = answer.first_existing(variants)
        if page is None:
            if not answer.search:
                return SearchResult(None, self._similar(query, search))
            near = answer.search[0]
            page = self._query({**_PAGE_PROPS, "titles": near}, search).first_existing([near])
            if page is None:
                return SearchResult(None, self._similar(query, search))
        if page.extract is None:  # several pages matched; full extracts come one at a time
            title = page.title
            page = self._query({**_PAGE_PROPS, "titles": title}, search).first_existing([title])
            if page is None:
                return SearchResult(None, self._similar(query, search))
        wiki = Wiki(WikiKind.MEDIAWIKI, host=self._host, language=page.language)
        url = self.page_url(page.title, page.revision)
        article = Article(
            page.title, page.extract or "", wiki=wiki, revision=page.revision, url=url
        )
        if page.disambiguation:
            return SearchResult(article, self._entries(article, search), disambiguation=True)
        return SearchResult(article)

    def page_url(self, title: str, revision: int | None) -> str:
        """The page at ``revision`` (its current text without one), on this host, without
        credentials: ``.../w/index.php?title=Arthur%27s_Magazine&oldid=123456``."""
        params = {"title": title.replace(" ", "_")}
        if revision is not None:
            params["oldid"] = str(revision)
        if self._variant:
            params["variant"] = self._variant
        return f"{self._index}?{urlencode(params, quote_via=quote, safe='')}"

    def _similar(self, query: str, search: _Search) -> list[str]:
        """Full-text search titles, the paper's "Similar" list."""
        params = {"list": "search", "srsearch": query, "srlimit": str(SIMILAR_LIMIT)}
        return self._query({**params, "srnamespace": "0", "srprop": ""}, search).search

    def _entries(self, article: Article, search: _Search) -> list[str]:
        """A disambiguation page's article links, in the order the page mentions them."""
        answer = self._query(
            {"prop": "links", "titles": article.title, "plnamespace": "0", "pllimit": "max"},
            search,
        )
        titles = [link for page in answer.pages.values() for link in page.links]
        text = article.text.lower()
        position = {title: text.find(title.lower()) for title in titles}
        return sorted(titles, key=lambda t: (position[t] < 0, position[t]))

    def _query(self, params: dict[str, str], search: _Search) -> QueryAnswer:
        """One ``action=query``: its checked ``query`` object, ``maxlag`` retried."""
        full = {"action": "query", "format": "json", "formatversion": "2", "maxlag": str(MAXLAG_S)}
        full.update(params)
        if self._variant:
            full["variant"] = self._variant

        def attempt() -> QueryAnswer:
            data, retry_after, permit = self._get(full, search)
            error = data.get("error")
            if error is None:
                try:
                    return read_answer(data.get("query", {}))
                except Malformed as exc:
                    self._fail(
                        f"{self._host} answered with a malformed query result ({exc})", search
                    )
            error = error if isinstance(error, dict) else {}
            code = " ".join(str(error.get("code", "unknown")).split())[:MESSAGE_CHARS]
            info = " ".join(str(error.get("info", "")).split())[:MESSAGE_CHARS]
            message = f"API error '{code}' from {self._host}" + (f": {info}" if info else "")
            if code != "maxlag":
                self._fail(message, search)
            permit.dropped(self._pause(retry_after, MAXLAG_WAIT_CAP_S))
            raise Retryable(
                f"{self._host} is lagging (maxlag)",
                self._give_up(message, search),
                retry_after_s=retry_after,
                max_retries=MAXLAG_RETRIES,
                max_wait_s=MAXLAG_WAIT_CAP_S,
            )

        return self._policy.call(attempt, search.deadline, search.retrying)[0]

    def _get(
        self, params: dict[str, str], search: _Search
    ) -> tuple[dict[str, Any], float | None, Permit]:
        """The JSON object of one answer, the wait its ``Retry-After`` asks for, and the
        (returned) permit it was sent under."""

        def attempt() -> tuple[requests.Response, bytes, Permit]:
            permit = self._permit(search)
            try:
                return sent(permit)
            finally:
                permit.release()

        def sent(permit: Permit) -> tuple[requests.Response, bytes, Permit]:
            with Watchdog(self._timeout_s, search.deadline) as dog:
                timeout_s = search.deadline.bound(self._timeout_s)
                try:
                    response = watched_request(
                        self._session,
                        "GET",
                        self._api,
                        dog,
                        timeout_s,
                        params=params,
                        auth=self._auth,
                    )
                    with response:
                        body = read_capped(response.iter_content(65536), MAX_ANSWER_BYTES)
                except TooLarge as exc:
                    self._fail(f"the answer from {self._host} is {exc}", search)
                except requests.RequestException as exc:
                    if not (dog.expired or is_transient(exc)):
                        hint = OFFLINE_HINT if is_unreachable(exc) else ""
                        self._fail(self._lost(exc, False), search, hint)
                    late = dog.expired or is_timeout(exc)
                    if late:
                        permit.dropped()
                    reason = TIMED_OUT if late else self._reason(exc)
                    raise Retryable(reason, self._give_up(self._lost(exc, late), search)) from None
                if dog.expired:  # a body delimited by the close the watchdog caused
                    permit.dropped()
                    raise Retryable(TIMED_OUT, self._give_up(self._lost(None, True), search))
            status = response.status_code
            if status != 200:
                message = f"HTTP {status} from {self._host}{_plain_reason(response, body)}"
                if status in OVERLOADED:
                    wait = retry_after_s(response.headers.get("Retry-After"))
                    permit.dropped(self._pause(wait))
                if status in RETRY_STATUSES:
                    give_up = self._give_up(message, search)
                    raise Retryable.for_status(status, response.headers, give_up)
                self._fail(message, search)
            permit.done("wiki", time.monotonic() - permit.sent)
            return response, body, permit

        response, body, permit = self._policy.call(attempt, search.deadline, search.retrying)[0]
        try:
            data = loads(body)
        except ValueError:
            data = None
        if not isinstance(data, dict):
            self._fail(f"{self._host} did not answer with a JSON object", search)
        retry_after = retry_after_s(response.headers.get("Retry-After"))
        return self._redact.json(data), retry_after, permit

    def _pause(self, wait: float | None, cap: float | None = None) -> float | None:
        """How long every request to the host waits after an overload asked for ``wait``:
        as long as the retry policy lets the failed one wait."""
        if wait is None:
            return None
        return min(wait, self._policy.max_retry_after_s, cap if cap is not None else wait)

    def _permit(self, search: _Search) -> Permit:
        """A permit of the host's limiter, in turn, before the run's time runs out."""
        try:
            return self.limiter.acquire(search.deadline)
        except Waited:
            self._fail(f"the run's time limit ran out while waiting to call {self._host}", search)

    def _lost(self, exc: requests.RequestException | None, late: bool) -> str:
        """Why no answer came: the request's time ran out, or the connection failed."""
        if late:
            return f"no answer from {self._host} within {self._timeout_s:g}s"
        assert exc is not None
        return f"cannot reach {self._host} ({self._reason(exc)})"

    @staticmethod
    def _reason(exc: requests.RequestException) -> str:
        return failure_reason(exc) or type(exc).__name__

    def _give_up(self, reason: str, search: _Search) -> GiveUp:
        """The WikiError a failure ends in once no retry follows."""
        return lambda retries, out_of_time: self._error(reason, search.retries)

    def _error(self, reason: str, retries: int, hint: str = "") -> WikiError:
        return WikiError(REQUEST_FAILED + self._redact(reason), retries, hint)

    def _fail(self, reason: str, search: _Search, hint: str = "") -> NoReturn:
        raise self._error(reason, search.retries, hint) from None


def _plain_reason(response: requests.Response, body: bytes) -> str:
    """A short plain-text error body (Wikimedia's 403 explains itself), else nothing."""
    if not response.headers.get("Content-Type", "").startswith("text/plain"):
        return ""
    text = " ".join(decode(body[: 4 * MESSAGE_CHARS]).split())[:MESSAGE_CHARS]
    return f": {text}" if text else ""
