"""The credentials a request carries, as requests' auth objects: an API key as Bearer auth, a
URL's user information or a ``~/.netrc`` entry as Basic auth in UTF-8. Given to requests as the
request's auth, so requests adds none of its own (it would replace a header with Basic auth)."""

from __future__ import annotations

import base64
from urllib.parse import unquote_to_bytes, urlsplit

import requests
import requests.auth
import requests.utils


class BearerAuth(requests.auth.AuthBase):
    """``Authorization: Bearer KEY`` given to requests as the request's auth, not as a header:
    requests then applies neither a ``~/.netrc`` entry for the host nor ``user:password@`` in
    the URL, either of which would replace a plain header with Basic auth and so never send the
    key."""

    def __init__(self, key: str) -> None:
        self.key = key

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        request.headers["Authorization"] = f"Bearer {self.key}"
        return request


class BasicAuth(requests.auth.AuthBase):
    """``Authorization: Basic`` of a user and password in UTF-8, the one charset RFC 7617
    names (requests encodes them in Latin-1 and fails on any other character)."""

    def __init__(self, user: bytes, password: bytes) -> None:
        self.user = user
        self.password = password

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        token = base64.b64encode(self.user + b":" + self.password).decode("ascii")
        request.headers["Authorization"] = f"Basic {token}"
        return request


def credentials(url: str, api_key: str | None = None) -> requests.auth.AuthBase | None:
    """The credentials requests to ``url`` carry: ``api_key`` as Bearer auth, else the URL's
    user information, else the ``~/.netrc`` entry of its host (``$NETRC`` names another file),
    as Basic auth; None for none. Given to requests as the request's auth, so it adds none of
    its own."""
    if api_key:
        return BearerAuth(api_key)
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    userinfo = parts.netloc.rpartition("@")[0]
    if userinfo:
        user, _, password = userinfo.partition(":")
        return BasicAuth(unquote_to_bytes(user), unquote_to_bytes(password))
    netrc = requests.utils.get_netrc_auth(url)
    if netrc is None:
        return None
    user, password = netrc
    return BasicAuth(user.encode("utf-8"), password.encode("utf-8"))
