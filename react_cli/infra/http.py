"""One place that builds HTTP sessions: User-Agent, watched sockets, the debug log, failures.

Both the model client and the MediaWiki backend use ``make_session``. A session retries
nothing itself (``retry.RetryPolicy`` does, around each request); each request owns a
``deadline.Watchdog`` that reaches its connection through ``watched_request``; with ``--debug``
the session's adapter logs every request before it is sent and every answer, redacted.
Failures are told apart by exception type (``failure_reason``), never by their text.

The credentials a request carries are chosen by ``auth.credentials`` (the API key, else the
URL's user information, else the host's ``~/.netrc`` entry), never left to requests, which
would encode a password outside Latin-1 as an internal error; and whatever credentials a
request still carries when it is sent (a proxy's too) are taught to the session's redactor
before it goes, so an answer echoing them is masked.

What a request takes from the environment (proxies, ``NO_PROXY``, the CA bundle, a
``~/.netrc`` entry for requests of no credentials) is read once per origin for the session's
life, a command's, not for each request: requests scanned every variable twice and looked for
the files again on every request, and neither the environment nor those files change under a
running command.
"""

from __future__ import annotations

import contextlib
import http.client
import itertools
import json
import socket
import ssl
import time
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

import requests
from requests.adapters import HTTPAdapter
from urllib3 import HTTPConnectionPool, HTTPSConnectionPool, PoolManager
from urllib3 import exceptions as u3
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.response import BaseHTTPResponse
from urllib3.util.timeout import Timeout

from react_cli import __version__
from react_cli.infra.credentials import header_secrets, redact_headers, redact_url, url_secrets
from react_cli.infra.deadline import NO_DEADLINE, Watchdog
from react_cli.infra.redaction import Redactor
from react_cli.infra.sizelimit import TooLarge

if TYPE_CHECKING:
    from requests.adapters import _HostParams, _PoolKwargs
    from requests.sessions import _Settings

CONNECT_TIMEOUT_S = 10.0
TIMED_OUT = "timed out waiting for the answer"
# Exception types met in a failure's chain, most specific first, and how we say them.
_REASONS: tuple[tuple[tuple[type[BaseException], ...], str], ...] = (
    ((ConnectionRefusedError,), "connection refused"),
    ((requests.ConnectTimeout,), "timed out connecting"),  # not raised for NewConnectionError
    ((u3.ReadTimeoutError, requests.ReadTimeout, TimeoutError), TIMED_OUT),
    ((socket.gaierror, u3.NameResolutionError), "cannot resolve the host name"),
    ((ssl.SSLError, ssl.CertificateError, u3.SSLError), "TLS/SSL error"),
    ((http.client.RemoteDisconnected,), "the server closed the connection without answering"),
    ((ConnectionResetError, BrokenPipeError), "the connection was reset"),
    ((http.client.IncompleteRead, u3.ProtocolError), "the connection broke off mid-answer"),
)


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and every exception it wraps: causes, contexts, urllib3 reasons, arguments."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        item = todo.pop(0)
        if item is None or id(item) in seen:
            continue
        seen.add(id(item))
        yield item
        reason = getattr(item, "reason", None)
        todo += [reason if isinstance(reason, BaseException) else None]
        todo += [item.__cause__, item.__context__]
        todo += [arg for arg in item.args if isinstance(arg, BaseException)]


def failure_reason(exc: BaseException) -> str | None:
    """A network failure in a few plain words (never its text, which may hold a URL)."""
    chain = list(_chain(exc))
    return next(
        (reason for kinds, reason in _REASONS if any(isinstance(e, kinds) for e in chain)), None
    )


def is_timeout(exc: BaseException) -> bool:
    """Whether a request failed because an answer did not come in time."""
    return failure_reason(exc) in (TIMED_OUT, "timed out connecting")


UNREACHABLE = frozenset({"cannot resolve the host name", "connection refused"})
"""Failures that say the host cannot be reached at all: offline, behind a firewall, a server
not started. Seconds later the answer is the same, so they are not retried (four retries of
a name that does not resolve cost a first run offline ~50 s before saying anything)."""


def is_unreachable(exc: BaseException) -> bool:
    """Whether a request failed because its host's name does not resolve or it refused the
    connection (see ``UNREACHABLE``)."""
    return failure_reason(exc) in UNREACHABLE


def is_transient(exc: requests.RequestException) -> bool:
    """Whether a fresh attempt may succeed: the connection failed or timed out (a TLS error,
    a malformed URL or header will not change, nor a host that cannot be reached at all)."""
    return (
        isinstance(exc, (requests.ConnectionError, requests.Timeout))
        and not isinstance(exc, requests.exceptions.SSLError)
        and not is_unreachable(exc)
    )


def special_invalid(host: str) -> bool:
    """Whether ``host`` is under ``.invalid``, which RFC 6761 (section 6.4) reserves for names
    that never resolve: resolvers should answer no at once, and so do we, without asking DNS."""
    return host.rstrip(".").lower().rpartition(".")[2] == "invalid"


