"""How a loaded event was laid out in its file, so that writing it back changes nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from openhands_memory.events.base import Event

TOP_LEVEL_TAGS = frozenset({"delegation_id", "memory_record"})
"""Extra fields of an event built in code that are written at the top level of its JSON, not in its
payload: tags for readers of this library (`delegation_id`, see `events.scopes`; `memory_record`, see
`memory.records`) that OpenHands' loader must ignore (it ignores unknown top-level keys, and rejects
unknown `args`)."""

_KEY = "_wire"


class Wire(dict[str, Any]):
    """The JSON shape an event was read from.

    Logs from different OpenHands versions carry different subsets of fields; writing back the
    keys that were there (and only those, in their order) is what makes the round trip exact.

    It is itself the event's `__pydantic_private__` (an empty dict to pydantic, which copies and
    pickles it with its slots): a dict holding a separate layout object cost 180 more bytes an event.
    """

    __slots__ = ("data", "order", "payload", "shadow")

    data: dict[str, Any]
    """The top-level object as read (a shallow copy): its key order, and the values of the keys
    we do not model (`message`, `success`, other tools' keys); with `order`, only those values."""
    payload: tuple[str, ...] | None
    """Keys of `args` / `extras`, in file order; None when the object was absent."""
    shadow: dict[str, Any] | None
    """Payload values whose names clash with a top-level field, kept apart."""
    order: tuple[str, ...] | None
    """The top-level keys in file order, when `data` holds only the values of the keys we do not model
    (an event a reader built: the tuple is shared by every event of the same shape); None when `data`
    is the whole object."""

    def __init__(
        self,
        data: dict[str, Any],
        payload: tuple[str, ...] | None,
        shadow: dict[str, Any] | None,
        order: tuple[str, ...] | None = None,
    ) -> None:
        self.data = data
        self.payload = payload
        self.shadow = shadow
        self.order = order

    def __repr__(self) -> str:
        return f"Wire(data={self.data!r}, payload={self.payload!r}, shadow={self.shadow!r}, order={self.order!r})"

    def __eq__(self, other: object) -> bool:
        if type(other) is not Wire:
            return NotImplemented
        return (self.data, self.payload, self.shadow, self.order) == (other.data, other.payload, other.shadow, other.order)

    __hash__ = None  # type: ignore[assignment]


def wire_of(event: Event) -> Wire | None:
    """The layout `event` was loaded with, or None for an event built in code."""
    private = event.__pydantic_private__
    if type(private) is Wire:
        return private
    return private.get(_KEY) if private else None


def set_wire(event: Event, wire: Wire | None) -> None:
    """Record (or with None, forget) the layout an event was loaded with."""
    private = event.__pydantic_private__
    if private is None or type(private) is Wire:
        object.__setattr__(event, "__pydantic_private__", wire)
    else:
        private[_KEY] = wire
