"""`LoadedEvents`: the list `load_events` (and a JSONL stream) loads, which remembers each event's id and
class, and (from a stream) its `hidden` flag.

Reading the ids of 10k pydantic events costs several memory misses per event (the object, its
`__dict__`, the dict's table, the int); a fresh `View.from_events` over a loaded log spent most of
its time there. The loader reads them anyway, so it records them in a compact array, and
`View.from_events` uses the record while it still matches the events:

- the list holds the same objects as when it was recorded (any list change is seen by comparing
  the list with a copy kept then: a pointer comparison per item, no event is read);
- no event id, class or `hidden` flag was assigned anywhere since (`Event.__setattr__` counts those
  writes).

Otherwise `record()` gives None and the view reads the events as for any other list. `agent_history`
and `ViewBuilder` use the record the same way, so opening a `History` on a long log reads no event a
second time. Writing an id behind pydantic's back (`event.__dict__["id"] = ...`,
`object.__setattr__`) is not seen; nothing in this library does, and pydantic's own fields-set
tracking makes the same assumption.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from itertools import compress, pairwise
from typing import Any

from openhands_memory.events.base import Event, id_writes

__all__ = ["LoadedEvents", "LoadedRecord"]


class LoadedRecord:
    """What a loaded list looked like: its items, their classes, ids and hidden flags (None: not
    recorded), and whether the ids ascend."""

    __slots__ = ("ascending", "hidden", "ids", "items", "types", "writes")

    def __init__(
        self,
        items: list[Event],
        types: list[type],
        ids: array[int],
        ascending: bool,
        writes: int,
        hidden: bytes | None = None,
    ) -> None:
        self.items = items
        self.types = types
        self.ids = ids
        self.ascending = ascending
        self.writes = writes
        self.hidden = hidden

    def subset(self, keep: list[bool]) -> LoadedEvents:
        """The recorded events where `keep` is true, as a list with its own record (no event is read)."""
        items = list(compress(self.items, keep))
        ids = array("q", compress(self.ids, keep))
        hidden = bytes(compress(self.hidden, keep)) if self.hidden is not None else None
        ascending = self.ascending or all(a <= b for a, b in pairwise(ids))
        record = LoadedRecord(items, list(compress(self.types, keep)), ids, ascending, self.writes, hidden)
        return LoadedEvents.with_record(items, record)


class LoadedEvents(list[Event]):
    """A list of events that remembers their ids and classes as loaded (see the module docstring).

    It is a list in every other way; a copy, a slice or a pickle of it is a plain list.
    """

    __slots__ = ("_record",)

    def __init__(self, events: Iterable[Event] = ()) -> None:
        super().__init__(events)
        self._record: LoadedRecord | None = _recorded(self)

    @classmethod
    def with_record(cls, events: list[Event], record: LoadedRecord | None) -> LoadedEvents:
        """The events with a record made while each event was at hand (no second pass); None: no record."""
        loaded = cls.__new__(cls)
        list.__init__(loaded, events)
        loaded._record = record
        return loaded

    @classmethod
    def as_read(cls, events: list[Event], types: list[type], ids: list[int], hidden: bytearray) -> LoadedEvents:
        """The events a reader built, with the classes, ids and hidden flags it noted as it went.

        The record keeps `events` itself (the list returned is a copy): the reader must not change it.
        Ids it could not note (not an int within 64 bits) leave the list without a record.
        """
        try:
            recorded_ids = array("q", ids)
        except (TypeError, OverflowError):
            return cls(events)
        ascending = all(a <= b for a, b in pairwise(recorded_ids))
        record = LoadedRecord(events, types, recorded_ids, ascending, id_writes(), bytes(hidden))
        return cls.with_record(events, record)

    def snapshot(self) -> LoadedEvents:
        """A copy that keeps the record (while it still matches): O(n) pointers, no event read."""
        return LoadedEvents.with_record(list(self), self.record())

    def record(self) -> LoadedRecord | None:
        """The record, if the events still match it; else None (and it is dropped)."""
        record = self._record
        if record is None:
            return None
        if record.writes != id_writes() or not list.__eq__(self, record.items):
            self._record = None
            return None
        return record

    def __reduce__(self) -> Any:
        return (list, (list(self),))

    def __copy__(self) -> list[Event]:
        return list(self)


def _recorded(events: list[Event]) -> LoadedRecord | None:
    """The record of `events`, or None if an id is not a plain int within 64 bits."""
    try:
        ids = array("q", [event.id for event in events])  # type: ignore[arg-type]  # None raises TypeError
    except (TypeError, OverflowError):
        return None
    ascending = all(a <= b for a, b in pairwise(ids))
    return LoadedRecord(list(events), list(map(type, events)), ids, ascending, id_writes())
