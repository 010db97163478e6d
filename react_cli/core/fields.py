"""The one reader of recorded JSON fields: traces, eval rows and summaries, recorded configs.

What react-cli wrote it reads back through these, so a field has one meaning of "valid" wherever
it is recorded: text is a ``str``; a number is an ``int`` or ``float`` but never a ``bool``
(JSON numbers read by ``infra.untrusted.parse_json`` are finite); a whole number an ``int``;
each within the bounds its caller gives. ``None`` (absent or ``null``) passes through as None,
for the caller to default or to require (:func:`needed`). A wrong field is a
:class:`FieldError` saying which field and what is wrong, in words a message can carry.
"""

from __future__ import annotations

import math
from typing import TypeVar

from react_cli.core.wording import quoted

T = TypeVar("T")


class FieldError(ValueError):
    """A recorded field that is not what react-cli writes there: ``em is 1.5, out of range``
    (the value shown cut, see ``wording.quoted``)."""

    def __init__(self, name: str, value: object, what: str) -> None:
        super().__init__(f"{name} is {quoted(value)}, {what}")
        self.name = name


def needed(value: T | None, name: str) -> T:
    """``value``, which must be recorded."""
    if value is None:
        raise FieldError(name, value, "not recorded")
    return value


def text(value: object, name: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise FieldError(name, value, "not text")
    return value


def optional_text(data: dict[str, object], key: str) -> str | None:
    """The text field ``key`` of a recorded object (absent or null: None)."""
    return text(data.get(key), key)


def flag(value: object, name: str) -> bool | None:
    if value is not None and not isinstance(value, bool):
        raise FieldError(name, value, "not true or false")
    return value


def number(value: object, name: str, *, low: float = 0.0, high: float = math.inf) -> float | None:
    """A number from ``low`` to ``high`` (by default: not negative)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise FieldError(name, value, "not a number")
    if not low <= value <= high:
        raise FieldError(name, value, "out of range")
    return value


def whole(value: object, name: str, *, low: int = 0, high: float = math.inf) -> int | None:
    """A whole number from ``low`` to ``high``."""
    found = number(value, name, low=low, high=high)
    if found is not None and type(found) is not int:
        raise FieldError(name, value, "not a whole number")
    return found


def seconds(value: object, name: str) -> float:
    """A recorded duration (missing: 0)."""
    return float(number(value, name) or 0.0)
