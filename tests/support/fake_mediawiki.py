"""A fake MediaWiki host on 127.0.0.1 for tests and offline benchmarks.

It answers the Action API subset react-cli uses (``action=query`` with ``titles``,
``prop=extracts|pageprops|info|links`` and ``list=search``) in ``formatversion=2`` shape,
records every request, and can inject faults (HTTP errors, bad bodies, API errors, delays) in
order. ``prop=info`` gives each page's ``lastrevid`` as MediaWiki does: the recorded revision
ids of ``revisions.json`` where the recordings hold one, else a stable made-up id
(``SYNTHETIC_REVISION`` + the page id); a test changes a page's revision in ``revisions``.
``ECHO`` in a page's text becomes the request's line and headers (a page echoing its request).
A plain class, not a pytest fixture, so benchmark scripts can use it too.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from hostile_server import echo_line
from keepalive import KeepAliveHandler, KeepAliveServer

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "wiki"
API_PATH = "/w/api.php"
ECHO = "<<request>>"
SYNTHETIC_REVISION = 900_000_000
POLL_S = 0.005  # serve_forever poll: how long stop() may wait for the accept loop
UA_BLOCKED = (
    "Please set a user-agent and respect our robot policy "
    "https://w.wiki/4wJS. See also https://phabricator.wikimedia.org/T400119.\n"
)


@dataclass
class Fault:
    """One injected misbehaviour, used for the next request instead of a normal answer.

    ``delay_s`` sleeps first; then ``api_error`` answers a JSON API error, ``body`` answers
    that raw text, and a non-200 ``status`` alone answers a short text error. A fault with
    only a delay answers normally after it.
    """

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: str | None = None
    api_error: str | None = None
    delay_s: float = 0.0


class FakeMediaWiki:
    """A threaded HTTP server imitating ``{host}/w/api.php``; use as a context manager."""

    def __init__(
        self,
        pages: dict[str, str],
        *,
        redirects: dict[str, str] | None = None,
        disambiguation: dict[str, list[str]] | None = None,
        search_results: dict[str, list[str]] | None = None,
        revisions: dict[str, int] | None = None,
        language: str = "en",
        require_user_agent: bool = True,
    ) -> None:
        self.pages = dict(pages)
        self.revisions = dict(revisions or {})
        self.language = language
        self.redirects = dict(redirects or {})
        self.disambiguation = dict(disambiguation or {})
        self.search_results = dict(search_results or {})
        self.require_user_agent = require_user_agent
        self.requests: list[dict[str, Any]] = []
        self.faults: list[Fault] = []
        self.url = ""
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: KeepAliveServer | None = None
        self._thread: threading.Thread | None = None

    @classmethod
    def from_fixtures(cls, **kwargs: Any) -> FakeMediaWiki:
        """A fake serving the real recorded pages in ``tests/fixtures/wiki``."""

        def load(name: str) -> Any:
            return json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))

        return cls(
            load("pages"),
            redirects=load("redirects"),
            disambiguation=load("disambiguation"),
            search_results=load("search"),
            revisions=load("revisions"),
            **kwargs,
        )

    def start(self) -> FakeMediaWiki:
        server = KeepAliveServer(("127.0.0.1", 0), _Handler)
        server.fake = self  # type: ignore[attr-defined]
        self._server = server
        self._stopping.clear()
        self.url = f"http://127.0.0.1:{server.server_address[1]}"
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": POLL_S}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes handlers sleeping in a delay fault
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeMediaWiki:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- request handling -------------------------------------------------------------

    def _next_fault(self) -> Fault | None:
        with self._lock:
            return self.faults.pop(0) if self.faults else None

    def _sleep(self, seconds: float) -> None:
        self._stopping.wait(seconds)

    def _exists(self, title: str) -> bool:
        return title in self.pages or title in self.disambiguation

    def _pageid(self, title: str) -> int:
        """A stable id per title, in the order pages were given."""
        return 1000 + [*self.pages, *self.disambiguation].index(title)

    def revision(self, title: str) -> int:
        """The page's current revision id (``lastrevid``)."""
        return self.revisions.get(title, SYNTHETIC_REVISION + self._pageid(title))

    def _text(self, title: str) -> str:
        if title in self.pages:
            return self.pages[title]
        return "\n".join([f"{title} may refer to:", *self.disambiguation[title]])

    def answer_query(self, params: dict[str, str]) -> dict[str, Any]:
        """The JSON object for one ``action=query`` request."""
        query: dict[str, Any] = {}
        warnings: dict[str, Any] = {}
        if "titles" in params:
            self._answer_titles(params, query, warnings)
        if params.get("list") == "search":
            query["search"] = [{"ns": 0, "title": t} for t in self._search(params)]
        answer: dict[str, Any] = {"batchcomplete": True, "query": query}
        if warnings:
            answer["warnings"] = warnings
        return answer

    def _answer_titles(
        self, params: dict[str, str], query: dict[str, Any], warnings: dict[str, Any]
    ) -> None:
        normalized, redirected, finals = [], [], []
        for raw in params["titles"].split("|"):
            title = normalize_title(raw)
            if title != raw:
                normalized.append({"fromencoded": False, "from": raw, "to": title})
            if "redirects" in params and title in self.redirects:
                redirected.append({"from": title, "to": self.redirects[title]})
                title = self.redirects[title]
            if title not in finals:
                finals.append(title)
        props = set(params.get("prop", "").split("|"))
        good = [t for t in finals if self._exists(t)]
        with_extract = set(good)
        if "extracts" in props and "exintro" not in params and len(good) > 1:
            # Like TextExtracts: one whole-article extract per request, lowest page id first.
            with_extract = {min(good, key=self._pageid)}
            warnings["extracts"] = {
                "warnings": "exlimit was too large for a whole article extracts request, "
                "lowered to 1."
            }
        pages = []
        for title in finals:
            if title not in good:
                pages.append({"ns": 0, "title": title, "missing": True})
                continue
            page: dict[str, Any] = {"pageid": self._pageid(title), "ns": 0, "title": title}
            if "info" in props:  # as the recorded prop=info answers have it
                page.update(
                    contentmodel="wikitext",
                    pagelanguage=self.language,
                    pagelanguagehtmlcode=self.language,
                    pagelanguagedir="ltr",
                    touched="2026-03-27T09:26:22Z",
                    lastrevid=self.revision(title),
                    length=len(self._text(title).encode("utf-8")),
                )
            if "pageprops" in props and title in self.disambiguation:
                page["pageprops"] = {"disambiguation": ""}
            if "extracts" in props and title in with_extract:
                text = self._text(title)
                page["extract"] = text.split("\n==")[0] if "exintro" in params else text
            if "links" in props and title in self.disambiguation:
                entries = sorted(self.disambiguation[title])
                page["links"] = [{"ns": 0, "title": t} for t in entries]
            pages.append(page)
        if normalized:
            query["normalized"] = normalized
        if redirected:
            query["redirects"] = redirected
        query["pages"] = pages

    def _search(self, params: dict[str, str]) -> list[str]:
        text = params.get("srsearch", "")
        limit = int(params.get("srlimit", "10"))
        titles = [*self.pages, *self.disambiguation, *self.redirects]
        if params.get("srwhat") == "nearmatch":
            folded = " ".join(text.replace("_", " ").split()).casefold()
            return [t for t in titles if t.casefold() == folded][:1]
        if text in self.search_results:
            return self.search_results[text][:limit]
        words = text.casefold().split()
        found = [t for t in titles if words and all(w in t.casefold() for w in words)]
        return list(dict.fromkeys(found))[:limit]


