"""One place that builds a run: the :class:`Session` a question is answered with
(``base.py``), made by :func:`open_session` over what a command holds open for its runs
(``opened.py``: the spans, the cache, the model's clients, the toolboxes and the users'
tools, the consent), each resource opened by ``builders.py``."""

from __future__ import annotations

from react_cli.session.base import Session, settings_protocols, text_protocols
from react_cli.session.builders import Shared, Told
from react_cli.session.opened import OpenSession, Uses, open_session

__all__ = [
    "OpenSession",
    "Session",
    "Shared",
    "Told",
    "Uses",
    "open_session",
    "settings_protocols",
    "text_protocols",
]
