"""A conversation the chat tests script: a question whose Search finds Albert Einstein, and a
follow-up whose Lookup reads that page (the recorded fake Wikipedia holds it)."""

from __future__ import annotations

from eval_fakes import finish, search
from fake_openai import Reply

BORN = "When was Albert Einstein born?"
DIED = "When did he die?"
FOLLOW_UP: dict[str, list[str | Reply]] = {
    BORN: [search("Albert Einstein"), finish("14 March 1879", 2)],
    DIED: [" The page is loaded.\nAction 1: Lookup[1955]", finish("18 April 1955", 2)],
}
"""``PerQuestion`` scripts: 14 March 1879, then (the page carried over) 18 April 1955."""