def normalize_title(title: str) -> str:
    """MediaWiki's title normalisation: underscores to spaces, trimmed, first letter upper."""
    title = " ".join(title.replace("_", " ").split())
    return title[:1].upper() + title[1:]


def library_default_agent(agent: str | None) -> bool:
    """Whether a User-Agent is one Wikimedia blocks: missing or a bare library default."""
    return not agent or agent.startswith(("python-requests", "python-urllib", "Python-urllib"))


class _Handler(KeepAliveHandler):
    """Serves the requests of one connection for the FakeMediaWiki stored on the server."""

    server: KeepAliveServer

    def do_GET(self) -> None:
        fake: FakeMediaWiki = self.server.fake  # type: ignore[attr-defined]
        url = urlsplit(self.path)
        params = dict(parse_qsl(url.query, keep_blank_values=True))
        fake.requests.append({"params": params, "headers": dict(self.headers.items())})
        if url.path != API_PATH:
            self._send(404, "Not Found\n", "text/plain")
            return
        if fake.require_user_agent and library_default_agent(self.headers.get("User-Agent")):
            self._send(403, UA_BLOCKED, "text/plain")
            return
        fault = fake._next_fault()
        if fault is not None:
            fake._sleep(fault.delay_s)
            if self._send_fault(fault):
                return
        if params.get("action") != "query":
            error = {"code": "badvalue", "info": 'Unrecognized value for parameter "action".'}
            self._send_json({"error": error})
            return
        self._send_json(fake.answer_query(params))

    def _send_fault(self, fault: Fault) -> bool:
        """Answer with ``fault``; False when it was only a delay."""
        if fault.api_error is not None:
            error = {"code": fault.api_error, "info": f"Injected {fault.api_error} error."}
            if fault.api_error == "maxlag":
                error["info"] = "Waiting for 10.64.0.1: 7 seconds lagged."
            body = json.dumps({"error": error})
            self._send(fault.status, body, "application/json", fault.headers)
        elif fault.body is not None:
            self._send(fault.status, fault.body, "text/html; charset=utf-8", fault.headers)
        elif fault.status != 200:
            self._send(fault.status, f"Error {fault.status}\n", "text/html", fault.headers)
        else:
            return False
        return True

    def _send_json(self, data: dict[str, Any]) -> None:
        """``data``; ``ECHO`` in a page's text becomes the request's line and headers."""
        echo = echo_line(self.command, self.path, self.headers.items())
        text = json.dumps(data).replace(ECHO, json.dumps(echo)[1:-1])
        self._send(200, text, "application/json; charset=utf-8")

    def _send(
        self, status: int, body: str, content_type: str, headers: dict[str, str] | None = None
    ) -> None:
        payload = body.encode("utf-8")
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout tests); nothing to answer
