"""The incremental ``ObservationCutter`` gives exactly what the rescanning one it replaced gave.

``RescanningCutter`` below is the previous implementation, kept as the oracle: it searched the
whole buffer on every chunk (quadratic in the number of chunks). For generated texts cut into
generated chunks, every ``feed`` and ``flush`` must return the same strings, ``done`` must flip
at the same chunk, and ``text`` must be the same. One difference is deliberate: the old cutter
compared a line's start with ``str.lower`` and so showed "obſ" (long s) before cutting the
"obſervation" line it became; the new one holds it, so what is shown is always what is kept.
"""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from react_cli.loop.text.cutter import _OBSERVATION_LINE, ObservationCutter, cut_at_observation


class RescanningCutter:
    """The previous ``ObservationCutter`` (react-cli before issue 10), verbatim in behaviour."""

    def __init__(self) -> None:
        self._buffer = ""
        self._sent = 0
        self.done = False

    @property
    def text(self) -> str:
        return cut_at_observation(self._buffer)

    def feed(self, chunk: str) -> str:
        if self.done or not chunk:
            return ""
        self._buffer += chunk
        match = _OBSERVATION_LINE.search(self._buffer)
        if match and match.end() < len(self._buffer):
            self.done = True
            self._buffer = cut_at_observation(self._buffer)
            return self._emit(len(self._buffer))
        last_newline = self._buffer.rfind("\n")
        safe = len(self._buffer)
        partial = self._buffer[last_newline + 1 :]
        rest = partial.lstrip(" \t*_#>").lower()
        if "observation".startswith(rest) or _OBSERVATION_LINE.match(partial):
            safe = max(last_newline, 0)
        if safe and self._buffer[safe - 1] == "\r":
            safe -= 1
        return self._emit(safe)

    def flush(self) -> str:
        self._buffer = cut_at_observation(self._buffer)
        return self._emit(len(self._buffer))

    def _emit(self, upto: int) -> str:
        if upto <= self._sent:
            return ""
        out = self._buffer[self._sent : upto]
        self._sent = upto
        return out


# Pieces that make the cutter's decisions interesting: the word in several cases and prefixes,
# the marks allowed before it, line ends of each kind, letters and non-letters after it.
PIECES = [
    "Observation", "observation", "OBSERVATION", "Obs", "Observations", "Observation1",
    "Observation:", "\n", "\r\n", "\r", " ", "\t", "*", "_", "#", ">", "**", "x", "Thought", "é",
    "1", ":", "Action: Search[x]", "\n\n", "ob", "servation",
]  # fmt: skip


@st.composite
def chunked(draw: st.DrawFn, pieces: list[str] = PIECES) -> list[str]:
    text = "".join(draw(st.lists(st.sampled_from(pieces), max_size=30)))
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=12)))
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


@settings(max_examples=400, deadline=None)
@given(chunked())
def test_same_output_as_the_rescanning_cutter(chunks: list[str]) -> None:
    new, old = ObservationCutter(), RescanningCutter()
    for chunk in chunks:
        assert new.feed(chunk) == old.feed(chunk)
        assert new.done == old.done
    assert new.flush() == old.flush()
    assert new.text == old.text


@settings(max_examples=150, deadline=None)
@given(chunked([*PIECES, "obſ", "ſ", "obſervation", "\u212a"]))
def test_what_is_shown_is_what_is_kept(chunks: list[str]) -> None:
    cutter = ObservationCutter()
    shown = "".join(cutter.feed(chunk) for chunk in chunks) + cutter.flush()
    assert shown == cutter.text
    if not cutter.done:
        assert shown == cut_at_observation("".join(chunks))