def user_agent(contact: str | None = None) -> str:
    """A Wikimedia-policy User-Agent: tool/version (contact) library/version. The project has
    no web page to name, so without the user's ``contact`` there is none (never a made-up URL).

    A header is ASCII (RFC 9110 keeps other bytes opaque; requests fails on what is not
    Latin-1), so every character of the contact outside ASCII is percent-encoded in UTF-8, as
    RFC 3987 maps an IRI to a URI: ``Łukasz`` is sent as ``%C5%81ukasz``, and an address or
    URL of ASCII stays as it is. (``validation`` has refused control characters.)"""
    where = f" ({_ascii(contact)})" if contact else ""
    return f"react-cli/{__version__}{where} requests/{requests.__version__}"


def _ascii(text: str) -> str:
    return "".join(char if char.isascii() else quote(char, safe="") for char in text)


class _WatchedTimeout(Timeout):
    """urllib3's timeout carrying the request's watchdog down to its connection (requests
    passes a ``Timeout`` given as ``timeout=`` through unchanged)."""

    def __init__(self, watchdog: Watchdog, connect: float, read: float) -> None:
        super().__init__(connect=connect, read=read)
        self.watchdog = watchdog
        self._seconds = (connect, read)

    def clone(self) -> _WatchedTimeout:
        return _WatchedTimeout(self.watchdog, *self._seconds)


def watched_request(
    session: requests.Session,
    method: str,
    url: str,
    watchdog: Watchdog,
    timeout_s: float,
    **kwargs: Any,
) -> requests.Response:
    """``session.request`` streamed, under ``watchdog``: ``timeout_s`` per read, at most
    ``CONNECT_TIMEOUT_S`` to connect, and every socket it opens shut when the watchdog fires."""
    timeout = _WatchedTimeout(watchdog, min(CONNECT_TIMEOUT_S, timeout_s), timeout_s)
    # requests passes a urllib3 Timeout through as it is; its stubs only know numbers
    return session.request(method, url, timeout=timeout, stream=True, **kwargs)  # type: ignore[arg-type]


KEEP_WAIT_S = 0.05
"""How long the last bytes of an answer read to its end (an SSE stream's closing chunk, after
``[DONE]``) may take to come: a server sends them with ``[DONE]``, so they are there or never."""
KEEP_MAX_ITEMS = 8


def keep_connection(response: requests.Response, rest: Iterator[object]) -> None:
    """Read ``rest``, what is left of ``response``'s body once its reader has all it wants
    (after ``[DONE]``: a blank line and the closing chunk), so its connection goes back to the
    pool for the next request, as a body read to its end does, instead of being closed (and a
    new one, a TLS handshake too, made for every streamed call). When the rest does not end
    within ``KEEP_WAIT_S`` (a watchdog of its own shuts the socket then, however the bytes
    trickle), or holds more than a few lines, the connection is closed as before."""
    connection = getattr(response.raw, "connection", None)
    sock: socket.socket | None = getattr(connection, "sock", None)
    if sock is None:
        return
    with Watchdog(KEEP_WAIT_S, NO_DEADLINE) as dog:
        dog.watch(sock)
        with contextlib.suppress(requests.RequestException, u3.HTTPError, OSError, TooLarge):
            for _ in itertools.islice(rest, KEEP_MAX_ITEMS):
                pass


class _WatchedConnection(HTTPConnection):
    """Reports each socket it opens to the watchdog of the request it serves."""

    watchdog: Watchdog | None = None

    def _new_conn(self) -> socket.socket:
        if special_invalid(self._dns_host):
            missing = socket.gaierror(socket.EAI_NONAME, "Name or service not known")
            raise u3.NameResolutionError(self.host, self, missing)
        sock = super()._new_conn()
        if self.watchdog is not None:
            self.watchdog.watch(sock)
        return sock


class _WatchedHTTPSConnection(_WatchedConnection, HTTPSConnection):
    """TLS: the plain socket is watched while the handshake runs, then the TLS one."""

    def connect(self) -> None:
        super().connect()
        if self.sock is not None and self.watchdog is not None:
            self.watchdog.watch(self.sock)


class _WatchedRequests(HTTPConnectionPool):
    """Hands the request's watchdog (from its timeout) to the connection that sends it."""

    def _make_request(self, conn: Any, *args: Any, **kwargs: Any) -> BaseHTTPResponse:
        timeout = kwargs.get("timeout")
        dog = timeout.watchdog if isinstance(timeout, _WatchedTimeout) else None
        conn.watchdog = dog
        if dog is not None and conn.sock is not None:  # a kept-alive connection's socket
            dog.watch(conn.sock)
        return super()._make_request(conn, *args, **kwargs)


class _WatchedPool(_WatchedRequests):
    ConnectionCls = _WatchedConnection


class _WatchedHTTPSPool(_WatchedRequests, HTTPSConnectionPool):
    ConnectionCls = _WatchedHTTPSConnection


_WATCHED_POOLS = {"http": _WatchedPool, "https": _WatchedHTTPSPool}


Origin = tuple[str, str]
"""A URL's scheme and network location: what the environment's settings depend on."""


