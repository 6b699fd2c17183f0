"""How a loaded event was laid out in its file, so that writing it back changes nothing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from openhands_memory.events.base import Event

_KEY = "_wire"


@dataclass(slots=True)  # not frozen: a frozen dataclass costs 3x as much to build, and this one is built per event
class Wire:
    """The JSON shape an event was read from.

    Logs from different OpenHands versions carry different subsets of fields; writing back the
    keys that were there (and only those, in their order) is what makes the round trip exact.
    """

    data: dict[str, Any]
    """The top-level object as read (a shallow copy): its key order, and the values of the keys
    we do not model (`message`, `success`, other tools' keys); with `order`, only those values."""
    payload: tuple[str, ...] | None
    """Keys of `args` / `extras`, in file order; None when the object was absent."""
    shadow: dict[str, Any] | None
    """Payload values whose names clash with a top-level field, kept apart."""
    order: tuple[str, ...] | None = None
    """The top-level keys in file order, when `data` holds only the values of the keys we do not model
    (an event a reader built: the tuple is shared by every event of the same shape); None when `data`
    is the whole object."""


# The wire is kept in pydantic's private-attribute dict rather than declared as a PrivateAttr:
# declaring one makes pydantic initialise it on every construction, a quarter of load time.
def wire_of(event: Event) -> Wire | None:
    """The layout `event` was loaded with, or None for an event built in code."""
    private = event.__pydantic_private__
    return private.get(_KEY) if private else None


def set_wire(event: Event, wire: Wire | None) -> None:
    """Record (or with None, forget) the layout an event was loaded with."""
    private = event.__pydantic_private__
    if private is None:
        object.__setattr__(event, "__pydantic_private__", {_KEY: wire})
    else:
        private[_KEY] = wire
