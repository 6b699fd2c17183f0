"""`InMemoryEventStore`: events in a list, gone when the process ends."""

from __future__ import annotations

from collections.abc import Iterator

from openhands_memory.errors import StoreClosedError
from openhands_memory.events import Event
from openhands_memory.stream.store import check_next_id


class InMemoryEventStore:
    """An `EventStore` that keeps events in a list; for tests, replays and short-lived streams."""

    def __init__(self) -> None:
        self._events: list[Event] = []
        self._last_id: int | None = None
        self._closed = False

    def append(self, event: Event) -> None:
        """Store one event after the others (see `EventStore.append`)."""
        if self._closed:
            raise StoreClosedError()
        check_next_id(event, self._last_id, len(self._events))
        self._events.append(event)
        self._last_id = event.id

    def read_events(self, start: int = 0, stop: int | None = None) -> Iterator[Event]:
        """The events at positions `start` to `stop` (excluded), in order."""
        if self._closed:
            raise StoreClosedError()
        # Slicing copies the range, so appends while the caller iterates do not disturb it.
        return iter(self._events[start:stop])

    def snapshot(self) -> list[Event]:
        """Every event, as a new list."""
        if self._closed:
            raise StoreClosedError()
        return list(self._events)

    def event_ids(self) -> list[int]:
        """The ids of every event, in order."""
        if self._closed:
            raise StoreClosedError()
        return [event.id for event in self._events]  # type: ignore[misc]

    def __len__(self) -> int:
        return len(self._events)

    def close(self) -> None:
        """Stop serving reads and appends; the events are dropped."""
        self._closed = True
        self._events = []