def _origin(url: str) -> Origin:
    parts = urlsplit(url)
    return parts.scheme.lower(), parts.netloc.lower()


class _Session(requests.Session):
    """A requests session that reads the environment once per origin (see the module
    docstring), then merges it as requests does."""

    def __init__(self) -> None:
        super().__init__()
        self._environment: dict[tuple[object, ...], _Settings] = {}
        self._netrc: dict[Origin, requests.auth.AuthBase | tuple[str, str]] = {}

    def merge_environment_settings(
        self, url: Any, proxies: Any, stream: Any, verify: Any, cert: Any
    ) -> _Settings:
        if proxies:  # a request's own (none of ours gives any): merged with the environment
            return super().merge_environment_settings(url, proxies, stream, verify, cert)
        key = (*_origin(str(url)), stream, verify, cert)
        settings = self._environment.get(key)
        if settings is None:
            settings = super().merge_environment_settings(url, proxies, stream, verify, cert)
            self._environment[key] = settings
        merged = settings.copy()
        merged["proxies"] = dict(settings["proxies"])  # the caller's to change
        return merged

    def prepare_request(self, request: requests.Request) -> requests.PreparedRequest:
        origin = _origin(str(request.url))
        # a URL's user information is requests' to apply when ~/.netrc has no entry
        if request.auth is None and self.auth is None and self.trust_env and "@" not in origin[1]:
            if origin not in self._netrc:
                self._netrc[origin] = requests.utils.get_netrc_auth(request.url) or _NO_AUTH
            request.auth = self._netrc[origin]
        return super().prepare_request(request)


class _NoAuth(requests.auth.AuthBase):
    """No credentials, said so: requests then looks for none in ``~/.netrc`` again (for a URL
    without user information, which requests would apply in their stead)."""

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        return request


_NO_AUTH = _NoAuth()


class _Adapter(HTTPAdapter):
    """Connections (direct or through an HTTP proxy) that obey the watchdog and teach
    ``redactor`` the credentials each request carries before it is sent; with ``log``, each
    request is logged as it is sent and each answer as it arrives (redacted)."""

    def __init__(self, redactor: Redactor, log: Callable[[str], None] | None) -> None:
        super().__init__(pool_maxsize=16)  # max_retries=0: retry.RetryPolicy retries
        self._redactor = redactor
        self._log = redactor.log(log)
        self._pool_keys: dict[tuple[object, ...], tuple[_HostParams, _PoolKwargs]] = {}

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = dict(_WATCHED_POOLS)

    def build_connection_pool_key_attributes(
        self, request: requests.PreparedRequest, verify: Any, cert: Any = None
    ) -> tuple[_HostParams, _PoolKwargs]:
        """requests' own, once per origin and TLS setting: it looks on disk for the CA bundle
        on every request."""
        key = (*_origin(str(request.url)), verify, cert)
        attributes = self._pool_keys.get(key)
        if attributes is None:
            attributes = super().build_connection_pool_key_attributes(request, verify, cert)
            self._pool_keys[key] = attributes
        host, pool = attributes
        return host.copy(), pool.copy()

    def proxy_manager_for(self, proxy: str, **kwargs: Any) -> PoolManager:
        self._redactor.learn(url_secrets(proxy))  # HTTP_PROXY=http://user:password@host
        manager: PoolManager = super().proxy_manager_for(proxy, **kwargs)
        manager.pool_classes_by_scheme = dict(_WATCHED_POOLS)
        return manager

    def send(
        self, request: requests.PreparedRequest, *args: Any, **kwargs: Any
    ) -> requests.Response:
        self._redactor.learn(header_secrets(request.headers))
        if self._log is None:
            return super().send(request, *args, **kwargs)
        url = redact_url(str(request.url), keep_query=True)
        line = f"{request.method} {url} headers={_headers(request.headers)}"
        body = request.body
        if body:
            line += f" body={body.decode('utf-8', 'replace') if isinstance(body, bytes) else body}"
        self._log(line)
        started = time.monotonic()
        response = super().send(request, *args, **kwargs)
        elapsed = time.monotonic() - started  # the session sets response.elapsed only later
        self._log(
            f"HTTP {response.status_code} {url} in {elapsed:.3f}s "
            f"headers={_headers(response.headers)}"
        )
        return response


def _headers(headers: Mapping[str, str | bytes]) -> str:
    shown = {k: v.decode("latin-1") if isinstance(v, bytes) else v for k, v in headers.items()}
    return json.dumps(redact_headers(shown))


def make_session(
    agent: str,
    debug_log: Callable[[str], None] | None = None,
    redactor: Redactor | None = None,
) -> requests.Session:
    """A requests session sending ``agent`` as its User-Agent, for http and https.

    With ``debug_log``, every request and its answer are logged in one line each (credential
    headers and URL user information masked, and whatever ``redactor`` knows: the secrets of
    the URL the session serves, the API key). ``redactor`` learns every credential the
    session's requests carry: whoever masks what its answers hold should use the same one.
    """
    session = _Session()
    adapter = _Adapter(redactor or Redactor(), debug_log)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    session.headers["User-Agent"] = agent
    return session
