"""Short, safe descriptions of values read from a file, for error messages."""

from __future__ import annotations

import reprlib
from typing import Any

from pydantic import ValidationError


class _BoundedRepr(reprlib.Repr):
    """`reprlib.Repr` that also keeps integers short: Python refuses to print one of more than 4,300 digits."""

    def repr_int(self, x: int, level: int) -> str:
        if x.bit_length() > 64:
            return f"<an integer of {x.bit_length()} bits>"
        return super().repr_int(x, level)


_REPR = _BoundedRepr()
# A value from a damaged file can be nested thousands deep or megabytes long: the message shows its start.
_REPR.maxlevel = 3
_REPR.maxstring = 80
_REPR.maxother = 80
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = 5


def brief(value: Any) -> str:
    """A repr of `value` at most about 100 characters long, however deep or long the value is."""
    return _REPR.repr(value)


def event_id_of(record: Any) -> int | str | None:
    """The `id` of a record, when it is one an error message can name (an int or a short string)."""
    if not isinstance(record, dict):
        return None
    value = record.get("id")
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() <= 64:
        return value
    if isinstance(value, str) and len(value) <= 200:
        return value
    return None


def describe_validation_error(exc: ValidationError) -> str:
    """One line per pydantic error: `field: message`."""
    parts = []
    for err in exc.errors(include_url=False):
        where = ".".join(str(p) for p in err["loc"]) or "event"
        message = err["msg"].removeprefix("Value error, ")  # our own validators' text, as written
        parts.append(f"{where}: {message}")
    return "; ".join(parts)
